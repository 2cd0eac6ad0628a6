"""HELM entry point (group ``helm``): everything HELM needs from the plugin, installed once.

HELM imports this module when it starts (``helm-run``, and anything else that loads plugins):

- the ``syntaxgym`` run spec function (registered when :mod:`.harness.run_spec` is imported);
- :class:`~syntaxgym_helm.harness.run_spec.SyntaxGymModelRunExpander` as HELM's ``model=`` run
  expander, so ``prefix=auto`` is resolved for the model each run entry names;
- the embedded models (``syntaxgym/...`` and ``helmhf/...``) whose packages are installed;
- the executor hook that hands the local engine each run's requests before HELM sends them
  (:mod:`.clients.local.prefetch`), so its batches are full.

The last two also happen when the scenario module is imported (:mod:`.clients.registration`), for
HELM's parallel runners, whose workers load no plugins. Where HELM has no public hook (the run
expander registry, the executor), the plugin goes through :mod:`syntaxgym_helm.helm_compat`,
which checks the installed HELM first.
"""

from syntaxgym_helm.clients.registration import register_with_helm
from syntaxgym_helm.harness.run_spec import SyntaxGymModelRunExpander
from syntaxgym_helm.helm_compat import install_model_run_expander

install_model_run_expander(SyntaxGymModelRunExpander)
EMBEDDED_MODEL_NAMES = register_with_helm()
