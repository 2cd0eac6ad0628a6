"""Scoring variants are declared and parsed in one place (syntaxgym_helm/core/scoring_variants.py):
each kind's variants and the client argument each sets, model names read and written, a variant
of another kind refused naming the kind it belongs to."""

from __future__ import annotations

import pytest

from syntaxgym_helm.core.scoring_variants import (
    PLL_VARIANTS,
    SEQ2SEQ_VARIANTS,
    VARIANTS,
    check_variant,
    corrects_word_boundaries,
    describe_variant,
    split_variant,
    variant,
    variant_name,
    variants_of,
)


def test_each_kind_has_its_default_first_and_the_typed_choices() -> None:
    assert variants_of("causal") == ("original", "bow")
    assert variants_of("masked") == PLL_VARIANTS == ("original", "within_word_l2r")
    assert variants_of("seq2seq") == SEQ2SEQ_VARIANTS
    assert len({(v.kind, v.name) for v in VARIANTS}) == len(VARIANTS)


@pytest.mark.parametrize(("kind", "name", "args"), [
    ("causal", "bow", {"word_boundary": True}), ("causal", "original", {}),
    ("masked", "within_word_l2r", {"pll": "within_word_l2r"}),
    ("masked", "original", {"pll": "original"}),
    ("seq2seq", "enc_dec_prefix", {"convention": "enc_dec_prefix"}), ("seq2seq", "original", {}),
])
def test_each_variant_sets_its_client_argument(kind: str, name: str, args: dict) -> None:
    assert dict(variant(kind, name).client_args) == args


@pytest.mark.parametrize(("model", "parts"), [
    ("local/bert~within_word_l2r", ("local/bert", "within_word_l2r")),
    ("/data/t5~enc_dec_mask", ("/data/t5", "enc_dec_mask")),
    ("syntaxgym/smollm2-135m-instruct-q4_1", ("syntaxgym/smollm2-135m-instruct-q4_1", None)),
    ("~bow", ("~bow", None)), ("model~", ("model~", None)),
])
def test_model_names_are_split_and_written_back(model: str, parts: tuple) -> None:
    assert split_variant(model) == parts
    base, name = parts
    if name is not None:
        assert variant_name(base, name) == model
    assert variant_name(base, "original") == base


def test_a_variant_of_another_kind_is_refused_naming_its_kind() -> None:
    check_variant("masked", "within_word_l2r", "x")
    with pytest.raises(ValueError, match=r"/t5~within_word_l2r: the variant ~within_word_l2r "
                                         r"applies to masked LMs .*this is a seq2seq LM"):
        check_variant("seq2seq", "within_word_l2r", "/t5~within_word_l2r")
    with pytest.raises(ValueError, match=r"~left is not a variant of a masked LM \(one of "
                                         r"original, within_word_l2r\)"):
        check_variant("masked", "left", "bert~left")


def test_word_boundary_models_and_descriptions() -> None:
    assert corrects_word_boundaries("syntaxgym/x~bow")
    assert not corrects_word_boundaries("syntaxgym/bow") and not corrects_word_boundaries("x")
    assert "Pimentel & Meister" in describe_variant("bow")
    assert "Kauf & Ivanova" in describe_variant("within_word_l2r")
    assert describe_variant("unknown").startswith("a scoring variant")
