"""The local engine's client for an embedded model, apart from the HuggingFace classes of
:mod:`.clients`: importing this module imports neither torch nor transformers, so a run whose every
request is in the request cache never loads them (they come with the first prompt to compute)."""

from __future__ import annotations

from typing import Any

from helm.common.cache import CacheConfig

from syntaxgym_helm.clients.embedded.catalogue import installed_embedded_model
from syntaxgym_helm.clients.local.client import SyntaxGymClient


class EmbeddedSyntaxGymClient(SyntaxGymClient):
    """:class:`~syntaxgym_helm.clients.local.client.SyntaxGymClient` on an embedded model given by
    key (``embedded_model``); every other argument is SyntaxGymClient's.

    The constructor assembles the GGUF file if needed (HELM builds the client when a run first
    needs it) and passes its folder and name on; the model is still loaded at the first prompt
    to score, and dequantised once into the weights cache as for any GGUF file."""

    def __init__(self, cache_config: CacheConfig, embedded_model: str, *,
                 model_name: str | None = None, **kwargs: Any) -> None:
        gguf = installed_embedded_model(embedded_model).gguf_path()
        super().__init__(cache_config=cache_config, pretrained_model_name_or_path=str(gguf.parent),
                         gguf_file=gguf.name, model_name=model_name, **kwargs)
