"""The masked-LM and encoder-decoder clients read their arguments into one typed settings object
each (syntaxgym_helm/clients/batch_settings.py), as the causal engine does: YAML's strings read
by each setting's type, a bad value or an unknown argument refused naming the client and the
argument, and docs/models.md lists every setting with the default the code has."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from helm.common.cache import BlackHoleCacheConfig

from syntaxgym_helm.clients.batch_settings import (
    BatchScoringSettings,
    MaskedSettings,
    Seq2SeqSettings,
)
from syntaxgym_helm.clients.local.engine_settings import EngineSettingError
from syntaxgym_helm.clients.masked.client import MaskedLMClient
from syntaxgym_helm.clients.seq2seq.client import Seq2SeqClient

ROOT = Path(__file__).resolve().parents[2]


def test_yaml_args_are_read_by_each_settings_type() -> None:
    client = MaskedLMClient(BlackHoleCacheConfig(), "never-loaded", pll="within_word_l2r",
                            prefetch="false", max_batch_tokens="512", dtype="torch.float32",
                            stock="true")
    assert client.settings == MaskedSettings(pll="within_word_l2r", prefetch=False,
                                             max_batch_tokens=512, stock=True)
    assert client.prefetch_enabled is False and client.pll == "within_word_l2r"
    assert client.max_batch_tokens == 512 and client.dtype == "float32"
    seq2seq = Seq2SeqClient(BlackHoleCacheConfig(), "never-loaded", convention="enc_dec_mask")
    assert seq2seq.settings == Seq2SeqSettings(convention="enc_dec_mask")
    assert seq2seq.convention == "enc_dec_mask"


def test_a_settings_object_changed_by_keywords() -> None:
    client = Seq2SeqClient(BlackHoleCacheConfig(), "never-loaded",
                           settings=Seq2SeqSettings(max_batch_tokens=64), device="cpu")
    assert (client.settings.max_batch_tokens, client.settings.device) == (64, "cpu")
    with pytest.raises(TypeError, match="settings must be a MaskedSettings"):
        MaskedLMClient(BlackHoleCacheConfig(), "never-loaded", settings=Seq2SeqSettings())


@pytest.mark.parametrize(("client", "args", "message"), [
    (MaskedLMClient, {"pll": "left"}, "pll='left' is not one of original, within_word_l2r"),
    (MaskedLMClient, {"convention": "enc_dec_mask"}, "unknown argument convention"),
    (Seq2SeqClient, {"convention": "mask"},
     "convention='mask' is not one of original, enc_dec_mask, enc_dec_prefix"),
    (Seq2SeqClient, {"max_batch_tokens": 0}, "max_batch_tokens=0 is too small"),
    (Seq2SeqClient, {"prefetch": "maybe"}, "prefetch='maybe' is not true or false"),
])
def test_a_bad_setting_is_refused_naming_the_client_and_the_argument(client, args,
                                                                     message) -> None:
    with pytest.raises(EngineSettingError, match=f"{client.__name__}: {message}"):
        client(BlackHoleCacheConfig(), "never-loaded", **args)


@pytest.mark.parametrize("settings", [MaskedSettings, Seq2SeqSettings])
def test_docs_list_every_setting_with_the_codes_default(settings) -> None:
    text = (ROOT / "docs" / "models.md").read_text()
    table = text[text.index("### Masked and encoder-decoder clients' settings"):]
    for field in dataclasses.fields(settings):
        default = "" if field.default is None else str(field.default).lower()
        assert re.search(rf"^\| `{field.name}` \|\s*{re.escape(default)}\s*\|", table,
                         re.MULTILINE), field.name
    assert BatchScoringSettings().max_batch_tokens == 1024
