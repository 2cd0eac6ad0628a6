"""End to end in scripts that are not Latin: a real ``helm-run`` of the embedded SmolLM2 through
the plugin's client (``syntaxgym/``) and HELM's own HuggingFaceClient (``helmhf/``), on a Mandarin
suite whose regions join without spaces and on a suite in Hebrew, Russian, Turkish, with
combining marks and emoji.

SmolLM2's byte-level tokenizer splits most of these characters over several tokens. Each run's
region values are checked against an independent computation from character offsets (each
token's bytes from its vocabulary entry, its region from the character its first byte is in),
with the logprobs the run returned; the two clients must agree; and 猫 and 犬, whose first
byte token is the same, must not tie in the critical region (they did when only a character's
first piece counted there).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from script_processes import run_script
from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
MODELS = ("syntaxgym/smollm2-135m-instruct-q4_1", "helmhf/smollm2-135m-instruct-q4_1")


def _suite(name: str, separator: str, items: list[dict[str, list[str]]]) -> dict:
    meta = {"name": name, "metric": "sum"}
    if separator != " ":
        meta["region_separator"] = separator
    return {
        "meta": meta,
        "region_meta": {"1": "before", "2": "critical", "3": "after"},
        "predictions": [{"type": "formula", "formula": "(2;%a%) < (2;%b%)"}],
        "items": [{"item_number": number, "conditions": [
            {"condition_name": name, "regions": [
                {"region_number": k, "content": content} for k, content in enumerate(regions, 1)]}
            for name, regions in conditions.items()]}
            for number, conditions in enumerate(items, 1)],
    }


SUITES = {
    "scripts_zh": _suite("scripts_zh", "", [
        {"a": ["我的", "猫", "很好。"], "b": ["我的", "犬", "很好。"]},
        {"a": ["他", "吃了", "饭吗？"], "b": ["他", "吃过", "饭吗？"]},
    ]),
    "scripts_spaced": _suite("scripts_spaced", " ", [
        {"a": ["הילד", "אוכל", "לחם"], "b": ["הילד", "אוכלת", "לחם"]},
        {"a": ["Кошка", "спит", "на диване."], "b": ["Кошка", "спят", "на диване."]},
        {"a": ["Çocuklar", "İstanbul'a", "gidiyorlar mı?"],
         "b": ["Çocuklar", "İstanbul'da", "gidiyorlar mı?"]},
        {"a": ["Le cafe\u0301", "est", "fermé"], "b": ["Le cafe\u0301", "sont", "fermé"]},
        {"a": ["I love", "🐱🐶", "👍🏽"], "b": ["I love", "🐶🐱", "👍🏽"]},
    ]),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SMOLLM2_135M.installed():
        pytest.skip(f"SmolLM2 is not installed ({SMOLLM2_135M.pip_install})")
    workdir = tmp_path_factory.mktemp("scripts")
    entries = []
    for name, suite in SUITES.items():
        path = workdir / f"{name}.json"
        path.write_text(json.dumps(suite, ensure_ascii=False), encoding="utf-8")
        entries += [f"syntaxgym:suite={path},model={model}" for model in MODELS]
    done = run_script([BIN / "helm-run", "--run-entries", *entries, "--suite", "scripts",
                       "--max-eval-instances", "100"], cwd=workdir, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return workdir / "benchmark_output" / "runs" / "scripts"


@pytest.fixture(scope="module")
def tokenizer():
    """SmolLM2's tokenizer as the plugin keeps it converted from the GGUF file (equal to a fresh
    conversion, which takes 7 s: tests/clients/test_embedded.py checks it)."""
    from transformers import AutoTokenizer

    from syntaxgym_helm.clients.embedded.clients import converted_tokenizer_folder

    return AutoTokenizer.from_pretrained(str(converted_tokenizer_folder(SMOLLM2_135M)),
                                         use_fast=True, local_files_only=True)


def _scored(runs: Path, suite: str, model: str) -> dict[int, tuple]:
    """Each item scored by the metric's own code from the run's request states:
    item number -> (ItemEvaluation, {condition: request state as JSON})."""
    import dacite
    from helm.benchmark.adaptation.request_state import RequestState

    from syntaxgym_helm.harness.metric import evaluate_request_states

    (folder,) = [p for p in runs.iterdir()
                 if f"{suite}.json" in p.name and model.replace("/", "_") in p.name]
    states = json.loads((folder / "scenario_state.json").read_text())["request_states"]
    by_item: dict[str, list[dict]] = {}
    for state in states:
        by_item.setdefault(state["instance"]["id"], []).append(state)
    scored = {}
    for raw in by_item.values():
        built = [dacite.from_dict(RequestState, state, config=dacite.Config(check_types=False))
                 for state in raw]
        score = evaluate_request_states(built)
        assert score.scorable, (suite, model, score.problems)
        conditions = {state["instance"]["references"][state["reference_index"]]["tags"][0]
                      .removeprefix("condition:"): state for state in raw}
        scored[score.item_number] = (score, conditions)
    return scored


def _reference_sums(tokenizer, regions: list[str], separator: str,
                    logprobs: list[float]) -> dict[int, float]:
    """Region sums (bits) from character offsets: each token's bytes from GPT-2's byte alphabet,
    counted for the region of the character its first non-space byte is in."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    alphabet = {char: byte for byte, char in bytes_to_unicode().items()}
    text = separator.join(regions)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    pieces = [bytes(alphabet[c] for c in piece) for piece in tokenizer.convert_ids_to_tokens(ids)]
    assert b"".join(pieces) == text.encode() and len(pieces) == len(logprobs)
    owner_of_byte: list[int | None] = []
    for number, content in enumerate(regions, 1):
        if number > 1:
            owner_of_byte += [None] * len(separator.encode())
        owner_of_byte += [number] * len(content.encode())
    sums = {number: 0.0 for number in range(1, len(regions) + 1)}
    offset = 0
    for piece, logprob in zip(pieces, logprobs, strict=False):
        first = offset + len(piece) - len(piece.lstrip(b" "))
        sums[owner_of_byte[first]] -= logprob / math.log(2)
        offset += len(piece)
    return sums


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("suite", list(SUITES))
def test_region_values_equal_a_computation_from_character_offsets(runs, tokenizer, suite, model):
    from syntaxgym_helm.core.suite import parse_suite

    parsed = parse_suite(SUITES[suite])
    separator = parsed.meta.region_separator
    scored = _scored(runs, suite, model)
    assert sorted(scored) == [item.item_number for item in parsed.items]
    for item in parsed.items:
        score, states = scored[item.item_number]
        for condition in item.conditions:
            prompt = states[condition.condition_name]["request"]["prompt"]
            # The prompt ends with the data's sentence exactly: no spaces between Mandarin regions.
            assert prompt.endswith(separator.join(r.content for r in condition.regions))
            tokens = states[condition.condition_name]["result"]["completions"][0]["tokens"]
            count = len(tokenizer(condition.sentence, add_special_tokens=False)["input_ids"])
            expected = _reference_sums(tokenizer, [r.content for r in condition.regions],
                                       separator, [token["logprob"] for token in tokens[-count:]])
            got = score.region_values()[condition.condition_name]
            for number, value in expected.items():
                assert got[number]["sum"] == pytest.approx(value, abs=1e-6), (
                    condition.sentence, number)


def test_both_clients_agree_and_cat_and_dog_do_not_tie(runs):
    for suite in SUITES:
        ours, helms = (_scored(runs, suite, model) for model in MODELS)
        assert ours.keys() == helms.keys()
        for number, (score, _) in ours.items():
            theirs = helms[number][0].region_values()
            for condition, regions in score.region_values().items():
                for region, values in regions.items():
                    assert values["sum"] == pytest.approx(theirs[condition][region]["sum"],
                                                          abs=2e-3), (suite, number, region)
    # 猫 and 犬: three tokens each, the first the same byte (so the same logprob). Counting only
    # that first piece gave both the same critical value, a tie; every piece counts now.
    score, states = _scored(runs, "scripts_zh", MODELS[0])[1]
    values = score.region_values()
    first_piece = [-states[name]["result"]["completions"][0]["tokens"][4]["logprob"] / math.log(2)
                   for name in "ab"]
    assert first_piece[0] == pytest.approx(first_piece[1], abs=1e-4)
    assert values["a"][2]["sum"] != values["b"][2]["sum"]
    assert min(values["a"][2]["sum"], values["b"][2]["sum"]) > 2 * first_piece[0]
