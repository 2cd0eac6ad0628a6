"""The suite registry: the 34 SyntaxGym suites of Hu et al. (2020) by name, fetched reproducibly.

Each registered suite is downloaded from its canonical address pinned to one commit of
github.com/cpllab/syntactic-generalization, checked against a SHA-256 recorded here, and cached
under HELM's output path. A machine without internet can point ``suites_dir`` (a run-entry argument)
or the ``SYNTAXGYM_SUITES_DIR`` environment variable at a folder holding ``<name>.json`` files.

A suite argument may also be a path to a suite JSON file, or an http(s) URL (cached once it is
known to be JSON). :func:`load_named_suite` reads whichever it is; its errors name the suite as
the user gave it (name, path or URL), then the file read.

Built-in suites (generated from ``configs/suites/*.jsonnet`` and shipped in the package as
``syntaxgym_helm/suites/<name>.json``) are addressed by name too; their names start with ``sgh_``,
so they never collide with the Hu et al. names; so are the Mandarin suites of Wang et al. (2021),
converted and shipped as ``syntaxgym_helm/suites/mandarin/mandarin_<phenomenon>_<modifier>.json``
(:func:`converted_suites`). So are the minimal-pair data sets' suites
(``blimp_<UID>``, ``clams_<language>_<case>``, ``rublimp_...``, ``turblimp_...``, ``sling_...``;
:mod:`syntaxgym_helm.core.minimal_pairs`), converted from their checked sources, with
``suites_dir`` as the data set's offline folder.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from syntaxgym_helm.core.download import DownloadError, fetch, sha256_hex, write_atomically
from syntaxgym_helm.core.errors import SyntaxGymError
from syntaxgym_helm.core.files import check_regular_file, read_regular_file
from syntaxgym_helm.core.minimal_pairs.catalogue import DATASETS, dataset_of_suite
from syntaxgym_helm.core.minimal_pairs.dataset import PairDataError
from syntaxgym_helm.core.minimal_pairs.fetch import find_file, load_named, resolve_named
from syntaxgym_helm.core.suite import Suite, load_suite

if TYPE_CHECKING:  # importlib.resources.abc from Python 3.11 on; importlib.abc before
    from importlib.abc import Traversable

T = TypeVar("T")
HU2020_COMMIT = "2f42038477a9f03ab66f308a963ed49864cd8111"
HU2020_URL = (
    "https://raw.githubusercontent.com/cpllab/syntactic-generalization/"
    f"{HU2020_COMMIT}/test_suites/json/{{name}}.json"
)
SUITES_DIR_ENV = "SYNTAXGYM_SUITES_DIR"
#: Every built-in suite's name starts with this (no Hu et al. name does).
BUILTIN_PREFIX = "sgh_"
#: The shipped suites converted from another project's (``syntaxgym_helm/suites/mandarin/``,
#: written by ``scripts/convert_mandarin_suites.py``): named ``mandarin_...``.
CONVERTED_COLLECTION = "mandarin"

#: The six circuits of Hu et al. (2020), Table 1.
CIRCUITS = (
    "Agreement",
    "Licensing",
    "Garden-Path Effects",
    "Gross Syntactic State",
    "Center Embedding",
    "Long-Distance Dependencies",
)


class RegistryError(SyntaxGymError):
    """A suite name is unknown, or a suite could not be fetched or failed its checksum."""


@dataclass(frozen=True)
class _Hu2020Suite:
    name: str
    circuit: str | None  # None: left out of the paper's SG score
    sha256: str


_HU2020 = (
    _Hu2020Suite("center_embed", "Center Embedding",
                 "ca6a4d995c5ae1ecb3292d5223768131756347930fef2a169bb72e00f40ae99e"),
    _Hu2020Suite("center_embed_mod", "Center Embedding",
                 "43b0fe0a53187dc26e3286212de0fba43ed6fe569a9925fba1dd41da037dc0b0"),
    _Hu2020Suite("cleft", "Long-Distance Dependencies",
                 "03e937690d16ba6bde38fea52c87d1e98f8a18d7a964e85a5e524c77118da354"),
    _Hu2020Suite("cleft_modifier", "Long-Distance Dependencies",
                 "b57cc1453e1cb2ab1fc5c82c58c7df3277540d6ff008ebdbabca17ca09c3147a"),
    _Hu2020Suite("fgd-embed3", None,
                 "1f696306be38bf8307aedee40f00b1c3dc54314594c01c610d528d156a10e4e0"),
    _Hu2020Suite("fgd-embed4", None,
                 "2ada2070a4341d6fb1d3e936383f2912c7ba9af74b89c0e8bc26a2080a2d7b04"),
    _Hu2020Suite("fgd_hierarchy", "Long-Distance Dependencies",
                 "564623ca70fbfa1b4c982514d00ec1bf6a7e147bd9b958764c7d28dee888baef"),
    _Hu2020Suite("fgd_object", "Long-Distance Dependencies",
                 "27f0be66bf05be967215235bfcbff6b1f63a2c8ac4de92890d5cc06d4eb0a004"),
    _Hu2020Suite("fgd_pp", "Long-Distance Dependencies",
                 "02f1cf5cc2f66c8e137e45b8b95339088be612d0a8e64f593f731addfcf8e80a"),
    _Hu2020Suite("fgd_subject", "Long-Distance Dependencies",
                 "f539a32e085b35c0887a662fadc1a2d4bae7962b556a172371b71b96dca2d005"),
    _Hu2020Suite("mvrr", "Garden-Path Effects",
                 "cc524182cced457f3acb546b321479046cb249209eda634c4729fca059ce03d5"),
    _Hu2020Suite("mvrr_mod", "Garden-Path Effects",
                 "f8d570a8066fd3b20d3b14718a856b1dbb452a776727e2bd371ac2544d2271b6"),
    _Hu2020Suite("nn-nv-rpl", None,
                 "7b06181fe8aa7cc6d3c3a224485b3023be2be638ca2ae16ef2dc1ee2c74d4dec"),
    _Hu2020Suite("npi_orc_any", "Licensing",
                 "20f8b9f325db3b73475da846e5638008320a0cd54b3208f201888d6fff8ef013"),
    _Hu2020Suite("npi_orc_ever", "Licensing",
                 "5de2e6c0cd8ade080a0371e2f4a0fe47c3969593e166de0214633758de1ade58"),
    _Hu2020Suite("npi_src_any", "Licensing",
                 "23386ddfa6b3028a4822a8e7271ad6f3da5d859990a5985c999bf10d8821a210"),
    _Hu2020Suite("npi_src_ever", "Licensing",
                 "ef8d105e18104a959f87275515a291d66ddd0a408227a07215d2526fee91219f"),
    _Hu2020Suite("npz_ambig", "Garden-Path Effects",
                 "3ee88ad4d8b5bb6f1c1ff8fbec1abff48c4c08770e0e2198bf2dbe030cff9097"),
    _Hu2020Suite("npz_ambig_mod", "Garden-Path Effects",
                 "8635ee5c6140e2d758036501a83d078e32c942f55b9d620615512a7a7d03f1d1"),
    _Hu2020Suite("npz_obj", "Garden-Path Effects",
                 "2ed685e7c4f1751bf1e2010c44ad95a258cd4a56c775783a053e4755727396eb"),
    _Hu2020Suite("npz_obj_mod", "Garden-Path Effects",
                 "b9f7d95f4f492ce0d669f77c8213fddbef1ed2436591f00f39599ae40bb112cb"),
    _Hu2020Suite("number_orc", "Agreement",
                 "00181083637beef504a14f63b61da81b73d162d559ffbff245f3a6ee094d2dac"),
    _Hu2020Suite("number_prep", "Agreement",
                 "4af16c9eb6730a987871411e0c068396774922451eccef52c85be03da64aa927"),
    _Hu2020Suite("number_src", "Agreement",
                 "477ae9f18447ee80017170ccdacca92c871abc2804734728359671ae408ae395"),
    _Hu2020Suite("reflexive_orc_fem", "Licensing",
                 "ee9c4231eb6c70fc15eb44af086d12066d4a594df9939f818c59b393666fb10b"),
    _Hu2020Suite("reflexive_orc_masc", "Licensing",
                 "47f2ac0a44840c5bdd66a012eba73ea7d0888a64625bad5089cb604b7d3475a5"),
    _Hu2020Suite("reflexive_prep_fem", "Licensing",
                 "8cf12dc4299e359a7cd22ea4ad6fdd6fbaac803b91da7d731f53d0d256472f9c"),
    _Hu2020Suite("reflexive_prep_masc", "Licensing",
                 "4b5cfd53523130d38712a2d69ac17b0707002a537ec9cad2faf85e23a57b21ad"),
    _Hu2020Suite("reflexive_src_fem", "Licensing",
                 "8190bee48a37fd9424869d67ae64c2483fd48b6ba9e00ad255c677b9c3a0bf15"),
    _Hu2020Suite("reflexive_src_masc", "Licensing",
                 "c55e934ed168d7cc73929cedd285d590c6082e8a1df924a6192c8d3067874447"),
    _Hu2020Suite("subordination", "Gross Syntactic State",
                 "255fba70b50ad752529bea5ad9c9412686b255b1edce4e201ac3eac27345bc19"),
    _Hu2020Suite("subordination_orc-orc", "Gross Syntactic State",
                 "8d991184b6b7a2a35add7f958e512064617a1d51c8d3826970bfe9711b5fd80d"),
    _Hu2020Suite("subordination_pp-pp", "Gross Syntactic State",
                 "55ddea651892519030f917f6ece222fc237345fb256219dbf152948a646f24c8"),
    _Hu2020Suite("subordination_src-src", "Gross Syntactic State",
                 "d97a38a7a2e7e1f870fc8c78cf648c4570090d5efdccec99cb953baafe34080b"),
)

HU2020_SUITES: dict[str, _Hu2020Suite] = {suite.name: suite for suite in _HU2020}
#: Hu et al. suites with a single item: a context of the suite's other items cannot exist for them.
ONE_ITEM_HU2020_SUITES = frozenset({"nn-nv-rpl"})


def circuit_of(name: str) -> str | None:
    """The Hu et al. circuit of a registered suite; None for the three the paper leaves out."""
    suite = HU2020_SUITES.get(name)
    return suite.circuit if suite else None


def sg_score_suites() -> list[str]:
    """The 31 suites whose mean accuracy is the paper's SG score."""
    return [suite.name for suite in _HU2020 if suite.circuit is not None]


def builtin_suites() -> list[str]:
    """The names of the built-in suites shipped in the package (``syntaxgym_helm/suites/``)."""
    folder = resources.files("syntaxgym_helm") / "suites"
    if not folder.is_dir():
        return []
    return sorted(entry.name[: -len(".json")] for entry in folder.iterdir()
                  if entry.name.startswith(BUILTIN_PREFIX) and entry.name.endswith(".json"))


def converted_suites(collection: str = CONVERTED_COLLECTION) -> list[str]:
    """The names of the suites converted from another project's published suites and shipped
    in the package (``syntaxgym_helm/suites/<collection>/``, with their licence): the 28 Mandarin
    suites of Wang et al. (2021), ``mandarin_<phenomenon>_<modifier>``."""
    folder = resources.files("syntaxgym_helm") / "suites" / collection
    if not folder.is_dir():
        return []
    return sorted(entry.name[: -len(".json")] for entry in folder.iterdir()
                  if entry.name.startswith(f"{collection}_") and entry.name.endswith(".json"))


def shipped_suite_file(name: str) -> Traversable:
    """The packaged file of a built-in or converted suite (``name`` one of theirs)."""
    folder = resources.files("syntaxgym_helm") / "suites"
    if name.startswith(f"{CONVERTED_COLLECTION}_"):
        folder = folder / CONVERTED_COLLECTION
    return folder / f"{name}.json"


def _builtin(name: str, cache_dir: Path) -> Path:
    source = shipped_suite_file(name)
    if isinstance(source, Path):  # an ordinary install: the file itself
        return source
    target = cache_dir / f"{name}.json"  # e.g. a zipped install: copy it out
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    return target


def load_named_suite(spec: str, cache_dir: str | Path,
                     suites_dir: str | Path | None = None) -> Suite:
    """The suite ``spec`` (a name, a path or a URL) stands for, read safely and validated.

    Its errors name the suite as given, then the file read when that is another (a cached
    download, a file in ``suites_dir``), e.g. ``number_prep (/cache/number_prep.json): ...``."""
    if dataset_of_suite(spec) is not None:
        return _pair_suite(functools.partial(load_named, reuse_conversion=True), spec,
                           cache_dir, suites_dir)
    path = resolve_suite(spec, cache_dir, suites_dir)
    label = spec if Path(spec).expanduser() == path else f"{spec} ({path})"
    if spec.startswith(("http://", "https://")):
        default_name = PurePosixPath(urllib.parse.urlsplit(spec).path).stem
    else:
        default_name = Path(spec).stem
    return load_suite(path, source=label, default_name=default_name or None)


def resolve_suite(spec: str, cache_dir: str | Path, suites_dir: str | Path | None = None) -> Path:
    """The local path of the suite that ``spec`` (a name, a path or a URL) stands for.

    Registered names are looked up first in ``suites_dir`` (or ``$SYNTAXGYM_SUITES_DIR``), then in
    ``cache_dir``, and downloaded into ``cache_dir`` when neither has them.
    """
    if spec.startswith(("http://", "https://")):
        digest = hashlib.sha256(spec.encode()).hexdigest()[:16]
        target = Path(cache_dir) / f"url-{digest}.json"
        if not target.exists():
            _download(spec, target, expected_sha256=None)
        return target
    if spec in HU2020_SUITES:
        return _registered(HU2020_SUITES[spec], Path(cache_dir), suites_dir)
    if dataset_of_suite(spec) is not None:
        return _pair_suite(functools.partial(resolve_named, reuse_conversion=True), spec,
                           cache_dir, suites_dir)
    builtin = builtin_suites()
    if spec in builtin:
        return _builtin(spec, Path(cache_dir))
    if spec in converted_suites():
        return _builtin(spec, Path(cache_dir))
    path = Path(spec).expanduser()
    if path.exists():  # a pipe or a device too: refused at once, saying what it is
        check_regular_file(path, spec)
        return path
    raise _unknown(spec)


def check_suite_name(spec: str) -> None:
    """Raise the :class:`RegistryError` that loading ``spec`` would (an unknown name, with
    close names), reading and fetching nothing: for a command that runs many suites later (a
    sweep) to stop before it starts. A URL, a registered name, a data set's suite or an
    existing file passes."""
    if spec.startswith(("http://", "https://")) or spec in HU2020_SUITES:
        return
    dataset = dataset_of_suite(spec)
    if dataset is not None:
        try:
            find_file(dataset, spec)
        except PairDataError as exc:
            raise RegistryError(str(exc)) from exc
        return
    if spec in builtin_suites() or spec in converted_suites() or Path(spec).expanduser().exists():
        return
    raise _unknown(spec)


def _unknown(spec: str) -> RegistryError:
    """The error for ``spec``, which names no suite: the close names, and what names there are."""
    builtin = builtin_suites()
    known = ", ".join(sorted(HU2020_SUITES))
    names = {name.casefold(): name for name in (*HU2020_SUITES, *builtin, *converted_suites())}
    close = [names[key] for key in difflib.get_close_matches(spec.casefold(), list(names), n=3)]
    return RegistryError(
        f"unknown suite {spec!r}"
        + (f" (did you mean {', '.join(close)}?)" if close else "")
        + ": it is not a registered name, an existing file or an http(s) URL. "
        f"Registered names: {known}; built-in suites: {', '.join(builtin) or 'none'}; "
        f"{CONVERTED_COLLECTION} suites: {len(converted_suites())} ({CONVERTED_COLLECTION}_..., "
        "docs/multilingual.md); minimal "
        "pairs: " + ", ".join(f"{d.prefix}... ({len(d.files())} suites)" for d in DATASETS.values())
        + " (`syntaxgym-helm list DATA_SET` names them)"
    )


def _pair_suite(get: Callable[..., T], spec: str, cache_dir: str | Path,
                suites_dir: str | Path | None) -> T:
    """``get`` (the suite or its path) of a minimal-pair data set's suite, with its errors as
    the registry's."""
    try:
        return get(dataset_of_suite(spec), spec, cache_dir, suites_dir)
    except PairDataError as exc:
        raise RegistryError(str(exc)) from exc


def _registered(suite: _Hu2020Suite, cache_dir: Path, suites_dir: str | Path | None) -> Path:
    local_dir = suites_dir or os.environ.get(SUITES_DIR_ENV)
    if local_dir:
        local = Path(local_dir).expanduser() / f"{suite.name}.json"
        if local.is_file():
            _check_sha256(suite.name, local, suite.sha256)
            return local
    cached = cache_dir / f"{suite.name}.json"
    if cached.is_file() and _sha256(cached) == suite.sha256:
        return cached
    url = HU2020_URL.format(name=suite.name)
    try:
        _download(url, cached, expected_sha256=suite.sha256)
    except RegistryError as exc:
        where = f" and {local_dir} has no {suite.name}.json" if local_dir else ""
        raise RegistryError(
            f"suite {suite.name!r}: {exc}{where}. Offline, set {SUITES_DIR_ENV} (or the "
            "suites_dir argument) to a folder holding the Hu et al. (2020) suite files"
        ) from exc
    return cached


def _download(url: str, target: Path, expected_sha256: str | None) -> None:
    """Fetch ``url`` into ``target``: checked against ``expected_sha256`` when there is one,
    else at least known to be JSON, so that a web page never sits in the cache as a suite."""
    try:
        data, content_type = fetch(url)
    except DownloadError as exc:
        raise RegistryError(str(exc)) from exc
    if expected_sha256 and sha256_hex(data) != expected_sha256:
        raise RegistryError(f"{url} does not match its recorded SHA-256 {expected_sha256}")
    if not expected_sha256 and not _is_json(data):
        start = data[:60].decode("utf-8", "replace").strip()
        raise RegistryError(
            f"{url} did not send JSON: it sent {content_type} beginning {start!r}. A suite URL "
            "must give the suite's JSON file itself (for GitHub, its raw.githubusercontent.com "
            "address, not the github.com page)")
    write_atomically(target, data)


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data.decode("utf-8-sig"), parse_int=str)  # str: any number of digits
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    except RecursionError:
        return True  # JSON, nested too deeply: validation says so, naming the URL
    return True


def _sha256(path: Path) -> str:
    return sha256_hex(read_regular_file(path))


def _check_sha256(name: str, path: Path, expected: str) -> None:
    if _sha256(path) != expected:
        raise RegistryError(
            f"suite {name!r}: {path} is not the registered version of this suite (SHA-256 "
            f"differs from {expected}); pass its path as suite=... to run a modified copy"
        )
