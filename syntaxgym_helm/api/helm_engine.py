"""HELM as the engine of the Python API: models found as ``helm-run`` finds them, requests made by
HELM's own adapter and sent by HELM's own executor (so the local engine gets a run's requests up
front and batches them, exactly as in a run), with HELM's request cache when one is asked for.

Nothing is written but HELM's request cache (``cache_dir``) and the suites downloaded into the
plugin's cache (``$SYNTAXGYM_HELM_CACHE/suites``). HELM's credentials and YAML model configs are
read from ``local_path`` (``prod_env`` when it exists, as ``helm-run --local-path``).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import threading
from pathlib import Path

from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.config_registry import (
    register_builtin_configs_from_helm_package,
    register_configs_from_directory,
)
from helm.benchmark.executor import ExecutionSpec, Executor
from helm.benchmark.model_deployment_registry import (
    ALL_MODEL_DEPLOYMENTS,
    get_default_model_deployment_for_model,
)
from helm.benchmark.scenarios.scenario import Instance
from helm.benchmark.window_services.tokenizer_service import TokenizerService
from helm.common.authentication import Authentication
from helm.common.cache_backend_config import SqliteCacheBackendConfig

from syntaxgym_helm.clients import interruption
from syntaxgym_helm.clients.registration import install_run_hooks

#: ``helm-run``'s default ``--local-path``: read when it exists in the working directory.
DEFAULT_LOCAL_PATH = Path("prod_env")

_LOCK = threading.Lock()
_REGISTERED_PATHS: set[Path] = set()
_HELM_BUILTINS = False
_EXECUTORS: dict[tuple[str, str, int], Executor] = {}
_SCRATCH: list[Path] = []


class UnknownModelError(LookupError):
    """No HELM model deployment serves the model named."""


def local_path_of(local_path: str | Path | None) -> Path:
    """The folder HELM reads credentials and model configs from: ``local_path``, else
    ``prod_env`` when it exists, else an empty scratch folder (HELM's local context needs one)."""
    if local_path is not None:
        return Path(local_path)
    if DEFAULT_LOCAL_PATH.is_dir():
        return DEFAULT_LOCAL_PATH
    with _LOCK:
        if not _SCRATCH:
            _SCRATCH.append(Path(tempfile.mkdtemp(prefix="syntaxgym_helm_api.")))
            interruption.scratch_folder(_SCRATCH[0])
        return _SCRATCH[0]


def prepare_registry(local_path: Path) -> None:
    """The plugin's run hooks and embedded models, and ``local_path``'s YAML files, registered
    with HELM (each folder once per process)."""
    install_run_hooks()
    with _LOCK:
        if local_path.resolve() not in _REGISTERED_PATHS:
            register_local_configs(local_path)
            _REGISTERED_PATHS.add(local_path.resolve())


def model_deployment(model: str, local_path: Path) -> str:
    """The deployment HELM would use for ``model`` (as ``helm-run``'s ``model=`` does): the
    plugin's embedded models, the models of ``local_path``'s YAML files, then HELM's own."""
    global _HELM_BUILTINS
    prepare_registry(local_path)
    deployment = get_default_model_deployment_for_model(model)
    if deployment is None:
        with _LOCK:
            if not _HELM_BUILTINS:  # slow: only for a model the plugin does not register
                register_builtin_configs_from_helm_package()
                _HELM_BUILTINS = True
        deployment = get_default_model_deployment_for_model(model)
    if deployment is None:
        embedded = sorted({d.model_name for d in ALL_MODEL_DEPLOYMENTS
                           if d.model_name and d.model_name.startswith(("syntaxgym/", "helmhf/"))})
        raise UnknownModelError(
            f"no HELM model deployment serves {model!r}: name a model of HELM's, one of the "
            f"embedded models ({', '.join(embedded) or 'none installed: make install'}), or one "
            "declared in the model_deployments.yaml of local_path (default ./prod_env, as "
            "helm-run's --local-path; configs/local_checkpoint/ shows a local checkpoint's)")
    return deployment


class ConfigFileError(ValueError):
    """A YAML file of ``local_path`` that cannot be read."""


def register_local_configs(local_path: Path) -> None:
    """HELM's ``register_configs_from_directory``; a file that is not YAML is a
    :class:`ConfigFileError` naming the file, line and column, the reason first (not PyYAML's
    traceback)."""
    import yaml

    try:
        register_configs_from_directory(str(local_path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = (f"{mark.name}, line {mark.line + 1}, column {mark.column + 1}" if mark
                 else f"a YAML file of {local_path}")
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigFileError(f"{problem} ({where}): the file is not valid YAML; fix it, or "
                              "pass local_path= a folder without it") from None


def executor(local_path: Path, cache_dir: str | Path | None, num_threads: int) -> Executor:
    """HELM's executor for these settings, made once per process (so are its clients, and the
    local engine's models are loaded once)."""
    key = (str(local_path.resolve()), str(Path(cache_dir).resolve()) if cache_dir else "",
           num_threads)
    with _LOCK:
        if key not in _EXECUTORS:
            cache = SqliteCacheBackendConfig(str(cache_dir)) if cache_dir else None
            if cache_dir:
                Path(cache_dir).mkdir(parents=True, exist_ok=True)
            # HELM prints where it looks for credentials.conf: not what a caller asked to see.
            with contextlib.redirect_stdout(io.StringIO()):
                _EXECUTORS[key] = Executor(ExecutionSpec(
                    url=None, auth=Authentication(""), local_path=str(local_path),
                    parallelism=num_threads, sqlite_cache_backend_config=cache))
        return _EXECUTORS[key]


def run_requests(adapter_spec: AdapterSpec, instances: list[Instance], run_executor: Executor,
                 ) -> list[RequestState]:
    """The instances' requests as HELM's adapter makes them, executed by HELM's executor."""
    parallelism = run_executor.execution_spec.parallelism
    adapter = AdapterFactory.get_adapter(adapter_spec, TokenizerService(run_executor.context))
    states = adapter.adapt(instances, parallelism)
    done = run_executor.execute(ScenarioState(adapter_spec=adapter_spec, request_states=states,
                                              annotator_specs=None))
    return list(done.request_states)
