"""Which HELM runner runs a set of run specs: :func:`runner_class`, for the Python API, the CLI's
``--runner`` and ``syntaxgym-helm sweep``, given a short name or any runner's class path (what
``helm-run --runner-class-name`` takes)."""

from __future__ import annotations

from typing import Any

#: The Ray runner's class path (``helm-run --runner-class-name``), recorded in each of its runs.
RAY_RUNNER = "syntaxgym_helm.runners.RayRunner"
#: Short names of the runners, by class path. ``default`` is HELM's own ``Runner`` (one run after
#: another in this process).
RUNNERS = {
    "default": "helm.benchmark.runner.Runner",
    "ray": RAY_RUNNER,
    "multi_gpu": "helm.benchmark.multi_gpu_runner.MultiGPURunner",
    "slurm": "helm.benchmark.slurm_runner.SlurmRunner",
}


class RunnerNameError(ValueError):
    """A runner name that is neither a short name nor a HELM runner's class path."""


def runner_class(name: str | None = None) -> type[Any]:
    """HELM's runner class for ``name``: None or ``default``: HELM's ``Runner``; ``ray``:
    :class:`~syntaxgym_helm.runners.RayRunner`; ``multi_gpu``, ``slurm``: HELM's; else a class
    path (``package.module.Class``) of a subclass of HELM's ``Runner``."""
    from helm.benchmark.runner import Runner
    from helm.common.object_spec import get_class_by_name

    path = RUNNERS.get(name or "default", name or "")
    if "." not in path:
        raise RunnerNameError(f"runner {name!r} is not one of {', '.join(RUNNERS)} nor a class "
                              "path (package.module.Class)")
    try:
        found = get_class_by_name(path)
    except (ImportError, AttributeError) as exc:
        raise RunnerNameError(f"runner {name!r}: cannot import {path} ({type(exc).__name__}: "
                              f"{exc})") from None
    if not (isinstance(found, type) and issubclass(found, Runner)):
        raise RunnerNameError(f"runner {name!r}: {path} is not a HELM Runner "
                              "(helm.benchmark.runner.Runner)")
    return found
