"""HELM entry point (group ``helm``): registers the ``syntaxgym`` run spec and embedded models.

It also installs :class:`~syntaxgym_helm.run_specs.SyntaxGymModelRunExpander` as HELM's ``model=``
run expander, so ``prefix=auto`` is resolved for the model each run entry names.
"""

from helm.benchmark.run_expander import RUN_EXPANDERS

from syntaxgym_helm.models import register_embedded_models
from syntaxgym_helm.run_specs import SyntaxGymModelRunExpander

RUN_EXPANDERS[SyntaxGymModelRunExpander.name] = SyntaxGymModelRunExpander
EMBEDDED_MODEL_NAMES = register_embedded_models()
