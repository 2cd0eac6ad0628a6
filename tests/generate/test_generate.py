"""Suite generation from JSONNET configs (``syntaxgym-helm generate``) and the built-in suites."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

import _jsonnet
import pytest

from syntaxgym_helm.cli.main import main as cli_main
from syntaxgym_helm.core.errors import SuiteError
from syntaxgym_helm.core.registry import (
    BUILTIN_PREFIX,
    HU2020_SUITES,
    builtin_suites,
    resolve_suite,
)
from syntaxgym_helm.core.suite import dumps_suite, load_suite, parse_suite
from syntaxgym_helm.core.validation import check_suite, check_suite_file
from syntaxgym_helm.generate import GENERATOR_VERSION, generate_suite
from syntaxgym_helm.generate.template import parse_template

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs" / "suites"
SHIPPED = ROOT / "syntaxgym_helm" / "suites"
CONFIG_FILES = sorted(CONFIGS.glob("*.jsonnet"))


def base_config() -> dict[str, Any]:
    """A small valid config: number agreement of a noun and a verb."""
    return {
        "version": 1,
        "meta": {"name": "toy", "metric": "sum", "description": "toy suite"},
        "lexicon": {
            "nouns": [{"sg": "dog", "pl": "dogs"}, {"sg": "cat", "pl": "cats"},
                      {"sg": "bird", "pl": "birds"}, {"sg": "horse", "pl": "horses"}],
            "verbs": [{"sg": "sleeps", "pl": "sleep"}, {"sg": "runs", "pl": "run"},
                      {"sg": "eats", "pl": "eat"}],
        },
        "slots": {"subj": "nouns", "verb": "verbs"},
        "region_meta": ["det", "noun", "verb"],
        "conditions": [
            {"name": "match", "regions": ["The", "$subj.sg", "$verb.sg"]},
            {"name": "mismatch", "regions": ["The", "$subj.sg", "$verb.pl"]},
        ],
        "predictions": ["(3;%match%) < (3;%mismatch%)"],
        "sampling": {"items": 6, "seed": 1},
    }


def write(folder: Path, config: dict[str, Any], name: str = "toy.jsonnet") -> Path:
    path = folder / name
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def error_of(path: Path, **kwargs: Any) -> SuiteError:
    with pytest.raises(SuiteError) as info:
        generate_suite(path, **kwargs)
    assert info.value.file == str(path), "every error names the config file"
    return info.value


# --- the built-in suites --------------------------------------------------------------------

def test_there_are_enough_configs_and_each_ships_its_suite() -> None:
    assert len(CONFIG_FILES) >= 8
    shipped = sorted(path.stem for path in SHIPPED.glob("*.json"))
    assert shipped == sorted(path.stem for path in CONFIG_FILES)
    assert builtin_suites() == shipped


@pytest.mark.parametrize("config", CONFIG_FILES, ids=lambda path: path.stem)
def test_each_config_regenerates_its_shipped_suite_byte_for_byte(config: Path) -> None:
    generated = generate_suite(config)
    assert generated.suite.name == config.stem
    assert (SHIPPED / f"{config.stem}.json").read_text(encoding="utf-8") == generated.text, (
        f"stale: run syntaxgym-helm generate {config} --out-dir syntaxgym_helm/suites")


@pytest.mark.parametrize("name", builtin_suites())
def test_each_builtin_suite_is_valid_and_sized_like_the_paper(name: str) -> None:
    report = check_suite_file(SHIPPED / f"{name}.json")
    assert report.ok and not report.warnings, report.errors + report.warnings
    suite = report.suite
    assert suite is not None and name.startswith(BUILTIN_PREFIX) and name not in HU2020_SUITES
    assert len(suite.items) >= 24 and 2 <= len(suite.condition_names) <= 4
    sentences = [tuple(c.sentence for c in item.conditions) for item in suite.items]
    assert len(set(sentences)) == len(sentences), "no duplicate items"
    assert suite.meta.extra["generator"]["config"] == f"{name}.jsonnet"


def test_builtin_names_resolve_to_the_packaged_files(tmp_path: Path) -> None:
    for name in builtin_suites():
        path = resolve_suite(name, tmp_path)
        assert path == SHIPPED / f"{name}.json" and load_suite(path).name == name
    assert not any(name.startswith(BUILTIN_PREFIX) for name in HU2020_SUITES)


def test_the_documented_example_generates(tmp_path: Path) -> None:
    """The JSONNET example of docs/suite_authoring.md, as written."""
    doc = (ROOT / "docs" / "suite_authoring.md").read_text(encoding="utf-8")
    example = doc.split("```jsonnet\n", 1)[1].split("```", 1)[0]
    shutil.copytree(CONFIGS / "lexicon", tmp_path / "lexicon")
    path = tmp_path / "my_agreement.jsonnet"
    path.write_text(example, encoding="utf-8")
    suite = generate_suite(path).suite
    assert len(suite.items) == 12 and suite.condition_names == ("match_sing", "mismatch_sing")
    subjects = [item.conditions[0].regions[1].content for item in suite.items]
    attractors = {item.conditions[0].regions[4].content for item in suite.items}
    lexicon = json.loads(_jsonnet.evaluate_file(str(CONFIGS / "lexicon" / "people.libsonnet")))
    masculine = {noun["sg"] for noun in lexicon["masculine"]}
    assert len(set(subjects)) == 12 and set(subjects) <= masculine  # the filter, no_reuse
    assert not attractors & {noun["pl"] for noun in lexicon["masculine"]}  # contrast on gender


# --- determinism and provenance -------------------------------------------------------------

def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_items(tmp_path: Path) -> None:
    path = write(tmp_path, base_config())
    first, again = generate_suite(path), generate_suite(path)
    assert first.text == again.text
    other = generate_suite(path, seed=2)
    assert other.suite.items != first.suite.items


def test_more_items_keep_the_earlier_items(tmp_path: Path) -> None:
    config = base_config()
    config["lexicon"]["nouns"] += [{"sg": f"n{i}", "pl": f"n{i}s"} for i in range(30)]
    config["sampling"]["constraints"] = [{"no_reuse": "subj"}]
    path = write(tmp_path, config)
    few, many = generate_suite(path, items=10), generate_suite(path, items=25)
    assert (len(few.suite.items), len(many.suite.items)) == (10, 25)
    assert many.suite.items[:10] == few.suite.items
    # And for every shipped config: its first 5 items are those of the full suite it ships.
    assert len(CONFIG_FILES) == len(builtin_suites()) >= 11
    for config in CONFIG_FILES:
        full = generate_suite(config).suite.items
        shipped = generate_suite(config, items=5).suite.items
        assert len(shipped) == 5 < len(full) and shipped == full[:5], config.name


def test_meta_records_the_provenance(tmp_path: Path) -> None:
    path = write(tmp_path, base_config())
    generated = generate_suite(path, seed=7)
    provenance = json.loads(generated.text)["meta"]["generator"]
    assert provenance == {"name": "syntaxgym-helm generate", "version": GENERATOR_VERSION,
                          "config": "toy.jsonnet", "config_sha256": generated.loaded.sha256,
                          "seed": 7, "items": 6}
    assert len(provenance["config_sha256"]) == 64
    changed = base_config()
    changed["lexicon"]["verbs"][0]["pl"] = "snooze"
    assert generate_suite(write(tmp_path, changed, "b.jsonnet")).loaded.sha256 != (
        generated.loaded.sha256)


def test_the_output_is_canonical_suite_json(tmp_path: Path) -> None:
    """Valid with no warning, and in the one canonical layout: what reading it back and writing it
    again gives, byte for byte (keys in the suite format's order, two-space indents, one final
    newline), holding exactly the config's regions, conditions and prediction."""
    generated = generate_suite(write(tmp_path, base_config()))
    data = json.loads(generated.text)
    report = check_suite(data)
    assert report.ok and not report.warnings
    assert generated.text == dumps_suite(parse_suite(data))
    assert generated.text.startswith('{\n  "meta": {\n    "')
    assert data["meta"]["name"] == "toy" and data["meta"]["metric"] == "sum"
    assert generated.text.endswith("}\n") and not generated.text.endswith("\n\n")
    assert list(data) == ["meta", "region_meta", "predictions", "items"]
    assert data["region_meta"] == {"1": "det", "2": "noun", "3": "verb"}
    assert data["predictions"] == [{"type": "formula", "formula": "(3;%match%) < (3;%mismatch%)"}]
    assert [item["item_number"] for item in data["items"]] == [1, 2, 3, 4, 5, 6]
    nouns = {"dog", "cat", "bird", "horse"}
    verbs = {"sleeps": "sleep", "runs": "run", "eats": "eat"}
    for item in data["items"]:
        match, mismatch = item["conditions"]
        assert (match["condition_name"], mismatch["condition_name"]) == ("match", "mismatch")
        det, noun, verb = (r["content"] for r in match["regions"])
        assert det == "The" and noun in nouns and verb in verbs
        assert [r["content"] for r in mismatch["regions"]] == ["The", noun, verbs[verb]]
        assert [r["region_number"] for r in match["regions"]] == [1, 2, 3]


# --- balance and the checks of manipulated regions -------------------------------------------

def test_entries_are_used_evenly(tmp_path: Path) -> None:
    config = base_config()
    config["sampling"]["items"] = 12
    suite = generate_suite(write(tmp_path, config)).suite
    counts: dict[str, int] = {}
    for item in suite.items:
        verb = item.conditions[0].regions[2].content
        counts[verb] = counts.get(verb, 0) + 1
    assert sorted(counts.values()) == [4, 4, 4]


def test_an_entry_that_would_hide_the_manipulation_is_not_used(tmp_path: Path) -> None:
    config = base_config()
    config["lexicon"]["verbs"].append({"sg": "put", "pl": "put"})
    suite = generate_suite(write(tmp_path, config), items=9).suite
    assert all(item.conditions[0].regions[2].content != "put" for item in suite.items)
    config["lexicon"]["verbs"] = [{"sg": "put", "pl": "put"}]
    error = error_of(write(tmp_path, config))
    assert "cannot generate item 1" in str(error)
    assert "'verb' would read 'put' in both match and mismatch" in str(error)


def test_declared_manipulations_are_checked(tmp_path: Path) -> None:
    config = base_config()
    config["conditions"][0]["manipulates"] = []
    config["conditions"][1]["manipulates"] = ["verb"]
    generate_suite(write(tmp_path, config))
    config["conditions"][1]["regions"][0] = "A"
    error = error_of(write(tmp_path, config))
    assert error.path == "conditions[1].regions[0]"
    assert "region 'det' reads 'A' in condition mismatch but 'The' in match" in error.message


def test_no_duplicate_items_and_a_clear_error_when_they_run_out(tmp_path: Path) -> None:
    config = base_config()
    config["sampling"]["items"] = 12  # 4 nouns x 3 verbs
    generate_suite(write(tmp_path, config))
    config["sampling"]["items"] = 13
    error = error_of(write(tmp_path, config))
    assert error.path == "sampling.items"
    assert "cannot generate item 13 of 13" in error.message
    assert "duplicate an earlier item" in error.message


# --- constraints ----------------------------------------------------------------------------

def test_constraints_hold(tmp_path: Path) -> None:
    config = base_config()
    config["lexicon"]["nouns"] = [
        {"sg": "dog", "pl": "dogs", "kind": "animal"},
        {"sg": "cat", "pl": "cats", "kind": "animal"},
        {"sg": "car", "pl": "cars", "kind": "machine"},
        {"sg": "van", "pl": "vans", "kind": "machine"}]
    config["lexicon"]["verbs"] = [
        {"sg": "sleeps", "pl": "sleep", "subject": ["animal"]},
        {"sg": "purrs", "pl": "purr", "subject": "animal"},
        {"sg": "stalls", "pl": "stall", "subject": ["machine"]}]
    config["slots"]["other"] = "nouns"
    config["conditions"][0]["regions"][0] = "The $other.sg and the"
    config["conditions"][1]["regions"][0] = "The $other.sg and the"
    config["sampling"].update(items=4, constraints=[
        {"agree": ["verb.subject", "subj.kind"]}, {"contrast": ["subj.kind", "other.kind"]},
        {"distinct": ["subj", "other"]}, {"no_reuse": ["subj"]}])
    suite = generate_suite(write(tmp_path, config)).suite
    kinds = {"dog": "animal", "cat": "animal", "car": "machine", "van": "machine"}
    subjects = []
    for item in suite.items:
        regions = [r.content for r in item.conditions[0].regions]
        other, subj, verb = regions[0].split()[1], regions[1], regions[2]
        assert kinds[other] != kinds[subj]
        assert (verb == "stalls") == (kinds[subj] == "machine")
        subjects.append(subj)
    assert sorted(subjects) == sorted(kinds)


def test_an_unsatisfiable_agreement_is_reported_up_front(tmp_path: Path) -> None:
    config = base_config()
    config["lexicon"]["nouns"] = [{"sg": "dog", "pl": "dogs", "kind": "animal"}]
    config["lexicon"]["verbs"] = [{"sg": "stalls", "pl": "stall", "subject": "machine"}]
    config["sampling"]["constraints"] = [{"distinct": ["subj", "verb"]},
                                         {"agree": ["verb.subject", "subj.kind"]}]
    error = error_of(write(tmp_path, config))
    assert error.path == "sampling.constraints[1]"
    assert error.message.startswith("unsatisfiable constraint (agree verb.subject, subj.kind)")
    assert "verb.subject: machine; subj.kind: animal" in error.message


def test_no_reuse_with_too_few_entries_is_reported_up_front(tmp_path: Path) -> None:
    config = base_config()
    config["sampling"]["constraints"] = [{"no_reuse": "subj"}]
    error = error_of(write(tmp_path, config))
    assert error.path == "sampling.constraints[0]"
    assert ("unsatisfiable constraint (no_reuse subj): it needs a different entry in each of "
            "the 6 items (sampling.items), but only 4 entries") in error.message


def test_distinct_slots_with_one_candidate(tmp_path: Path) -> None:
    config = base_config()
    config["slots"] = {"subj": {"from": "nouns", "where": {"sg": "dog"}}, "verb": "verbs",
                       "obj": {"from": "nouns", "where": {"sg": "dog"}}}
    config["sampling"]["constraints"] = [{"distinct": ["subj", "obj"]}]
    error = error_of(write(tmp_path, config))
    assert error.path == "sampling.constraints[0]" and "cannot differ" in error.message


def test_a_filter_that_matches_nothing(tmp_path: Path) -> None:
    config = base_config()
    config["slots"]["subj"] = {"from": "nouns", "where": {"sg": "unicorn"}}
    error = error_of(write(tmp_path, config))
    assert error.path == "slots.subj.where"
    assert "no entry of lexicon.nouns passes the filter" in error.message


# --- template and lexicon errors ------------------------------------------------------------

def test_template_syntax() -> None:
    template = parse_template("${subj.sg|cap}'s $verb costs $$5")
    values = {("subj", "sg"): "dog", ("verb", "form"): "bone"}
    assert template.render(lambda ref: values[(ref.slot, ref.feature)]) == "Dog's bone costs $5"
    for bad, column in [("a $ b", 3), ("${subj.sg", 1), ("${subj.sg|shout}", 1),
                        ("${1x}", 1)]:
        with pytest.raises(SuiteError) as info:
            parse_template(bad)
        assert info.value.column == column


@pytest.mark.parametrize("template, path, message", [
    ("$subjj.sg", "conditions[1].regions[1]", "unknown slot 'subjj' in '$subjj.sg'"),
    ("${subj.sg", "conditions[1].regions[1]", "'${' is never closed"),
    ("$subj.pll", "conditions[1].regions[1]", "no entry that can fill slot 'subj' has the "
                                              "feature 'pll'"),
])
def test_template_errors_name_the_key(tmp_path: Path, template: str, path: str,
                                      message: str) -> None:
    config = base_config()
    config["conditions"][1]["regions"][1] = template
    error = error_of(write(tmp_path, config))
    assert error.path == path and message in error.message


def test_an_entry_without_a_feature_the_templates_read(tmp_path: Path) -> None:
    config = base_config()
    config["lexicon"]["verbs"].append({"sg": "naps"})
    error = error_of(write(tmp_path, config))
    assert error.path == "lexicon.verbs[3].pl"
    assert error.message == ("the entry lacks the feature 'pl', which conditions[1].regions[2] "
                             "reads (slot 'verb')")


def test_region_templates_by_name_and_their_errors(tmp_path: Path) -> None:
    config = base_config()
    config["conditions"][1]["regions"] = {"det": "The", "noun": "$subj.sg", "verb": "$verb.pl"}
    generate_suite(write(tmp_path, config))
    config["conditions"][1]["regions"] = {"det": "The", "noun": "$subj.sg", "verbb": "$verb.pl"}
    error = error_of(write(tmp_path, config))
    assert error.path == "conditions[1].regions.verbb" and "unknown key" in error.message
    config["conditions"][1]["regions"] = ["The", "$subj.sg"]
    error = error_of(write(tmp_path, config))
    assert error.path == "conditions[1].regions"
    assert "2 region templates, but region_meta declares 3 regions" in error.message


def test_typed_lexicon_errors(tmp_path: Path) -> None:
    config = base_config()
    config["lexicon"]["nouns"] = {"features": {"sg": "string", "pl": "string",
                                               "gender": ["m", "f", "n"]},
                                  "entries": [{"sg": "dog", "pl": "dogs", "gender": "n"},
                                              {"sg": "cat", "gender": "n"}]}
    error = error_of(write(tmp_path, config))
    assert error.path == "lexicon.nouns.entries[1].pl"
    assert "the entry lacks the feature 'pl'" in error.message
    config["lexicon"]["nouns"]["entries"][1] = {"sg": "cat", "pl": "cats", "gender": "x"}
    error = error_of(write(tmp_path, config))
    assert error.path == "lexicon.nouns.entries[1].gender" and "'x' is not one of" in error.message
    config["lexicon"]["nouns"]["entries"][1] = {"sg": "cat", "pl": "cats", "gender": "n"}
    config["conditions"][0]["regions"][1] = "$subj.gendre"
    error = error_of(write(tmp_path, config))
    assert error.path == "conditions[0].regions[1]"
    assert "slot 'subj' (lexicon.nouns) has no feature 'gendre'" in error.message


@pytest.mark.parametrize("mutate, path, message", [
    (lambda c: c.update(sampel={}), "sampel", "unknown key 'sampel'"),
    (lambda c: c.update(version=2), "version", "unsupported config version 2"),
    (lambda c: c["slots"].update(subj="noun"), "slots.subj", "unknown lexicon category 'noun'"),
    (lambda c: c["lexicon"]["nouns"].append({"sg": "dog", "pl": "dogs"}), "lexicon.nouns[4]",
     "duplicates lexicon.nouns[0]"),
    (lambda c: c["lexicon"]["nouns"].append({"sg": "ox", "pl": {"x": 1}}), "lexicon.nouns[4].pl",
     "a feature value must be"),
    (lambda c: c.update(predictions=["(3;%match%) < (3;%mismatc%)"]), "predictions[0]",
     "unknown condition `mismatc`"),
    (lambda c: c.update(predictions=["(4;%match%) < (3;%mismatch%)"]), "predictions[0]",
     "has no region 4"),
    (lambda c: c["sampling"].update(constraints=[{"agree": ["subj.sg"]}]),
     "sampling.constraints[0].agree", "agree compares two features"),
    (lambda c: c["sampling"].update(constraints=[{"agree": ["subj.sg", "verbb.sg"]}]),
     "sampling.constraints[0].agree[1]", "unknown slot 'verbb'"),
    (lambda c: c["sampling"].update(items=0), "sampling.items", "0 is out of range"),
    (lambda c: c["meta"].update(metric="total"), "meta.metric", "unknown metric 'total'"),
    (lambda c: c["conditions"][1].update(name="match"), "conditions[1].name",
     "condition 'match' is declared twice"),
])
def test_config_errors_name_the_key(tmp_path: Path, mutate: Any, path: str, message: str) -> None:
    config = copy.deepcopy(base_config())
    mutate(config)
    error = error_of(write(tmp_path, config))
    assert error.path == path and message in error.message, str(error)


def test_an_empty_sentence_is_reported_at_its_condition(tmp_path: Path) -> None:
    config = base_config()
    config["lexicon"]["verbs"] += [{"sg": "", "pl": "x"}, {"sg": "y", "pl": ""}]
    config["conditions"][0]["regions"] = ["", "", "$verb.sg"]
    config["conditions"][1]["regions"] = ["", "$subj.sg", "$verb.pl"]
    error = error_of(write(tmp_path, config))
    assert error.path == "conditions[0].regions"
    assert "the generated suite is invalid (item" in error.message
    assert "the sentence is empty" in error.message


def test_jsonnet_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonnet"
    path.write_text("{ version: 1, meta: error 'no meta yet' }")
    error = error_of(path)
    assert error.message == "JSONNET error: no meta yet" and str(path) in str(error)


# --- imports --------------------------------------------------------------------------------

def _importing(tmp_path: Path, target: str) -> Path:
    folder = tmp_path / "configs"
    folder.mkdir(exist_ok=True)
    config = json.dumps(base_config(), indent=2)
    path = folder / "toy.jsonnet"
    path.write_text(f"local lex = import '{target}';\n{config} + {{ lexicon+: {{ verbs: lex }} }}")
    return path


def test_imports_from_the_config_folder_and_below(tmp_path: Path) -> None:
    path = _importing(tmp_path, "lexicon/verbs.libsonnet")
    (path.parent / "lexicon").mkdir()
    (path.parent / "lexicon" / "verbs.libsonnet").write_text(
        "[{sg: 'naps', pl: 'nap'}, {sg: 'hops', pl: 'hop'}]")
    generated = generate_suite(path)
    assert generated.loaded.imports == ("lexicon/verbs.libsonnet",)
    assert {item.conditions[0].regions[2].content for item in generated.suite.items} == {
        "naps", "hops"}


@pytest.mark.parametrize("target", ["../outside.libsonnet", "sub/../../outside.libsonnet",
                                    "OUTSIDE_ABSOLUTE"])
def test_imports_outside_the_folder_are_refused(tmp_path: Path, target: str) -> None:
    outside = tmp_path / "outside.libsonnet"
    outside.write_text("[{sg: 'naps', pl: 'nap'}]")
    (tmp_path / "configs" / "sub").mkdir(parents=True)
    path = _importing(tmp_path, str(outside) if target == "OUTSIDE_ABSOLUTE" else target)
    error = error_of(path)
    assert "leads outside the config's folder" in error.message


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.libsonnet"
    outside.write_text("[{sg: 'naps', pl: 'nap'}]")
    path = _importing(tmp_path, "link.libsonnet")
    os.symlink(outside, path.parent / "link.libsonnet")
    assert "leads outside the config's folder" in error_of(path).message
    (path.parent / "link.libsonnet").unlink()
    (path.parent / "real.libsonnet").write_text(
        "[{sg: 'naps', pl: 'nap'}, {sg: 'hops', pl: 'hop'}]")
    os.symlink(path.parent / "real.libsonnet", path.parent / "link.libsonnet")
    generate_suite(path)  # a link that stays inside is fine


def test_a_missing_import(tmp_path: Path) -> None:
    error = error_of(_importing(tmp_path, "nowhere.libsonnet"))
    assert "cannot read import 'nowhere.libsonnet'" in error.message


# --- the command line -----------------------------------------------------------------------

def test_cli_writes_checks_and_reports_errors(tmp_path: Path, capsys: pytest.CaptureFixture
                                              ) -> None:
    path = write(tmp_path, base_config())
    out = tmp_path / "suite.json"
    assert cli_main(["generate", str(path), "-o", str(out), "--seed", "3"]) == 0
    assert out.read_text() == generate_suite(path, seed=3).text
    assert cli_main(["validate", str(out)]) == 0
    assert cli_main(["generate", str(path), "-o", str(out), "--seed", "3", "--check"]) == 0
    assert cli_main(["generate", str(path), "-o", str(out), "--check"]) == 1
    assert "is stale" in capsys.readouterr().err
    assert cli_main(["generate", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["meta"]["name"] == "toy"
    config = base_config()
    config["conditions"][1]["regions"][2] = "$verb.pll"
    bad = write(tmp_path, config, "bad.jsonnet")
    assert cli_main(["generate", str(bad), "--out-dir", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert (f"error: {bad}:conditions[1].regions[2]: no entry that can fill slot 'verb' has the "
            "feature 'pll'. features of lexicon.verbs: pl, sg; did you mean 'pl'?") in err


def test_cli_check_of_the_shipped_suites(capsys: pytest.CaptureFixture,
                                         tmp_path: Path) -> None:
    """The shipped suites are what their configs generate (each compared, named ``ok``); a
    shipped file changed by one character, or missing, fails the check, named."""
    args = ["generate", *map(str, CONFIG_FILES), "--out-dir", str(SHIPPED), "--check"]
    assert cli_main(args) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert [line.split(": ")[0] for line in err.splitlines()] == [
        f"ok    {SHIPPED / (name + '.json')}" for name in builtin_suites()]
    copy_dir = tmp_path / "suites"
    shutil.copytree(SHIPPED, copy_dir)
    edited, removed = (copy_dir / f"{name}.json" for name in builtin_suites()[:2])
    edited.write_text(edited.read_text().replace('"The', '"A', 1))
    removed.unlink()
    assert cli_main([*args[:-2], str(copy_dir), "--check"]) == 1
    err = capsys.readouterr().err
    assert f"error: {edited} is stale: regenerate it from" in err
    assert f"error: {removed} is missing: regenerate it from" in err
    assert err.count("ok    ") == len(CONFIG_FILES) - 2


# --- the leaderboard ------------------------------------------------------------------------

def test_the_leaderboard_has_a_table_per_builtin_suite_and_one_for_all(tmp_path: Path) -> None:
    from helm.benchmark.presentation.schema import read_schema

    from syntaxgym_helm.harness.leaderboard import show_tables

    groups = {g.name: g for g in read_schema(str(ROOT / "configs" / "schema_syntaxgym.yaml"))
              .run_groups}
    names = builtin_suites()
    assert groups["syntaxgym_builtin"].subgroups == [f"syntaxgym_{name}" for name in names]
    assert all(f"syntaxgym_{name}" in groups for name in names)
    conf = (ROOT / "run_specs" / "syntaxgym_builtin.conf").read_text()
    assert conf.count("syntaxgym:suite=sgh_") == len(names)
    # What helm-summarize writes for the parent group, and what --show makes of it.
    header = ["Model", "Mean score", "Built-in suites - Accuracy",
              *(f"{name} - Accuracy" for name in names)]
    row = ["m1", 0.5, None, 1.0, 0.0, *([None] * (len(names) - 2))]
    (tmp_path / "groups").mkdir()
    (tmp_path / "groups" / "syntaxgym_builtin.json").write_text(json.dumps(
        [{"title": "SyntaxGym accuracy", "header": [{"value": v} for v in header],
          "rows": [[{"value": v} for v in row]]}]))
    assert show_tables(tmp_path).splitlines() == [
        "| | m1 |", "|---|---|", "| **Built-in suites** (mean over the suites run) | 0.500 |",
        f"| {names[0]} | 1.000 |", f"| {names[1]} | 0.000 |"]
