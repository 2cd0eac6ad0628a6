"""The run options, declared once (:mod:`syntaxgym_helm.core.run_options`) on the typed-option
machinery of :mod:`syntaxgym_helm.core.options`: strings read as a run entry gives them, Python
values checked by type, errors that name the argument and what it takes, what a run records."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest

from syntaxgym_helm.core.options import OptionError, check_fields, check_value, option, options_from
from syntaxgym_helm.core.run_options import (
    FIRST_TOKEN_POLICIES,
    TIE_POLICIES,
    RunOptionError,
    RunOptions,
    options_from as run_options_from,
)


def test_run_entry_strings_are_read_by_each_options_type() -> None:
    options = run_options_from({"first_token": "exclude", "ties": "pass", "context": "unrelated",
                                "context_sentences": " 6", "context_seed": "2", "prefix": "<s>"})
    assert options == RunOptions(first_token="exclude", ties="pass", context="unrelated",
                                 context_sentences=6, context_seed=2, prefix="<s>")
    # What run_spec.json records (numbers as numbers) reads back to the same object.
    assert run_options_from(options.recorded("metric")) == dataclasses.replace(options,
                                                                               suites_dir="")


def test_closed_choices_are_literal_types() -> None:
    assert FIRST_TOKEN_POLICIES == ("error", "exclude")
    assert TIE_POLICIES == ("fail", "pass")


@pytest.mark.parametrize(("values", "message"), [
    ({"first_token": "drop"}, "first_token='drop' is not one of error, exclude"),
    ({"ties": "half"}, "ties='half' is not one of fail, pass"),
    ({"context_sentences": "-2"}, "context_sentences=-2 is negative"),
    ({"context_seed": "one"}, "context_seed='one' is not a whole number"),
    ({"prefix": " <s>"}, "must not begin or end with spaces"),
    ({"contexts": "none"}, "unknown argument contexts; the options are: suites_dir, prefix"),
])
def test_bad_strings_are_refused_naming_the_argument_and_its_values(values, message) -> None:
    with pytest.raises(RunOptionError, match=f"^syntaxgym: .*{message}"):
        run_options_from(values, where="syntaxgym: ")


@pytest.mark.parametrize(("values", "message"), [
    ({"context_sentences": "3"}, r"context_sentences='3' \(str\) is not a whole number"),
    ({"context_sentences": True}, r"context_sentences=True \(bool\) is not a whole number"),
    ({"context_seed": 2.5}, r"context_seed=2.5 \(float\) is not a whole number"),
    ({"ties": 1}, r"ties=1 \(int\) is not one of fail, pass"),
])
def test_python_values_of_the_wrong_type_are_type_errors(values, message) -> None:
    with pytest.raises(TypeError, match=message):
        RunOptions(**values)


def test_the_object_is_frozen_and_keyword_only() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RunOptions().ties = "pass"  # type: ignore[misc]
    with pytest.raises(TypeError):
        RunOptions("auto")  # type: ignore[misc]


def test_a_run_records_what_it_changes_and_a_context_as_a_whole() -> None:
    plain = RunOptions()
    assert plain.recorded("metric") == {"prefix": "auto", "first_token": "error"}
    assert plain.recorded("scenario") == {} and plain.name_parts("none") == []
    lenient = RunOptions(ties="pass", suites_dir="/suites")
    assert lenient.recorded("metric") == {"prefix": "auto", "first_token": "error",
                                          "ties": "pass"}
    assert lenient.recorded("scenario") == {"suites_dir": "/suites"}
    assert lenient.name_parts("none") == ["ties=pass"]  # a folder is no part of the name
    context = RunOptions(context="/data/news.txt")
    assert context.recorded("scenario") == {"context": "/data/news.txt", "context_sentences": 3,
                                            "context_seed": 0}
    assert context.name_parts("file_news") == ["context=file_news", "context_sentences=3",
                                               "context_seed=0"]


def test_an_option_object_declared_with_option_gets_parsing_checks_and_help() -> None:
    # What adding an option takes: a field with its type, default and help.
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Options:
        reduction: Literal["sum", "mean"] = option("sum", "how token scores are combined")
        alpha: float = option(1.0, "length exponent", minimum=0)
        strict: bool = option(False, "refuse what cannot be measured")
        window: int | None = option(None, "tokens in a window", minimum=1)

        def __post_init__(self) -> None:
            check_fields(self)

    parsed = options_from(Options, {"reduction": "mean", "alpha": "0.8", "strict": "yes",
                                    "window": ""})
    assert parsed == Options(reduction="mean", alpha=0.8, strict=True, window=None)
    assert options_from(Options, {"window": "512"}).window == 512
    for values, message in (({"alpha": "-1"}, "alpha=-1.0 is negative: it takes 0 or more"),
                            ({"strict": "maybe"}, "strict='maybe' is not true or false"),
                            ({"window": 1.5}, r"window=1.5 \(float\) is not a whole number or "
                                              "None")):
        with pytest.raises(OptionError, match=message):
            options_from(Options, values)


def test_check_value_checks_one_argument() -> None:
    assert check_value("max_items", None, int | None) is None
    assert check_value("max_items", 3, int | None, minimum=0) == 3
    for value, error in ((2.5, TypeError), ("3", TypeError), (True, TypeError), (-1, ValueError)):
        with pytest.raises(error, match=f"max_items={value!r}"):
            check_value("max_items", value, int | None, minimum=0)
