"""The x axis of a sweep, read from checkpoint names as the field writes them, or given."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import cast

import pytest

from syntaxgym_helm.core.training_axis import (
    TrainingAxisError,
    given_values,
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


def test_given_values_replace_the_names_and_the_others_are_read_from_theirs() -> None:
    axis = training_axis(["final", "early"], unit="words", given={"final": 1e8, "early": 1e6})
    assert axis.ordered() == ["early", "final"] and axis.source == "given"
    # A Trainer's output folder: the final model, named by the folder, given; the rest read.
    out = training_axis(["trainer_out", "checkpoint-2", "checkpoint-4"], given={"trainer_out": 8})
    assert out.unit == "steps" and out.source == "given and names"
    assert out.ordered() == ["checkpoint-2", "checkpoint-4", "trainer_out"]
    assert out.values == {"trainer_out": 8.0, "checkpoint-2": 2.0, "checkpoint-4": 4.0}
    with pytest.raises(TrainingAxisError, match=r"name of early .*--x-values early=X"):
        training_axis(["final", "early"], given={"final": 1e8})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -5, "soon", None])
def test_a_given_x_that_is_not_a_finite_number_0_or_more_is_refused_naming_it(
        value: object) -> None:
    names = ["checkpoint-2", "checkpoint-4"]
    with pytest.raises(TrainingAxisError,
                       match=rf"x given for checkpoint-2 is {re.escape(repr(value))}: give a "
                             "finite number, 0 or more"):
        training_axis(names, given={"checkpoint-2": cast(float, value), "checkpoint-4": 1})
    assert training_axis(names, given={"checkpoint-2": 0, "checkpoint-4": 1}).values == {
        "checkpoint-2": 0.0, "checkpoint-4": 1.0}  # step 0: before training


def test_an_x_given_for_no_checkpoint_of_the_sweep_is_refused_with_the_name_meant() -> None:
    with pytest.raises(TrainingAxisError, match=r"'fianl', not a checkpoint of this sweep "
                                                r"\(did you mean 'final'\?\); its checkpoints "
                                                "are best, final"):
        training_axis(["best", "final"], given={"best": 1, "final": 5, "fianl": 3})
    with pytest.raises(TrainingAxisError, match=r"'seed2/step9', not a checkpoint of this "
                                                r"sweep; its"):
        training_axis(["step1", "step2"], given={"seed2/step9": 9})


def test_given_values_are_read_from_a_list_or_a_csv_file() -> None:
    assert read_given_values("a=1,b=2.5e6") == {"a": 1.0, "b": 2.5e6}
    assert read_given_values("name,x\nfinal,100\nearly,1_000\n") == {"final": 100.0,
                                                                      "early": 1000.0}
    assert read_given_values("final\t7\n") == {"final": 7.0}
    with pytest.raises(TrainingAxisError, match="x value 2 .*'b=many'"):
        read_given_values("a=1,b=many")
    with pytest.raises(TrainingAxisError, match=r"^line 3 \('early,soon'\) is not "
                                                "NAME,NUMBER: give a name,x line for each "
                                                "checkpoint$"):
        read_given_values("name,x\nfinal,100\nearly,soon\n")


def test_given_values_are_a_file_s_path_or_pairs_and_anything_else_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("xvals.csv").write_text("name,x\nbest,1\nfinal,5\n")
    assert given_values("xvals.csv") == {"best": 1.0, "final": 5.0}
    assert given_values("best=1,final=5") == {"best": 1.0, "final": 5.0}
    long = ",".join(f"checkpoint-{step}={step}" for step in range(200))  # no file name so long
    assert len(given_values(long)) == 200
    # A mistyped path and pairs without "=" were read as a CSV file's header line, and dropped.
    with pytest.raises(TrainingAxisError, match=r"^--x-values 'xvals_typo.csv': no such file, "
                                                "and not NAME=X pairs"):
        given_values("xvals_typo.csv")
    with pytest.raises(TrainingAxisError, match=r"^x value 1 \('checkpoint-2:20'\) is not "
                                                "NAME=NUMBER: give NAME=X,NAME=X$"):
        given_values("checkpoint-2:20,checkpoint-4:40")
    Path("colons.csv").write_text("checkpoint-2:20,checkpoint-4:40\n")
    with pytest.raises(TrainingAxisError, match=r"^colons.csv: no x values \(its line 1, "
                                                r"'checkpoint-2:20,checkpoint-4:40', is read "
                                                r"as a header\)"):
        given_values("colons.csv")
    Path("folder").mkdir()
    with pytest.raises(TrainingAxisError, match=r"^--x-values folder: cannot be read \(it is a "
                                                r"folder, not a regular file\)"):
        given_values("folder")


def test_a_name_given_twice_is_refused_naming_both() -> None:
    with pytest.raises(TrainingAxisError, match=r"^x value 3 \('best=9'\) gives best an x "
                                                r"again \(x value 1 gave it 1\)"):
        given_values("best=1,final=5,best=9")
    with pytest.raises(TrainingAxisError, match=r"^xvals.csv, line 4 \('best,9'\) gives best "
                                                r"an x again \(xvals.csv, line 2 gave it 1\)"):
        read_given_values("name,x\nbest,1\nfinal,5\nbest,9\n", file="xvals.csv")


def test_two_runs_or_stages_are_not_taken_for_one_curve() -> None:
    """OLMo-2's stage 2 counts steps and tokens from 0 again, per ingredient: its branches were
    sorted among stage 1's as one curve. Names whose step follows different beginnings, and
    two checkpoints at one x, are refused naming them."""
    olmo2 = ["stage1-step1000-tokens5B", "stage1-step928646-tokens3896B",
             "stage2-ingredient1-step1000-tokens5B", "stage2-ingredient2-step2000-tokens9B"]
    with pytest.raises(TrainingAxisError, match=r"begin differently before their step \("
                                                r"stage1- \(stage1-step1000-tokens5B\), "
                                                r"stage2-ingredient1-"):
        training_axis(olmo2)
    stage1 = training_axis(olmo2[:2])  # one stage: one curve
    assert stage1.ordered() == olmo2[:2] and stage1.unit == "tokens"
    with pytest.raises(TrainingAxisError, match="begin differently"):
        training_axis(["seed1-step1000", "seed2-step2000"])
    with pytest.raises(TrainingAxisError, match=r"chck_1M and chck_1000K are both at x=1e\+06"):
        training_axis(["chck_1M", "chck_1000K", "chck_2M"])
    with pytest.raises(TrainingAxisError, match=r"checkpoint-8 and final are both at x=8"):
        training_axis(["checkpoint-4", "checkpoint-8", "final"], given={"final": 8})
