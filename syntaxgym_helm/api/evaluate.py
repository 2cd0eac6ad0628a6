"""Score suites and sentences from Python, with the scoring code of a ``helm-run``.

:func:`evaluate` builds the run spec the ``syntaxgym`` run entry builds (the same arguments, and
``prefix=auto`` resolved for the model by the same function), the scenario's instances, and sends
their requests through HELM (:mod:`.helm_engine`); each item is then scored by the metric's own
:func:`~syntaxgym_helm.harness.metric.evaluate_request_states`. Only the output differs: typed
results (:mod:`.results`) instead of a run folder. For leaderboards, use ``helm-run``.

:func:`score_sentences` is :func:`evaluate` on a suite made of the sentences, one condition each,
no predictions: each sentence's tokens and region surprisals, as the suites' are computed.
"""

from __future__ import annotations

import os
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from syntaxgym_helm.api.helm_engine import executor, local_path_of, model_deployment, run_requests
from syntaxgym_helm.api.model_resolution import resolved_model
from syntaxgym_helm.api.results import ConditionScore, SuiteResult, item_result
from syntaxgym_helm.clients.cache_dirs import cache_root
from syntaxgym_helm.clients.checkpoint_identity import used_checkpoint
from syntaxgym_helm.core.context import spec_from_args
from syntaxgym_helm.core.errors import clip
from syntaxgym_helm.core.options import check_value, option_names
from syntaxgym_helm.core.registry import load_named_suite
from syntaxgym_helm.core.run_options import RunOptions
from syntaxgym_helm.core.suite import Condition, Item, Region, Suite, SuiteMeta
from syntaxgym_helm.core.suite_data import region_text
from syntaxgym_helm.harness.metric import DEFAULT_OPTIONS, evaluate_request_states, item_cost
from syntaxgym_helm.harness.run_spec import resolve_auto_prefix, run_spec_of
from syntaxgym_helm.harness.scenario import suite_instances

#: The one condition of each sentence :func:`score_sentences` scores.
SENTENCE_CONDITION = "sentence"
#: The most sentences a :func:`score_sentences` error describes one by one.
MAX_FAILURES_SHOWN = 5


def evaluate(
    suite: str | Path | Suite,
    model: str,
    *,
    options: RunOptions | None = None,
    max_items: int | None = None,
    cache_dir: str | Path | None = None,
    local_path: str | Path | None = None,
    num_threads: int = 4,
    runner: str | None = None,
    **option_values: Any,
) -> SuiteResult:
    """Score ``suite`` on ``model`` and return every item's regions, predictions and outcome.

    ``suite``: a registered name (the 34 of Hu et al. 2020, the built-in ``sgh_*`` suites,
    ``blimp_<paradigm>``), a suite file, an http(s) URL, or a
    :class:`~syntaxgym_helm.core.suite.Suite`. ``model``: a HELM model name: an embedded one
    (``syntaxgym/smollm2-135m-instruct-q4_1``), one of HELM's, or one declared in ``local_path``'s
    ``model_deployments.yaml``; or a checkpoint: a folder (config + weights), a GGUF file or a Hub
    id, causal, masked or encoder-decoder (read from its config), a masked LM's variant after ``~``
    (``/path/bert~within_word_l2r``; docs/models.md). The run options
    (``prefix``, ``first_token``, ``ties``, ``context``, ``context_sentences``, ``context_seed``,
    ``suites_dir``: every field of :class:`~syntaxgym_helm.core.run_options.RunOptions`, as the
    run entry's arguments, docs/python_api.md) are given as keywords, or as ``options`` (keywords
    then change it). ``max_items``: the first items only. ``cache_dir``: HELM's request cache
    (SQLite files; None: none, every request is computed). ``local_path``: HELM's credentials
    and model configs (default ``prod_env`` when it exists, as ``helm-run --local-path``).
    ``num_threads``: HELM's ``--num-threads``. ``runner``: where the requests are executed:
    None or ``"default"``, in this process; ``"ray"`` (or the class path of a
    :class:`~syntaxgym_helm.runners.RayRunner`), on a Ray actor of the model (started once per
    model and kept: later calls find its weights loaded; the cluster of ``local_path``'s
    ``runner_config.yaml`` or ``$RAY_ADDRESS``, else a Ray on this machine;
    docs/scaling.md). A value of the wrong type is a ``TypeError`` and
    one out of range a ``ValueError``, each naming the argument and what it takes.
    """
    if not isinstance(suite, (str, Path, Suite)):
        raise TypeError(f"suite must be a name, a path or a Suite, not {type(suite).__name__}")
    check_value("max_items", max_items, int | None)
    if max_items is not None and max_items < 0:
        raise ValueError(f"max_items={max_items} must be 0 or more (None: every item)")
    check_value("num_threads", num_threads, int, minimum=1)
    if runner not in (None, "default"):  # a wrong name is an error now, before any work
        from syntaxgym_helm.runners import runner_class

        runner_class(runner)
    run_options = api_options(options, option_values)
    loaded = (suite if isinstance(suite, Suite)
              else load_named_suite(str(suite), cache_root() / "suites",
                                    run_options.suites_dir or None))
    run_spec = run_spec_of(str(suite) if not isinstance(suite, Suite) else loaded.name,
                           run_options)
    folder = local_path_of(local_path)
    model = resolved_model(model, folder)  # a checkpoint's path or Hub id: registered with HELM
    adapter_spec = replace(run_spec.adapter_spec, model=model,
                           model_deployment=model_deployment(model, folder))
    run_spec = resolve_auto_prefix(replace(run_spec, adapter_spec=adapter_spec))
    instances = suite_instances(loaded, spec_from_args(run_spec.scenario_spec.args))
    instances = instances[:max_items] if max_items is not None else instances
    warn_text_changes(loaded, [item.item_number for item in loaded.items[:len(instances)]])
    states = execute(run_spec.adapter_spec, instances, folder, cache_dir, num_threads, runner)
    by_instance = defaultdict(list)
    for state in states:
        by_instance[state.instance.id].append(state)
    items = {instance.id: item for instance, item in zip(instances, loaded.items, strict=False)}
    results = tuple(item_result(items[instance.id],
                                evaluate_request_states(by_instance[instance.id], run_options),
                                item_cost(by_instance[instance.id]),
                                loaded.notes.get(items[instance.id].item_number, ()))
                    for instance in instances)
    used = used_checkpoint(run_spec.adapter_spec.model_deployment)
    return SuiteResult(loaded.name, model, loaded.meta.main_metric,
                       run_spec.adapter_spec.global_prefix, results,
                       used.digest if used is not None else "")


def execute(adapter_spec: Any, instances: list[Any], local_path: Path,
            cache_dir: str | Path | None, num_threads: int, runner: str | None) -> list[Any]:
    """The instances' requests executed where ``runner`` says (see :func:`evaluate`)."""
    if runner not in (None, "default"):
        from helm.benchmark.runner import Runner

        from syntaxgym_helm.runners import RayRunner, runner_class

        found = runner_class(runner)
        if issubclass(found, RayRunner):
            return found.execute_requests(adapter_spec, instances, local_path, cache_dir,
                                          num_threads)
        if found is not Runner:
            raise ValueError(f"runner={runner!r}: evaluate executes a suite's requests in this "
                             "process (runner='default') or on a Ray actor (runner='ray'); "
                             f"{found.__name__} runs helm-run's run specs: use helm-run "
                             "--runner-class-name")
    return run_requests(adapter_spec, instances, executor(local_path, cache_dir, num_threads))


def api_options(options: RunOptions | None, values: Mapping[str, Any]) -> RunOptions:
    """The run options of an API call: ``options`` (default: every default) changed by
    ``values``, Python values checked as :class:`RunOptions` checks them (a path is taken as its
    text); an unknown name is a ``TypeError`` that lists the options."""
    if options is not None and not isinstance(options, RunOptions):
        raise TypeError(f"options={options!r} is not a RunOptions")
    unknown = sorted(set(values) - set(option_names(RunOptions)))
    if unknown:
        raise TypeError(f"unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(unknown)}; the run options are: "
                        f"{', '.join(option_names(RunOptions))}")
    given = {name: os.fspath(value) if isinstance(value, os.PathLike) else value
             for name, value in values.items()}
    return (options or DEFAULT_OPTIONS).replace(**given)


def score_sentences(sentences: Sequence[str | Sequence[str]], model: str,
                    **options: Any) -> list[ConditionScore]:
    """Each sentence's tokens and surprisals (bits), and its regions' sums: a sentence given as a
    string is one region; given as a list of strings, those are its regions (numbered from 1,
    joined by single spaces, as a suite's). ``options``: :func:`evaluate`'s keyword arguments
    (the run options among them).
    Raises ``ValueError`` naming every sentence that could not be scored, and why."""
    if isinstance(sentences, str):
        raise TypeError("score_sentences takes a list of sentences; for one, pass [sentence]")
    items = tuple(_sentence_item(number, sentence)
                  for number, sentence in enumerate(sentences, start=1))
    regions = max((len(item.conditions[0].regions) for item in items), default=0)
    suite = Suite(SuiteMeta("sentences"), {n: f"region {n}" for n in range(1, regions + 1)}, (),
                  items, notes=_sentence_notes(items, sentences))
    result = evaluate(suite, model, **options)
    # The reason first, then which sentence (cut: a sentence can be 36,000 characters long).
    failed = [f"sentence {item.item_number}: {clip('; '.join(item.problems), 300)} (the "
              f"sentence: {clip(item.conditions[0].sentence, 80)!r}, "
              f"{len(item.conditions[0].sentence):,} characters)"
              for item in result.items if item.problems]
    if failed:
        shown = " | ".join(failed[:MAX_FAILURES_SHOWN])
        more = len(failed) - MAX_FAILURES_SHOWN
        raise ValueError(f"could not score {len(failed)} of {len(items)} sentences: {shown}"
                         + (f" | and {more} more" if more > 0 else ""))
    return [item.conditions[0] for item in result.items]


def _sentence_item(number: int, sentence: str | Sequence[str]) -> Item:
    parts = [sentence] if isinstance(sentence, str) else list(sentence)
    if not all(isinstance(part, str) for part in parts) or not "".join(parts).strip():
        raise ValueError(f"sentence {number}: {sentence!r} is not a non-empty text or list of "
                         "region texts")
    # As a suite's regions are read (region_text), so that both score the same text.
    regions = tuple(Region(index, region_text(part)) for index, part in enumerate(parts, start=1))
    return Item(number, (Condition(SENTENCE_CONDITION, regions),))


def _sentence_notes(items: Sequence[Item], sentences: Sequence[str | Sequence[str]]
                    ) -> dict[int, tuple[str, ...]]:
    """What :func:`_sentence_item` changed in each sentence (as a suite's notes say it)."""
    notes = {}
    for item, sentence in zip(items, sentences, strict=True):
        parts = [sentence] if isinstance(sentence, str) else list(sentence)
        changed = [f"region {region.region_number}: {part!r} is scored as {region.content!r}"
                   for region, part in zip(item.conditions[0].regions, parts, strict=True)
                   if region.content != part]
        if changed:
            notes[item.item_number] = tuple(changed)
    return notes


def warn_text_changes(suite: Suite, numbers: Sequence[int]) -> None:
    """A Python warning when reading changed the text of any of the items ``numbers``
    (each :class:`~syntaxgym_helm.api.results.ItemResult` lists its own in ``notes``)."""
    changed = [number for number in numbers if number in suite.notes]
    if changed:
        first = changed[0]
        warnings.warn(f"{suite.name}: the text of {len(changed)} item(s) was changed when read "
                      f"(their results' `notes` say how), e.g. item {first}: "
                      f"{'; '.join(suite.notes[first])}", UserWarning, stacklevel=3)
