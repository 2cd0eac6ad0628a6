"""HELM entry point (group ``helm``): everything HELM needs from the plugin, installed once.

HELM imports this module when it starts (``helm-run``, and anything else that loads plugins).
First, an installed torch, transformers or gguf outside the supported releases stops the
process with one line (:mod:`~syntaxgym_helm.supported_versions`: HELM would catch an
exception and go on without the plugin). Then:

- the ``syntaxgym`` run spec function (:func:`~.harness.run_spec.get_syntaxgym_spec`);
- :class:`~syntaxgym_helm.harness.run_spec.SyntaxGymModelRunExpander` as HELM's ``model=`` run
  expander, so ``prefix=auto`` is resolved for the model each run entry names;
- the hooks of a run (:func:`~.clients.registration.install_run_hooks`): the embedded models
  (``syntaxgym/...`` and ``helmhf/...``) whose packages are installed, the executor hook that
  hands the local engine each run's requests before HELM sends them
  (:mod:`.clients.local.prefetch`), the handling of Ctrl-C and the bound on log lines.

Nothing else of the package installs anything when imported; the run hooks are also installed
where a run starts without the plugin (HELM's parallel runners' workers, the Python API). Where
HELM has no public hook (the run expander registry, the executor), the plugin goes through
:mod:`syntaxgym_helm.helm_compat`, which checks the installed HELM first.
"""

from syntaxgym_helm.clients.registration import install_run_hooks
from syntaxgym_helm.harness.run_spec import SyntaxGymModelRunExpander, register_run_spec_function
from syntaxgym_helm.helm_compat import install_model_run_expander
from syntaxgym_helm.supported_versions import refuse_unsupported

# torch, transformers or gguf outside the tested ranges: helm-run stops here, with one line.
refuse_unsupported()
register_run_spec_function()
install_model_run_expander(SyntaxGymModelRunExpander)
EMBEDDED_MODEL_NAMES = install_run_hooks()
