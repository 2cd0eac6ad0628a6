"""``syntaxgym-helm model add PATH_OR_HUB_ID [--name NAME] [--revision REV] [--replace]
[--pll original|within_word_l2r|both] [--seq2seq original|enc_dec_mask|enc_dec_prefix|all]
[--kind causal|masked|seq2seq] [--local-path prod_env]``: a checkpoint as a HELM model, no YAML
written by hand.

It reads the checkpoint's kind from its config (:mod:`syntaxgym_helm.clients.model_kind`), checks
that it can be scored (its tokenizer too), and writes its deployment, metadata (display name) and
tokenizer entries into ``prod_env/``'s ``model_deployments.yaml``, ``model_metadata.yaml`` and
``tokenizer_configs.yaml`` (:mod:`syntaxgym_helm.clients.checkpoint_models`), keeping every other
entry; then it prints the ``helm-run`` command that runs it. A Hub id is pinned to the commit its
revision resolves to now. A name that already deploys another checkpoint (another folder, or a
folder of the same name: a Trainer's ``checkpoint-500``) is refused, naming both, unless
``--replace`` says to re-point it; a name that deploys the same checkpoint is written again.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from syntaxgym_helm.clients.model_kind import MODEL_KINDS
from syntaxgym_helm.core.scoring_variants import (
    DEFAULT_VARIANT,
    PLL_VARIANTS,
    SEQ2SEQ_VARIANTS,
    VARIANT_MARK,
)

FILES = {"model_deployments": "model_deployments.yaml", "models": "model_metadata.yaml",
         "tokenizer_configs": "tokenizer_configs.yaml"}


def register(commands: argparse._SubParsersAction) -> None:
    model = commands.add_parser(
        "model", help="add a checkpoint (folder, GGUF file or Hub id) to prod_env/ as a HELM "
                      "model", description="add: write a checkpoint's HELM entries into prod_env/")
    actions = model.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="write the deployment, metadata and tokenizer entries")
    add.add_argument("source", metavar="PATH_OR_HUB_ID",
                     help="a folder with config.json and weights, a .gguf file, or a Hub id")
    add.add_argument("--name", help="the HELM model name (default: local/<folder name>, or the "
                                    "Hub id)")
    add.add_argument("--pll", choices=(*PLL_VARIANTS, "both"), default="both",
                     help="masked LMs: the pseudo-log-likelihood variants to deploy, each its own "
                          "model name and leaderboard row (default: both)")
    add.add_argument("--seq2seq", choices=(*SEQ2SEQ_VARIANTS, "all"),
                     default="original",
                     help="encoder-decoder LMs: the scoring conventions to deploy (original: "
                          "minicons'; BabyLM's enc_dec_mask and enc_dec_prefix), each its own "
                          "model name and leaderboard row (default: original)")
    add.add_argument("--kind", choices=MODEL_KINDS,
                     help="override the kind read from config.json")
    add.add_argument("--revision", help="a Hub id's branch, tag or commit (or give the id as "
                                        "ORG/MODEL@REVISION); the commit it resolves to is "
                                        "written")
    add.add_argument("--replace", action="store_true",
                     help="re-point a name that already deploys another checkpoint")
    add.add_argument("--local-path", type=Path, default=Path("prod_env"), metavar="DIR",
                     help="helm-run's --local-path (default: prod_env)")
    add.set_defaults(handler=_add)


def _add(args: argparse.Namespace) -> int:
    from syntaxgym_helm.api.model_resolution import check_checkpoint, split_revision
    from syntaxgym_helm.clients.checkpoint_identity import identify
    from syntaxgym_helm.clients.checkpoint_models import KIND_WORDS, checkpoint_entries
    from syntaxgym_helm.clients.model_kind import CheckpointError, inspect_checkpoint

    variants: tuple[str, ...]
    try:
        source, revision = split_revision(args.source, args.revision)
        checkpoint = inspect_checkpoint(source, args.kind, revision)
        if checkpoint.kind == "masked":
            variants = PLL_VARIANTS if args.pll == "both" else (args.pll,)
        elif checkpoint.kind == "seq2seq":
            variants = SEQ2SEQ_VARIANTS if args.seq2seq == "all" else (args.seq2seq,)
        else:
            variants = (DEFAULT_VARIANT,)
        identity = identify(checkpoint.source, checkpoint.gguf_file,
                            checkpoint.commit or checkpoint.revision)
        check_checkpoint(checkpoint, variants, identity)
        entries = checkpoint_entries(checkpoint, args.name, variants)
        replaced = taken_names(args.local_path, entries, identity)
        if replaced and not args.replace:
            raise CheckpointError(
                "; ".join(f"{name} already deploys {owner}" for name, owner in replaced)
                + f" in {args.local_path / FILES['model_deployments']}, not "
                f"{identity.describe()}: give this one another name (--name "
                f"{replaced[0][0].split(VARIANT_MARK)[0]}-{identity.digest[:8]}), or re-point "
                "the name to it (--replace)")
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    written = write_entries(args.local_path, entries)
    names = [entry["name"] for entry in entries["model_deployments"]]
    files = ", ".join(map(str, written))
    for name, owner in replaced:
        print(f"{name}: re-pointed from {owner}")
    print(f"{checkpoint.source}: a {KIND_WORDS[checkpoint.kind]}, {identity.describe()}; "
          f"wrote {files}")
    print("run it with:")
    runs = " ".join(f"syntaxgym:suite=sgh_agreement_pp,model={name}" for name in names)
    print(shlex.join(["helm-run", "--run-entries", *runs.split(), "--suite", "mine",
                      "--local-path", str(args.local_path), "--max-eval-instances", "1000"]))
    return 0


def taken_names(folder: Path, entries: dict[str, list[dict[str, Any]]], identity: Any,
                ) -> list[tuple[str, str]]:
    """(name, what it deploys) for each deployment of ``entries`` whose name ``folder``'s
    ``model_deployments.yaml`` already gives to a checkpoint other than ``identity``."""
    import yaml

    from syntaxgym_helm.api.model_resolution import deployment_owner

    path = folder / FILES["model_deployments"]
    data = (yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None) or {}
    existing = {entry.get("name"): entry for entry in data.get("model_deployments") or []}
    taken = []
    for entry in entries["model_deployments"]:
        old = existing.get(entry["name"])
        if old is not None:
            spec = old.get("client_spec") or {}
            owner = deployment_owner(spec.get("args") or {}, identity,
                                     f"a deployment of {spec.get('class_name', 'no client')}")
            if owner is not None:
                taken.append((entry["name"], owner))
    return taken


def write_entries(folder: Path, entries: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """Merge ``entries`` into the YAML files of ``folder`` (an entry replaces one of its name)."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for key, file in FILES.items():
        path = folder / file
        data = (yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None) or {}
        new_names = {entry["name"] for entry in entries[key]}
        kept = [entry for entry in data.get(key) or [] if entry.get("name") not in new_names]
        data[key] = kept + entries[key]
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
                        encoding="utf-8")
        written.append(path)
    return written
