"""HELM runners: :class:`RayRunner` (HELM's runs on a Ray cluster, one actor per model; Ray is
the ``ray`` extra, imported only when it runs) and :func:`runner_class`, which names a runner by
a short name or class path for the Python API, the CLI and ``syntaxgym-helm sweep``.

``helm-run ... --runner-class-name syntaxgym_helm.runners.RayRunner``; docs/scaling.md.
"""

from syntaxgym_helm.runners.ray_runner import RayRunner
from syntaxgym_helm.runners.selection import RUNNERS, RunnerNameError, runner_class

__all__ = ["RUNNERS", "RayRunner", "RunnerNameError", "runner_class"]
