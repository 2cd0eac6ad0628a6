"""The plugin's local inference engine: token logprobs of prompts from a local checkpoint, in
batched, prefix-sharing forward passes.

Shaped like HELM's ``helm/clients/huggingface_client.py``:

- :mod:`.server`: the model server (:class:`~.server.ModelServer`, one thread that owns the
  loaded model and computes the prompts HELM's threads ask for in batches) and the process-wide
  factory (:class:`~.server.ModelServerFactory`: one server per model and settings, each model
  loaded once);
- :mod:`.client`: the thin HELM client (``SyntaxGymClient``): requests in, prompts to its
  server, token logprobs out as HELM results.

Below them, the engine the server runs, one concern a module:

- :mod:`.logprob_engine`: :class:`~.logprob_engine.LogprobEngine`, the token logprobs of many
  prompts (each distinct prefix computed once), and its setup on a model (checking prefix
  sharing against plain passes);
- :mod:`.prompt_encoding`: prompts as token ids and exact token texts after the
  beginning-of-text token;
- :mod:`.forward_passes`: running plain and prefix-shared forward passes and gathering their
  logprobs;
- :mod:`.pass_workers`: prefix-shared passes on several worker threads at once (client argument
  ``workers``), each with its stretch of a call's prompts, its own store and its share of
  torch's threads;
- :mod:`.prefix_trie`: planning passes: the prompts' shared prefixes as trees cut into rows, and
  the index of stored prefixes;
- :mod:`.pass_packing`: one pass's rows as the model's input tensors, and where each output comes
  from;
- :mod:`.prefix_store`: the cross-pass store of computed prefixes (keys, values, hidden states,
  normalisers);
- :mod:`.output_layer`: the model's output layer, a block of the vocabulary at a time;
- :mod:`.freed_memory`: a tokenizer's Python copy of the vocabulary and merges it was built from,
  dropped after a load; the C heaps' free pages handed back once a model is released;
- :mod:`.model_loading`: checkpoints, GGUF files (dequantised once and cached, checked when read),
  devices, dtypes;
- :mod:`.prefetch`: the executor hook that hands the client a run's requests up front.

Its log lines begin with ``syntaxgym local engine:``.
"""
