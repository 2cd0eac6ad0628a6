"""The ``syntaxgym`` run spec: ``helm-run --run-entries syntaxgym:suite=NAME,model=MODEL``.

Arguments: ``suite`` (required), a registered suite name (the 34 of Hu et al. 2020, the built-in
``sgh_*`` and minimal-pair suites), a path to a suite JSON file, or an http(s) URL; then the run
options, the fields of :class:`~syntaxgym_helm.core.run_options.RunOptions` (docs/running.md),
given as strings and read by that one class:

- ``suites_dir``: a local folder with ``<name>.json`` suite files that stands in for the download;
- ``prefix``: text put before every sentence and excluded from scoring, so the sentence's first
  token is scored in context. ``auto`` (default) resolves it per model when the ``model=`` run
  expander picks the model: nothing for the plugin's own clients (they score the first token after
  the model's beginning-of-text token themselves), otherwise the ``prefix_token`` of the model's
  HELM tokenizer config (what HELM's own language-modelling adapter prepends), else nothing. The
  resolved text is recorded in ``run_spec.json`` (``adapter_spec.global_prefix``). ``none`` adds
  nothing; any other text is used as given, e.g. ``prefix=<|endoftext|>``;
- ``first_token``: ``error`` (default) or ``exclude``: what to do when the sentence's first token
  comes back without context anyway (see :mod:`syntaxgym_helm.core.item_evaluation`);
- ``ties``: ``fail`` (default) or ``pass``: how a tie (a ``<`` or ``>`` between two exactly equal
  values, e.g. two equally surprising sentences) is scored (:mod:`syntaxgym_helm.core.ties`);
  the ``syntaxgym_tie`` stat counts the items with one either way;
- ``context``: ``none`` (default), ``acceptable``, ``unacceptable``, ``unrelated`` or the path of a
  text file: sentences put before every condition of an item (:mod:`syntaxgym_helm.core.context`),
  ``context_sentences`` of them (default 3), drawn with ``context_seed`` (default 0). A run with a
  context is named after it, records it in its scenario and metric arguments, and belongs to the
  run groups ``syntaxgym_context_<kind>`` and ``syntaxgym_<suite>_context_<kind>`` instead of
  ``syntaxgym`` and ``syntaxgym_<suite>``, so the leaderboard shows it in tables of its own.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from helm.benchmark.adaptation.adapter_spec import (
    ADAPT_MULTIPLE_CHOICE_SEPARATE_ORIGINAL,
    AdapterSpec,
)
from helm.benchmark.metrics.metric import MetricSpec
from helm.benchmark.model_deployment_registry import (
    get_default_model_deployment_for_model,
    get_model_deployment,
)
from helm.benchmark.run_expander import ModelRunExpander
from helm.benchmark.run_spec import RunSpec, get_run_spec_function, run_spec_function
from helm.benchmark.scenarios.scenario import ScenarioSpec
from helm.benchmark.tokenizer_config_registry import get_tokenizer_config

from syntaxgym_helm.clients.class_paths import CONTEXT_OWN_CLIENTS
from syntaxgym_helm.clients.registration import install_run_hooks
from syntaxgym_helm.core.context import ContextError, ContextSpec, parse_context
from syntaxgym_helm.core.run_options import (
    AUTO_PREFIX,
    METRIC,
    NO_PREFIX,
    SCENARIO,
    RunOptionError,
    RunOptions,
    options_from,
)

RUN_SPEC_NAME = "syntaxgym"
SCENARIO_CLASS = "syntaxgym_helm.harness.scenario.SyntaxGymScenario"
METRIC_CLASS = "syntaxgym_helm.harness.metric.SyntaxGymMetric"


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


def get_syntaxgym_spec(suite: str = "", **options: Any) -> RunSpec:
    """The run spec of ``syntaxgym:suite=...,OPTION=VALUE,...``: ``options`` are the run entry's
    strings, read into :class:`~syntaxgym_helm.core.run_options.RunOptions` (typed values are
    taken too; :func:`run_spec_of` takes the object itself)."""
    try:
        parsed = options_from(options, where="syntaxgym: ")
    except RunOptionError as error:
        raise RunSpecError(str(error)) from None
    return run_spec_of(suite, parsed)


def register_run_spec_function() -> None:
    """Register :func:`get_syntaxgym_spec` as HELM's ``syntaxgym`` run spec function (once; the
    plugin does it when HELM loads it, so importing this module changes nothing in HELM)."""
    if get_run_spec_function(RUN_SPEC_NAME) is not get_syntaxgym_spec:
        run_spec_function(RUN_SPEC_NAME)(get_syntaxgym_spec)


def run_spec_of(suite: str, options: RunOptions) -> RunSpec:
    """The ``syntaxgym`` run spec of ``suite`` under ``options``; a context file is read now (and
    its SHA-256 recorded), so a bad one fails before anything runs."""
    install_run_hooks()
    if not suite.strip():
        raise RunSpecError("syntaxgym needs a suite: syntaxgym:suite=NAME_OR_PATH_OR_URL,model=...")
    try:
        context_spec = parse_context(options.context, options.context_sentences,
                                     options.context_seed)
    except ContextError as error:
        raise RunSpecError(f"syntaxgym: {error}") from None
    prefix = options.prefix
    prefix_text = "" if prefix in (NO_PREFIX, AUTO_PREFIX) else prefix
    scenario_args: dict[str, Any] = {"suite": suite, **options.recorded(SCENARIO)}
    if context_spec.sha256:
        scenario_args["context_sha256"] = context_spec.sha256
    name = "syntaxgym:" + ",".join([f"suite={suite}", *options.name_parts(context_spec.label)])
    return RunSpec(
        name=name,
        scenario_spec=ScenarioSpec(class_name=SCENARIO_CLASS, args=scenario_args),
        adapter_spec=syntaxgym_adapter_spec(prefix_text),
        metric_specs=[MetricSpec(class_name=METRIC_CLASS, args=options.recorded(METRIC))],
        groups=run_groups(suite, context_spec),
    )


def suite_group_name(suite: str) -> str:
    """The leaderboard run group of a suite: ``syntaxgym_<name>`` (file stem for paths and URLs)."""
    stem = suite.rstrip("/").rsplit("/", 1)[-1]
    stem = stem[: -len(".json")] if stem.endswith(".json") else stem
    return f"syntaxgym_{stem}"


def context_group_name(label: str) -> str:
    """The run group of every run with one kind of context: ``syntaxgym_context_<kind>``."""
    return f"syntaxgym_context_{label}"


def suite_context_group_name(suite: str, label: str) -> str:
    """The run group of a suite's runs with one kind of context."""
    return f"{suite_group_name(suite)}_context_{label}"


def run_groups(suite: str, context: ContextSpec) -> list[str]:
    if not context.active:
        return ["syntaxgym", suite_group_name(suite)]
    return [context_group_name(context.label), suite_context_group_name(suite, context.label)]


def model_prefix(model: str, model_deployment: str = "") -> str:
    """The text a model's sentences are scored after, for ``prefix=auto`` (see the module doc)."""
    try:
        name = model_deployment or get_default_model_deployment_for_model(model) or ""
        deployment = get_model_deployment(name)
    except Exception:  # noqa: BLE001 - an unknown model fails later, in HELM, with its own message
        return ""
    if deployment.client_spec.class_name in CONTEXT_OWN_CLIENTS:
        return ""  # it scores the sentence's first token in a context of its own
    config = get_tokenizer_config(deployment.tokenizer_name or "")
    return (config.prefix_token or "") if config else ""


def resolve_auto_prefix(run_spec: RunSpec) -> RunSpec:
    """A ``syntaxgym`` run spec with ``prefix=auto`` resolved for its model; others unchanged."""
    if run_spec.scenario_spec.class_name != SCENARIO_CLASS:
        return run_spec
    metric = run_spec.metric_specs[0]
    if metric.args.get("prefix") != AUTO_PREFIX or not run_spec.adapter_spec.model:
        return run_spec
    adapter = run_spec.adapter_spec
    prefix = model_prefix(adapter.model, adapter.model_deployment)
    return replace(run_spec, adapter_spec=replace(adapter, global_prefix=prefix))


class SyntaxGymModelRunExpander(ModelRunExpander):
    """HELM's ``model=`` expander, which also resolves ``prefix=auto`` once the model is known.

    The plugin installs it under the name ``model`` in HELM's run-expander registry; for every run
    spec that is not a ``syntaxgym`` one it behaves exactly as HELM's.
    """

    def expand(self, run_spec: RunSpec) -> list[RunSpec]:
        value = str(self.value)
        if "/" in value and Path(value).expanduser().is_dir() and not _deployed(value):
            raise ValueError(
                f"model={value} is a folder: helm-run takes model names, so register it first "
                f"(syntaxgym-helm model add {value}) and give the name it prints "
                "(model=local/NAME); the Python API (score_sentences, evaluate) takes the path")
        return [resolve_auto_prefix(child) for child in super().expand(run_spec)]


def _deployed(name: str) -> bool:
    """Whether HELM knows a model or deployment of this name (a folder of that name in the
    working directory does not shadow it)."""
    from helm.benchmark.model_deployment_registry import ALL_MODEL_DEPLOYMENTS

    return any(name in (d.name, d.model_name) for d in ALL_MODEL_DEPLOYMENTS)
