"""HELM entry point (group ``helm``): registers the ``syntaxgym`` run spec and embedded models."""

from syntaxgym_helm import run_specs  # noqa: F401  (registration is the import's side effect)
from syntaxgym_helm.models import register_embedded_models

EMBEDDED_MODEL_NAMES = register_embedded_models()
