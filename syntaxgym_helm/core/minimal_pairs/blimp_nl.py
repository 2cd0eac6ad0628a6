"""BLiMP-NL (Suijkerbuijk, Prins, de Heer Kloots, Zuidema, Frank 2025): 84 Dutch paradigms of 100
pairs in 22 phenomena; one suite per paradigm, ``blimp_nl_<phenomenon>__<paradigm>``
(``blimp_nl_passive__impersonal``), as lm-evaluation-harness's ``blimp_nl__...`` tasks name them.

A file ``<phenomenon>__<paradigm>.jsonl`` holds one JSON record a line with the fields
lm-evaluation-harness's task reads from the dataset it loads (``jmichaelov/blimp_nl``, one
configuration per paradigm, split ``test``): ``sentence_good`` and ``sentence_bad``; other fields
are kept. Items are numbered by their line. Such a file is what ``datasets`` writes with
``load_dataset("jmichaelov/blimp_nl", name, split="test").to_json(f"{name}.jsonl",
force_ascii=False)``.

The files are not pinned here: they could not be fetched where the package was built, so no
revision or checksum is recorded and none is downloaded; an offline copy
(``$SYNTAXGYM_BLIMP_NL_DIR/<phenomenon>__<paradigm>.jsonl``) is read and its SHA-256 recorded in
the suite. The authors score masked models with SLOG, which the project does not compute; the
report gives the sum, as lm-evaluation-harness's ``acc``.
"""

from __future__ import annotations

from syntaxgym_helm.core.minimal_pairs.columns import Records
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, SourceFile, stem

CITATION = ("Suijkerbuijk, Prins, de Heer Kloots, Zuidema, Frank (2025). BLiMP-NL: A Corpus of "
            "Dutch Minimal Pairs and Acceptability Judgments for Language Model Evaluation. "
            "Computational Linguistics. https://doi.org/10.1162/coli_a_00559")
RECORDS = Records(required=("sentence_good", "sentence_bad"), good="sentence_good",
                  bad="sentence_bad")
#: The 84 paradigms, ``<phenomenon>__<paradigm>``, as lm-evaluation-harness 0.4.13 names them.
PARADIGMS = (
    "adpositional_phrases__argument_r_extraction",
    "adpositional_phrases__argument_scrambling",
    "adverbial_modification__position_proform",
    "adverbial_modification__position_type",
    "anaphor_agreement__number",
    "anaphor_agreement__person",
    "argument_structure__argument_number_ditransitive",
    "argument_structure__argument_number_in_transitive",
    "argument_structure__ditransitive_nomdat_1",
    "argument_structure__ditransitive_nomdat_2",
    "argument_structure__ditransitive_nomdat_3",
    "argument_structure__intransitive_unaccusative_1",
    "argument_structure__intransitive_unaccusative_2",
    "argument_structure__intransitive_unaccusative_3",
    "auxiliaries__order_1",
    "auxiliaries__order_2",
    "auxiliaries__perfect",
    "auxiliaries__semi_aspectual_1",
    "auxiliaries__semi_aspectual_2",
    "binding_principle_a__c_command",
    "binding_principle_a__monomorphemic",
    "complementive__ditransitive",
    "complementive__intransitive",
    "complementive__position_adverb",
    "complementive__position_verb",
    "complementive__transitive",
    "crossing_dependencies__cross_dependency",
    "determiners__geen_expletive",
    "determiners__geen_scrambling_1",
    "determiners__geen_scrambling_2",
    "determiners__negative_polarity",
    "extraposition__adjectival_adverbial",
    "extraposition__adjectival_supplementive",
    "extraposition__argument_nominal",
    "finite_argument_clause__complementizer",
    "finite_argument_clause__perception_dat",
    "finite_argument_clause__perception_of",
    "finite_argument_clause__position",
    "finite_argument_clause__sluicing_1",
    "finite_argument_clause__sluicing_2",
    "infinitival_argument_clause__bare_verb_cluster",
    "infinitival_argument_clause__bare_verb_type_1",
    "infinitival_argument_clause__bare_verb_type_2",
    "infinitival_argument_clause__bare_verb_type_3",
    "infinitival_argument_clause__om_te",
    "infinitival_argument_clause__te_om_te_difference_1",
    "infinitival_argument_clause__te_om_te_difference_2",
    "infinitival_argument_clause__te_transparant_split",
    "infinitival_argument_clause__verb_type",
    "nominalization__type_inf_1",
    "nominalization__type_inf_2",
    "parasitic_gaps__scrambling",
    "parasitic_gaps__structure_type_1",
    "parasitic_gaps__structure_type_2",
    "parasitic_gaps__structure_type_3",
    "passive__aci",
    "passive__ditransitive_1",
    "passive__ditransitive_2",
    "passive__impersonal",
    "quantifiers__universal_difference_agreement_plural",
    "quantifiers__universal_difference_agreement_singular",
    "r_words__adverbial",
    "r_words__weak_proform",
    "relativization__island",
    "relativization__pied_piping",
    "relativization__resumptive_prolepsis",
    "topicalization__island",
    "topicalization__question_similarity_1",
    "topicalization__question_similarity_2",
    "topicalization__resumptive_prolepsis",
    "verb_second__order_embedded",
    "verb_second__order_main",
    "wh_movement__filler_effect_gap",
    "wh_movement__filler_effect_no_gap",
    "wh_movement__hierarchy",
    "wh_movement__question_formation",
    "wh_movement__stranding_1",
    "wh_movement__stranding_2",
    "wh_movement_restrictions__bridge_verb_1",
    "wh_movement_restrictions__bridge_verb_2",
    "wh_movement_restrictions__island_1",
    "wh_movement_restrictions__island_2",
    "wh_movement_restrictions__resumptive_prolepsis",
    "wh_movement_restrictions__superiority",
)


def describe(path: str) -> SourceFile:
    name = stem(path)
    return SourceFile(suite=f"blimp_nl_{name}", path=f"{name}.jsonl", source_path=f"{name}.jsonl",
                      language="nl", paradigm=name, group=name.partition("__")[0])


def _listing() -> list[SourceFile]:
    return [SourceFile(**{**vars(describe(name)), "sha256": "", "pairs": 100})
            for name in PARADIGMS]


BLIMP_NL = DataSet(
    name="blimp_nl", title="BLiMP-NL", citation=CITATION,
    short_citation="Suijkerbuijk et al., 2025", paper_url="https://doi.org/10.1162/coli_a_00559",
    licence="unrecorded", repository="jmichaelov/blimp_nl", commit="",
    download="https://huggingface.co/datasets/{repository}/resolve/{commit}/{path}",
    languages=("nl",), read=RECORDS.read, describe=describe,
    shared_folder="multilingual/blimp_nl", shared_glob="*.jsonl", good_label="sentence_good",
    bad_label="sentence_bad", group_label="phenomenon", listing=_listing)
