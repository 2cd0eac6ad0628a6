"""The x axis of a sweep, read from checkpoint names as the field writes them, or given."""

from __future__ import annotations

import pytest

from syntaxgym_helm.core.training_axis import (
    TrainingAxisError,
    positions_in_name,
    read_given_values,
    training_axis,
)


@pytest.mark.parametrize(("name", "expected"), [
    ("chck_1M", {"words": 1e6}),            # BabyLM's branches
    ("chck_10M", {"words": 1e7}),
    ("chck_1000M", {"words": 1e9}),
    ("chck_500K", {"words": 5e5}),
    ("step0", {"steps": 0.0}),              # Pythia's
    ("step143000", {"steps": 143000.0}),
    ("step1000-tokens4B", {"steps": 1000.0, "tokens": 4e9}),       # OLMo's, Marin's
    ("stage1-step1000-tokens5B", {"steps": 1000.0, "tokens": 5e9}),
    ("checkpoint-500", {"steps": 500.0}),   # a Trainer's folders
    ("global_step20", {"steps": 20.0}),
    ("final", {}), ("main", {}), ("best-model", {}), ("chck_M", {}),
])
def test_names_are_read_as_their_trainers_write_them(name: str, expected: dict) -> None:
    assert positions_in_name(name) == expected


def test_the_unit_is_the_first_every_name_gives_and_can_be_chosen() -> None:
    # Words before tokens before steps: what was seen says more than how many updates.
    axis = training_axis(["step2000-tokens8B", "step1000-tokens4B"])
    assert axis.unit == "tokens" and axis.values == {"step1000-tokens4B": 4e9,
                                                     "step2000-tokens8B": 8e9}
    assert axis.ordered() == ["step1000-tokens4B", "step2000-tokens8B"]
    steps = training_axis(["step1000-tokens4B", "step2000-tokens8B"], unit="steps")
    assert steps.values["step2000-tokens8B"] == 2000.0 and steps.source == "names"
    words = training_axis(["chck_10M", "chck_2M", "chck_100M"])
    assert words.unit == "words" and words.ordered() == ["chck_2M", "chck_10M", "chck_100M"]


def test_names_without_a_position_are_refused_naming_them_and_the_way_out() -> None:
    with pytest.raises(TrainingAxisError, match=r"final.*--x-values"):
        training_axis(["checkpoint-10", "final"])
    with pytest.raises(TrainingAxisError, match="do not share a unit"):
        training_axis(["chck_1M", "step100"])
    with pytest.raises(TrainingAxisError, match="'tokens'"):
        training_axis(["step100"], unit="tokens")
    with pytest.raises(TrainingAxisError, match="not one of"):
        training_axis(["step100"], unit="epochs")


def test_given_values_replace_the_names_and_must_cover_every_checkpoint() -> None:
    axis = training_axis(["final", "early"], unit="words", given={"final": 1e8, "early": 1e6})
    assert axis.ordered() == ["early", "final"] and axis.source == "given"
    with pytest.raises(TrainingAxisError, match="no x given for 1 checkpoint.*early"):
        training_axis(["final", "early"], given={"final": 1e8})


def test_given_values_are_read_from_a_list_or_a_csv_file() -> None:
    assert read_given_values("a=1,b=2.5e6") == {"a": 1.0, "b": 2.5e6}
    assert read_given_values("name,x\nfinal,100\nearly,1_000\n") == {"final": 100.0,
                                                                      "early": 1000.0}
    assert read_given_values("final\t7\n") == {"final": 7.0}
    with pytest.raises(TrainingAxisError, match="x value 2 .*'b=many'"):
        read_given_values("a=1,b=many")
    with pytest.raises(TrainingAxisError, match="x value 3"):
        read_given_values("name,x\nfinal,100\nearly,soon\n")
