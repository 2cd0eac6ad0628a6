"""The plugin's own engine for local checkpoints: batched, prefix-sharing forward passes.

Shaped like HELM's HuggingFace client: a model server that loads and runs one model
(:mod:`.server`, one per model per process, from :func:`.server.server_for`), and a thin HELM
client (:mod:`.client`) that turns requests into prompts and results. Below them:

- :mod:`.logprob_engine`: token logprobs of many prompts, each distinct prefix computed once;
- :mod:`.prefix_trie`: the prompts' shared prefixes as a trie, packed into rows;
- :mod:`.cpu_kernels`: oneDNN-packed linear layers on CPU;
- :mod:`.model_loading`: checkpoints, GGUF files (dequantised once and cached), devices, dtypes;
- :mod:`.request_cache`: HELM's request cache, held open;
- :mod:`.prefetch`: the executor hook that hands the client a run's requests up front.
"""
