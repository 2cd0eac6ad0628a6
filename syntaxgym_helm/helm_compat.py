"""Every place the plugin reaches into HELM beyond its public extension points, in one module,
each checked against the installed HELM before it is used.

HELM's public API covers what a benchmark plugin mostly needs (run spec functions, scenarios,
metrics, clients and tokenizers named by class path, model registration functions). Where it has
none, the plugin relies on HELM's internals; each such reliance is a :class:`Hook` here, with the
shapes it needs (methods, their parameters, attributes, registries):

- ``executor``: HELM has no hook before a run's requests are sent, so the plugin wraps
  ``Executor.execute`` process-wide (:mod:`syntaxgym_helm.clients.local.prefetch`);
- ``auto_client``: the wrapper finds the run's clients with the private
  ``AutoClient._get_client`` (the same client instances HELM then sends the requests to);
- ``model_run_expander``: the plugin's ``model=`` run expander replaces HELM's in the
  ``RUN_EXPANDERS`` registry, to resolve ``prefix=auto`` (:mod:`syntaxgym_helm.plugin`);
- ``huggingface_tokenizer``: the embedded tokenizer overrides ``get_wrapped_tokenizer`` and loads
  through HELM's static ``HuggingFaceTokenizer.get_tokenizer``
  (:mod:`syntaxgym_helm.clients.embedded.clients`);
- ``huggingface_client``: the embedded client passes its arguments to ``HuggingFaceClient``;
- ``huggingface_loaded_models``: when a checkpoint's files change, the plugin's HuggingFace client
  and tokenizer drop what HELM keeps loaded per model and tokenizer name
  (``HuggingFaceServerFactory._servers``, ``HuggingFaceTokenizer._tokenizers``) and set the
  client's ``_pretrained_model_name_or_path`` and ``_wrapped_tokenizer`` again
  (:mod:`syntaxgym_helm.clients.huggingface`);
- ``openai_legacy_completions``: :mod:`syntaxgym_helm.clients.served` overrides the private
  ``_get_cache_key`` and calls ``_to_raw_completion_request`` and ``self.client``;
- ``runner``: :class:`~syntaxgym_helm.runners.RayRunner` subclasses HELM's ``Runner`` (its eight
  constructor arguments), runs each run with its ``run_one`` after pointing the instance's
  ``runs_path`` and ``eval_cache_path`` at a staging folder, skips runs by its
  ``_is_run_completed``, and sets each worker up with ``load_entry_point_plugins`` and
  ``set_benchmark_output_path``;
- ``registries``: :class:`~syntaxgym_helm.runners.RayRunner` sends the driver's model
  deployments, model metadata and tokenizer configs (HELM's registry lists and name maps) to
  each actor, which sets its own registries to them instead of parsing HELM's YAML again
  (``runner_config.yaml``: ``ray: {configs: files}`` turns this off);
- ``metric``: the metric overrides ``ReferenceMetric.evaluate`` and ``evaluate_references``, and
  reads ``RequestResult``'s ``batch_request_time``, ``batch_size``, ``request_time``, ``cached``.

A hook is checked where it is first used (:func:`require`), so a HELM release that changes a shape
stops with a :class:`HelmCompatibilityError` that names the hook, what changed, the HELM version
installed and the versions tested, instead of a silent fallback (a missing prefetch hook, for one,
would leave a run correct but several times slower). A HELM version outside
:data:`TESTED_HELM_VERSIONS` whose shapes all match gets one warning. ``pyproject.toml`` pins
crfm-helm to the tested versions; ``tests/test_helm_compat.py`` checks every hook and that a changed
shape fails.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helm.benchmark.run_expander import RunExpander

#: The crfm-helm releases the plugin is tested with (``pyproject.toml`` pins the same).
TESTED_HELM_VERSIONS = ("0.5.16",)


class HelmCompatibilityError(RuntimeError):
    """The installed HELM lacks a shape the plugin relies on."""


@dataclass(frozen=True)
class Shape:
    """Something of HELM's the plugin needs: an object at ``path`` (``module:attribute.path``)
    with these ``parameters`` (leading names of its signature), ``fields`` (of a dataclass) or
    ``attributes``."""

    path: str
    parameters: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()

    def problems(self) -> list[str]:
        try:
            target = resolve(self.path)
        except (ImportError, AttributeError) as exc:
            return [f"{self.path} is missing ({type(exc).__name__}: {exc})"]
        found: list[str] = []
        if self.parameters:
            names = _parameter_names(target)
            if names[: len(self.parameters)] != list(self.parameters):
                found.append(f"{self.path} takes ({', '.join(names)}), not "
                             f"({', '.join(self.parameters)}, ...)")
        if self.fields:
            have = {f.name for f in dataclasses.fields(target)} if dataclasses.is_dataclass(
                target) else set()
            found += [f"{self.path} has no field {name!r}" for name in self.fields
                      if name not in have]
        found += [f"{self.path} has no attribute {name!r}" for name in self.attributes
                  if not hasattr(target, name)]
        return found


@dataclass(frozen=True)
class Hook:
    """One reliance on HELM's internals: where the plugin uses it, why, and what it needs."""

    name: str
    used_by: str
    why: str
    shapes: tuple[Shape, ...]
    extra_check: Callable[[], list[str]] | None = None

    def problems(self) -> list[str]:
        found = [problem for shape in self.shapes for problem in shape.problems()]
        if not found and self.extra_check is not None:
            found = self.extra_check()
        return found


def resolve(path: str) -> Any:
    """The object at ``module:attribute.path``."""
    module_name, _, attributes = path.partition(":")
    target: Any = importlib.import_module(module_name)
    for attribute in filter(None, attributes.split(".")):
        target = getattr(target, attribute)
    return target


def _parameter_names(target: Any) -> list[str]:
    try:
        return list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return []


#: HELM's config registries: each module's list of everything registered and its map by name.
_REGISTRIES: dict[str, tuple[str, str]] = {
    "helm.benchmark.model_metadata_registry": ("ALL_MODELS_METADATA",
                                               "MODEL_NAME_TO_MODEL_METADATA"),
    "helm.benchmark.tokenizer_config_registry": ("ALL_TOKENIZER_CONFIGS",
                                                 "TOKENIZER_NAME_TO_CONFIG"),
    "helm.benchmark.model_deployment_registry": ("ALL_MODEL_DEPLOYMENTS",
                                                 "DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT"),
}


def _model_expander_is_registered() -> list[str]:
    from helm.benchmark.run_expander import RUN_EXPANDERS, ModelRunExpander

    if ModelRunExpander.name != "model":
        return [f"ModelRunExpander.name is {ModelRunExpander.name!r}, not 'model'"]
    registered = RUN_EXPANDERS.get("model")
    if not (isinstance(registered, type) and issubclass(registered, ModelRunExpander)):
        return [f"RUN_EXPANDERS['model'] is {registered!r}, not HELM's ModelRunExpander"]
    return []


def _huggingface_client_attributes() -> list[str]:
    """The attributes of HELM's ``HuggingFaceClient`` that the plugin sets again, by name in
    its source (they are made in ``__init__``; ``make_request`` reads them)."""
    from helm.clients.huggingface_client import HuggingFaceClient

    source = inspect.getsource(HuggingFaceClient)
    return [f"HuggingFaceClient no longer keeps self.{name}" for name in
            ("_pretrained_model_name_or_path", "_wrapped_tokenizer")
            if f"self.{name}" not in source]


HOOKS: dict[str, Hook] = {hook.name: hook for hook in (
    Hook("executor", "syntaxgym_helm/clients/local/prefetch.py",
         "hand the local engine a run's requests before HELM sends them",
         (Shape("helm.benchmark.executor:Executor", attributes=("execute", "process")),
          Shape("helm.benchmark.executor:Executor.__init__", ("self", "execution_spec")),
          Shape("helm.benchmark.executor:ExecutionSpec", fields=("local_path", "parallelism",
                                                                 "dry_run")),
          Shape("helm.common.local_context:LocalContext.__init__",
                ("self", "base_path", "cache_backend_config")))),
    Hook("auto_client", "syntaxgym_helm/clients/local/prefetch.py",
         "find the client instances HELM sends a run's requests to",
         (Shape("helm.clients.auto_client:AutoClient._get_client",
                ("self", "model_deployment_name")),)),
    Hook("model_run_expander", "syntaxgym_helm/plugin.py",
         "resolve prefix=auto once the model= expander knows the model",
         (Shape("helm.benchmark.run_expander:ModelRunExpander.expand", ("self", "run_spec")),
          Shape("helm.benchmark.run_expander:ModelRunExpander.__init__", ("self", "value"))),
         _model_expander_is_registered),
    Hook("huggingface_tokenizer", "syntaxgym_helm/clients/embedded/clients.py",
         "load an embedded model's tokenizer from a file found at first use",
         (Shape("helm.tokenizers.huggingface_tokenizer:HuggingFaceTokenizer.__init__",
                ("self", "cache_config", "tokenizer_name", "pretrained_model_name_or_path")),
          Shape("helm.tokenizers.huggingface_tokenizer:HuggingFaceTokenizer.get_tokenizer",
                ("helm_tokenizer_name", "pretrained_model_name_or_path")),
          Shape("helm.tokenizers.huggingface_tokenizer:HuggingFaceTokenizer",
                attributes=("get_wrapped_tokenizer",)))),
    Hook("huggingface_client", "syntaxgym_helm/clients/embedded/clients.py",
         "serve an embedded model through HELM's HuggingFaceClient",
         (Shape("helm.clients.huggingface_client:HuggingFaceClient.__init__",
                ("self", "cache_config", "tokenizer", "pretrained_model_name_or_path",
                 "end_of_text_token", "apply_chat_template")),)),
    Hook("huggingface_loaded_models", "syntaxgym_helm/clients/huggingface.py",
         "load a checkpoint again when its files change",
         (Shape("helm.clients.huggingface_client:HuggingFaceServerFactory",
                attributes=("_servers", "_servers_lock", "get_server")),
          Shape("helm.tokenizers.huggingface_tokenizer:HuggingFaceTokenizer",
                attributes=("_tokenizers", "_tokenizers_lock"))),
         _huggingface_client_attributes),
    Hook("openai_legacy_completions", "syntaxgym_helm/clients/served.py",
         "send echo requests through HELM's OpenAI legacy-completions client",
         (Shape("helm.clients.openai_client:OpenAILegacyCompletionsClient.__init__",
                ("self", "cache_config", "api_key", "org_id", "base_url")),
          Shape("helm.clients.openai_client:OpenAILegacyCompletionsClient._get_cache_key",
                ("self", "raw_request", "request")),
          Shape("helm.clients.openai_client:"
                "OpenAILegacyCompletionsClient._to_raw_completion_request", ("self", "request")),
          Shape("helm.clients.openai_client:OpenAILegacyCompletionsClient",
                attributes=("make_request",)))),
    Hook("runner", "syntaxgym_helm/runners/ray_worker.py",
         "run HELM's runs on a Ray cluster",
         (Shape("helm.benchmark.runner:Runner.__init__",
                ("self", "execution_spec", "output_path", "suite", "skip_instances",
                 "cache_instances", "cache_instances_only", "skip_completed_runs",
                 "exit_on_error")),
          Shape("helm.benchmark.runner:Runner",
                attributes=("run_one", "run_all", "_get_run_path", "_is_run_completed")),
          Shape("helm.benchmark.runner:set_benchmark_output_path", ("benchmark_output_path",)),
          Shape("helm.benchmark.run:load_entry_point_plugins", ("group",)))),
    Hook("registries", "syntaxgym_helm/runners/ray_worker.py",
         "give each Ray actor the driver's parsed configs instead of parsing HELM's YAML again",
         tuple(shape for module, (every, by_name) in _REGISTRIES.items() for shape in (
             Shape(f"{module}:{every}", attributes=("append", "__setitem__")),
             Shape(f"{module}:{by_name}", attributes=("update", "clear"))))),
    Hook("metric", "syntaxgym_helm/harness/metric.py",
         "score an item from all of its conditions' requests, and report what they cost",
         (Shape("helm.benchmark.metrics.reference_metric:ReferenceMetric.evaluate",
                ("self", "scenario_state", "metric_service", "eval_cache_path", "parallelism")),
          Shape("helm.benchmark.metrics.reference_metric:ReferenceMetric.evaluate_references",
                ("self", "adapter_spec", "reference_request_states", "metric_service",
                 "eval_cache_path")),
          Shape("helm.common.request:RequestResult",
                fields=("success", "completions", "cached", "request_time",
                        "batch_request_time", "batch_size", "error")))),
)}


def helm_version() -> str:
    try:
        return version("crfm-helm")
    except PackageNotFoundError:
        return "unknown"


def problems(name: str) -> list[str]:
    """What the installed HELM lacks for hook ``name`` (empty: nothing)."""
    return HOOKS[name].problems()


_CHECKED: set[str] = set()
_LOCK = threading.Lock()


def require(name: str) -> None:
    """Check hook ``name`` once per process; raise :class:`HelmCompatibilityError` saying what
    changed when the installed HELM lacks a shape it needs."""
    with _LOCK:
        if name in _CHECKED:
            return
    found = problems(name)
    if found:
        hook = HOOKS[name]
        raise HelmCompatibilityError(
            f"syntaxgym-helm cannot {hook.why} with crfm-helm {helm_version()} (hook "
            f"{name!r}, used by {hook.used_by}): {'; '.join(found)}. It is tested with crfm-helm "
            f"{', '.join(TESTED_HELM_VERSIONS)}: install that (pip install "
            f"'crfm-helm=={TESTED_HELM_VERSIONS[-1]}'), or update syntaxgym_helm/helm_compat.py "
            "and the code that uses the hook")
    with _LOCK:
        _CHECKED.add(name)
    _warn_untested_version()


_WARNED: list[bool] = []


def _warn_untested_version() -> None:
    installed = helm_version()
    if installed in TESTED_HELM_VERSIONS or _WARNED:
        return
    _WARNED.append(True)
    from helm.common.hierarchical_logger import hwarn

    hwarn(f"syntaxgym-helm is tested with crfm-helm {', '.join(TESTED_HELM_VERSIONS)}, not "
          f"{installed}: the HELM internals it relies on are checked as they are used")


# -- the hooks' uses ------------------------------------------------------------------------------

def wrap_executor_execute(make_wrapper: Callable[[Callable], Callable], mark: str) -> bool:
    """Replace ``Executor.execute`` by ``make_wrapper(original)`` (once: a wrapper carrying the
    attribute ``mark`` is kept); returns whether the wrapper is in place."""
    require("executor")
    from helm.benchmark.executor import Executor

    if not getattr(Executor.execute, mark, False):
        wrapper = make_wrapper(Executor.execute)
        setattr(wrapper, mark, True)
        Executor.execute = wrapper  # type: ignore[method-assign]  # the hook itself
    return True


def auto_client_of(executor: Any) -> Any | None:
    """The ``AutoClient`` of an executor running locally; None for a remote (proxy) context,
    whose clients run elsewhere."""
    from helm.common.local_context import LocalContext

    context = getattr(executor, "context", None)
    if context is None:
        raise HelmCompatibilityError(
            f"crfm-helm {helm_version()}'s Executor has no 'context' (hook 'executor'); tested "
            f"with {', '.join(TESTED_HELM_VERSIONS)}")
    if not isinstance(context, LocalContext):
        return None
    client = getattr(context, "client", None)
    if client is None:
        raise HelmCompatibilityError(
            f"crfm-helm {helm_version()}'s LocalContext has no 'client' (hook 'auto_client'); "
            f"tested with {', '.join(TESTED_HELM_VERSIONS)}")
    return client


def client_for_deployment(auto_client: Any, deployment: str) -> Any:
    """The client HELM's ``AutoClient`` sends ``deployment``'s requests to (made if needed)."""
    require("auto_client")
    return auto_client._get_client(deployment)


def install_model_run_expander(expander: type[RunExpander]) -> None:
    """Put ``expander`` (a ``ModelRunExpander`` subclass) in HELM's registry as ``model``."""
    require("model_run_expander")
    from helm.benchmark.run_expander import RUN_EXPANDERS

    RUN_EXPANDERS[expander.name] = expander


def require_attributes(instance: Any, names: tuple[str, ...], hook: str) -> None:
    """Attributes HELM's constructor sets that the plugin reads (not visible on the class)."""
    missing = [name for name in names if not hasattr(instance, name)]
    if missing:
        raise HelmCompatibilityError(
            f"crfm-helm {helm_version()}: {type(instance).__mro__[1].__name__} instances have "
            f"no {', '.join(missing)} (hook {hook!r}); tested with "
            f"{', '.join(TESTED_HELM_VERSIONS)}")


def registry_snapshot() -> dict[str, tuple[list[Any], dict[str, Any]]]:
    """What HELM's config registries hold in this process (model metadata, tokenizer configs,
    model deployments: each registry's list and map by name), picklable, for
    :func:`restore_registries` in another process."""
    require("registries")
    snapshot = {}
    for module_name, (every, by_name) in _REGISTRIES.items():
        module = importlib.import_module(module_name)
        snapshot[module_name] = (list(getattr(module, every)), dict(getattr(module, by_name)))
    return snapshot


def restore_registries(snapshot: dict[str, tuple[list[Any], dict[str, Any]]]) -> None:
    """Make this process's HELM config registries hold exactly what ``snapshot`` holds (the
    lists and maps are changed in place: HELM's functions read them as module globals)."""
    require("registries")
    for module_name, (every, by_name) in _REGISTRIES.items():
        module = importlib.import_module(module_name)
        items, names = snapshot[module_name]
        getattr(module, every)[:] = items
        registry = getattr(module, by_name)
        registry.clear()
        registry.update(names)
