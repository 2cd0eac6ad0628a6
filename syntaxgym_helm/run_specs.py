"""The ``syntaxgym`` run spec: ``helm-run --run-entries syntaxgym:suite=NAME,model=MODEL``.

Arguments (all optional but ``suite``):

- ``suite``: a registered suite name (the 34 of Hu et al. 2020), a path to a suite JSON file, or an
  http(s) URL;
- ``prefix``: text put before every sentence and excluded from scoring, so the sentence's first
  token is scored in context. ``none`` (default) adds nothing: right for the plugin's own client,
  which scores the first token after the model's beginning-of-text token itself, and for servers
  whose tokenizer adds one. For HELM's ``HuggingFaceClient`` with a GPT-2-style tokenizer give the
  model's beginning-of-text token, e.g. ``prefix=<|endoftext|>``;
- ``first_token``: ``error`` (default) or ``exclude``: what to do when the sentence's first token
  comes back without context anyway (see :mod:`syntaxgym_helm.scoring`);
- ``suites_dir``: a local folder with ``<name>.json`` suite files that stands in for the download.
"""

from __future__ import annotations

from helm.benchmark.adaptation.adapter_spec import (
    ADAPT_MULTIPLE_CHOICE_SEPARATE_ORIGINAL,
    AdapterSpec,
)
from helm.benchmark.metrics.metric import MetricSpec
from helm.benchmark.run_spec import RunSpec, run_spec_function
from helm.benchmark.scenarios.scenario import ScenarioSpec

from syntaxgym_helm.scoring import FIRST_TOKEN_POLICIES

NO_PREFIX = "none"


class RunSpecError(ValueError):
    """A run-entry argument of ``syntaxgym`` is invalid."""


def syntaxgym_adapter_spec(prefix: str) -> AdapterSpec:
    """One echo request per condition whose prompt is exactly ``prefix + sentence``."""
    return AdapterSpec(
        method=ADAPT_MULTIPLE_CHOICE_SEPARATE_ORIGINAL,
        global_prefix=prefix,
        global_suffix="",
        instructions="",
        input_prefix="",
        input_suffix="",
        output_prefix="",
        output_suffix="",
        instance_prefix="",
        max_train_instances=0,
        num_outputs=1,
        max_tokens=0,
        temperature=0.0,
        stop_sequences=[],
    )


@run_spec_function("syntaxgym")
def get_syntaxgym_spec(
    suite: str = "",
    prefix: str = NO_PREFIX,
    first_token: str = "error",
    suites_dir: str | None = None,
) -> RunSpec:
    if not suite.strip():
        raise RunSpecError("syntaxgym needs a suite: syntaxgym:suite=NAME_OR_PATH_OR_URL,model=...")
    if first_token not in FIRST_TOKEN_POLICIES:
        raise RunSpecError(f"syntaxgym: first_token={first_token!r} is not one of "
                           f"{', '.join(FIRST_TOKEN_POLICIES)}")
    prefix_text = "" if prefix == NO_PREFIX else prefix
    if prefix_text.strip() != prefix_text:
        raise RunSpecError(f"syntaxgym: prefix={prefix!r} must not begin or end with spaces")
    scenario_args: dict[str, str] = {"suite": suite}
    if suites_dir:
        scenario_args["suites_dir"] = suites_dir
    suite_label = suite_group_name(suite)
    return RunSpec(
        name=_run_name(suite, prefix, first_token),
        scenario_spec=ScenarioSpec(
            class_name="syntaxgym_helm.scenario.SyntaxGymScenario", args=scenario_args),
        adapter_spec=syntaxgym_adapter_spec(prefix_text),
        metric_specs=[MetricSpec(class_name="syntaxgym_helm.metric.SyntaxGymMetric",
                                 args={"first_token": first_token})],
        groups=["syntaxgym", suite_label],
    )


def suite_group_name(suite: str) -> str:
    """The leaderboard run group of a suite: ``syntaxgym_<name>`` (file stem for paths and URLs)."""
    stem = suite.rstrip("/").rsplit("/", 1)[-1]
    stem = stem[: -len(".json")] if stem.endswith(".json") else stem
    return f"syntaxgym_{stem}"


def _run_name(suite: str, prefix: str, first_token: str) -> str:
    parts = [f"suite={suite}"]
    if prefix != NO_PREFIX:
        parts.append(f"prefix={prefix}")
    if first_token != "error":
        parts.append(f"first_token={first_token}")
    return "syntaxgym:" + ",".join(parts)
