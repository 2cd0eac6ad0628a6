"""The dotted class names of the clients and tokenizers HELM is told to build.

HELM's model deployments name a client by its class path; the plugin's registrations, the run spec
(``prefix=auto`` gives the plugin's own clients nothing) and the executor prefetch hook all need
these names without importing the classes (which would import torch), so they are written once,
here; a test checks that each one imports and is the class it names.
"""

from __future__ import annotations

#: The plugin's local engine (:class:`syntaxgym_helm.clients.local.client.SyntaxGymClient`).
LOCAL_CLIENT = "syntaxgym_helm.clients.local.client.SyntaxGymClient"
#: Its subclass for embedded models whose GGUF is assembled at first use.
EMBEDDED_LOCAL_CLIENT = "syntaxgym_helm.clients.embedded.local_client.EmbeddedSyntaxGymClient"
#: HELM's HuggingFace client and tokenizer with the plugin's request cache (keys that name the
#: checkpoint, no impossible answer cached, a SQLite file that cannot hang), and their subclasses
#: for assembled embedded models.
HF_CLIENT = "syntaxgym_helm.clients.huggingface.CheckedHuggingFaceClient"
HF_TOKENIZER = "syntaxgym_helm.clients.huggingface.CheckedHuggingFaceTokenizer"
EMBEDDED_HF_CLIENT = "syntaxgym_helm.clients.embedded.clients.EmbeddedHuggingFaceClient"
EMBEDDED_HF_TOKENIZER = "syntaxgym_helm.clients.embedded.clients.EmbeddedHuggingFaceTokenizer"
#: The masked-LM (pseudo-log-likelihood) and encoder-decoder clients.
MASKED_CLIENT = "syntaxgym_helm.clients.masked.client.MaskedLMClient"
SEQ2SEQ_CLIENT = "syntaxgym_helm.clients.seq2seq.client.Seq2SeqClient"
#: The client for OpenAI-compatible servers and APIs.
SERVED_CLIENT = "syntaxgym_helm.clients.served.EchoCompletionsClient"

#: HELM's window service that never tokenizes: every prompt fits, none is truncated. The local
#: engine's deployments use it, since HELM would otherwise tokenize every prompt through its
#: tokenizer service and sqlite cache only to learn that a sentence fits (the engine itself refuses
#: a prompt longer than the model's context, with a clear error; truncating a SyntaxGym sentence
#: would only make its item unscorable).
NO_TOKENIZER_WINDOW_SERVICE = (
    "helm.benchmark.window_services.no_tokenizer_window_service.NoTokenizerWindowService")

#: Clients that score every prompt after the model's beginning-of-text token themselves.
LOCAL_CLIENTS = frozenset({LOCAL_CLIENT, EMBEDDED_LOCAL_CLIENT})
#: Clients that score every token of the prompt with a context of their own (the masked LM sees
#: the whole sentence, the decoder its start token): ``prefix=auto`` gives them nothing either.
CONTEXT_OWN_CLIENTS = LOCAL_CLIENTS | {MASKED_CLIENT, SEQ2SEQ_CLIENT}
#: Clients the executor hands a run's requests before HELM sends them (``prefetch``).
PREFETCHING_CLIENTS = CONTEXT_OWN_CLIENTS

ALL = (LOCAL_CLIENT, EMBEDDED_LOCAL_CLIENT, HF_CLIENT, HF_TOKENIZER, EMBEDDED_HF_CLIENT,
       EMBEDDED_HF_TOKENIZER, SERVED_CLIENT, NO_TOKENIZER_WINDOW_SERVICE, MASKED_CLIENT,
       SEQ2SEQ_CLIENT)
