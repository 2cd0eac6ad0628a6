"""Where the BLiMP data comes from: the pinned commit, the download address, and for each of the
67 paradigms its field, its phenomenon (``linguistics_term``) and the SHA-256 of its JSONL file.

The sums were computed from the files at commit ``BLIMP_COMMIT`` (identical, blob for blob, to that
commit's ``data/`` folder); a download or an offline copy that does not match is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

BLIMP_COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
BLIMP_URL = ("https://raw.githubusercontent.com/alexwarstadt/blimp/"
             f"{BLIMP_COMMIT}/data/{{uid}}.jsonl")
#: A BLiMP suite is named ``blimp_<UID>``.
SUITE_PREFIX = "blimp_"
CITATION = ("Warstadt, Parrish, Liu, Mohananey, Peng, Wang, Bowman (2020). BLiMP: The Benchmark "
            "of Linguistic Minimal Pairs for English. TACL 8:377-392. "
            "https://doi.org/10.1162/tacl_a_00321 (data CC-BY 4.0)")


@dataclass(frozen=True)
class Paradigm:
    """One BLiMP paradigm (1,000 pairs): its UID, field, phenomenon and source file's SHA-256."""

    uid: str
    field: str
    linguistics_term: str
    sha256: str

    @property
    def field_group(self) -> str:
        """The paper's field (morphology, syntax, semantics, syntax_semantics): ``field``, except
        that principle_A_case_2's data files write ``syntax/semantics``."""
        return self.field.replace("/", "_")

    @property
    def phenomenon(self) -> str:
        """The paper's phenomenon (its 12 groups): ``linguistics_term``, except that the data
        files call the two animate_subject paradigms ``s-selection`` while the paper (and its
        models_summary.jsonl) counts them under ``argument_structure``."""
        return _PAPER_PHENOMENA.get(self.uid, self.linguistics_term)

    @property
    def suite_name(self) -> str:
        return f"{SUITE_PREFIX}{self.uid}"

    @property
    def url(self) -> str:
        return BLIMP_URL.format(uid=self.uid)


_PAPER_PHENOMENA = {"animate_subject_passive": "argument_structure",
                    "animate_subject_trans": "argument_structure"}

_PARADIGMS = (
    Paradigm("adjunct_island", "syntax", "island_effects",
             "ecc71c452516de03deeb9262b4203e45220dc52727327a08eef07c79c01eac8b"),
    Paradigm("anaphor_gender_agreement", "morphology", "anaphor_agreement",
             "fd7d6e47196fa1310a251d3aa88ae9a62bb64d3cec35fc02617229d5799767e1"),
    Paradigm("anaphor_number_agreement", "morphology", "anaphor_agreement",
             "05c16b8bfe4feb5b3552dc2c53d1742ce0c91d9a1c896684335bdddd4373cc9b"),
    Paradigm("animate_subject_passive", "syntax", "s-selection",
             "245e91961cf597150244c3945c6d0033e691b27ba6cf298c62920d355426e70c"),
    Paradigm("animate_subject_trans", "syntax", "s-selection",
             "a7bffeda200f648c33dd215d91d8f5756fcd1e3f410bab467f1ed9235f215850"),
    Paradigm("causative", "syntax", "argument_structure",
             "2e1006cc24094a3049586888105b22181d77e09e11dea65a326b49977bb366f1"),
    Paradigm("complex_NP_island", "syntax", "island_effects",
             "1c92472731dd9a21eb222d64bee756042a3763c3797b5283d5b84ab8e3cbb74c"),
    Paradigm("coordinate_structure_constraint_complex_left_branch", "syntax", "island_effects",
             "47e0e04efeb320449a8eb2ac722b895041a8609580fec2880dbc719f50fba194"),
    Paradigm("coordinate_structure_constraint_object_extraction", "syntax", "island_effects",
             "d01c27a7a893f3ec071a7913efa504d297671d86a987f26ddb565de914db2fd7"),
    Paradigm("determiner_noun_agreement_1", "morphology", "determiner_noun_agreement",
             "f48065fd760d0fd1a895012860d38bdf3c2ac115cd221e521684cc430c0f1855"),
    Paradigm("determiner_noun_agreement_2", "morphology", "determiner_noun_agreement",
             "8ae7eff7c7bd384ff5ef3113984834f4d78b34559203aa9d5cb14ea8394291a9"),
    Paradigm("determiner_noun_agreement_irregular_1", "morphology", "determiner_noun_agreement",
             "4f350e88db9e29e53ae96f1f0b5991c7809fd4fd403190907330b721e1e6e264"),
    Paradigm("determiner_noun_agreement_irregular_2", "morphology", "determiner_noun_agreement",
             "d688af0ccd0614d24a936e0929276784f37554f3ad3e247c3bade8dcaa9099df"),
    Paradigm("determiner_noun_agreement_with_adj_2", "morphology", "determiner_noun_agreement",
             "8d2828d7dfbfc3f7191024514060fedb033ea2e232304f63448c33051a85d2b3"),
    Paradigm("determiner_noun_agreement_with_adj_irregular_1", "morphology", "determiner_noun_agreement",
             "1f4c6e42a48f4220afec629679641479feac3883cd7fa346d9e9e129cd7e8f55"),
    Paradigm("determiner_noun_agreement_with_adj_irregular_2", "morphology", "determiner_noun_agreement",
             "aa3f297a7ce0c03b5fc00458834f89e54eb855973be098497f766a390b4bc669"),
    Paradigm("determiner_noun_agreement_with_adjective_1", "morphology", "determiner_noun_agreement",
             "2c3de4e7b7aea499fb7cf1b23b9c3b63662289880f991b9ffabe5ceb94cf7430"),
    Paradigm("distractor_agreement_relational_noun", "morphology", "subject_verb_agreement",
             "37c1553f4c6594b162256edce0f6b40bad1898b311c8aaa69605b526b6494a34"),
    Paradigm("distractor_agreement_relative_clause", "morphology", "subject_verb_agreement",
             "854728b6db8f23f12583f7332b654835351eaedb50783e6f2a3bf6c101b8c422"),
    Paradigm("drop_argument", "syntax", "argument_structure",
             "e262339a262a57a8f56dc41941ee1dc32c62eb97054b27d33cd8c356a6e62064"),
    Paradigm("ellipsis_n_bar_1", "syntax", "ellipsis",
             "3cc0bcf91631a4476ce573ea9dbf9627d52efbe071c26019e2c2448b68769d09"),
    Paradigm("ellipsis_n_bar_2", "syntax", "ellipsis",
             "3dfc2b378ea4867186917ec9cce5ce927e4d3bb6addf018bc31b870dd2aa8474"),
    Paradigm("existential_there_object_raising", "syntax_semantics", "control_raising",
             "3781bfd54ec1208fc634f4d365189f948ec246526a7345b5148dd3ab6023ff4f"),
    Paradigm("existential_there_quantifiers_1", "semantics", "quantifiers",
             "4bd0f6dee3c1824b51b0dafb9fce2b00933e8053fcd4a7b99b6202e1b8b49f9e"),
    Paradigm("existential_there_quantifiers_2", "semantics", "quantifiers",
             "b1a80f4ebebae90a90927259f95b680059020e6bb4e38e64a41eb8e53bc3f617"),
    Paradigm("existential_there_subject_raising", "syntax_semantics", "control_raising",
             "7c6f5b13225f73a777755c1948beef5cfa31d135ae8a0e7ba8853d256fbece23"),
    Paradigm("expletive_it_object_raising", "syntax_semantics", "control_raising",
             "15ed3a52c978ecfe5eda7f64b0304b5bd133439cccb2c97fde20834f39874c93"),
    Paradigm("inchoative", "syntax", "argument_structure",
             "d9389a7130ca84c6f920c9d892cc60c1b20f378d28e7041b1c53ae589fc84f1d"),
    Paradigm("intransitive", "syntax", "argument_structure",
             "9af9f3f30c891cd21623922b62fd97685552b4ae94a6cfd5617a5f0cb0f731b3"),
    Paradigm("irregular_past_participle_adjectives", "morphology", "irregular_forms",
             "5e490be0723989499391ac14d11b3bb6677f4b470514486b2db3fbfe76d56b3c"),
    Paradigm("irregular_past_participle_verbs", "morphology", "irregular_forms",
             "75a990117c1a403d3b479e0fbe170f6919c2408def738ffcea8c62b49b70a555"),
    Paradigm("irregular_plural_subject_verb_agreement_1", "morphology", "subject_verb_agreement",
             "0066174143671bffa54232d89254d14221afab666273edfefdfb625fbb75e226"),
    Paradigm("irregular_plural_subject_verb_agreement_2", "morphology", "subject_verb_agreement",
             "9b22db814e7b7251f4abafe8beb9616f2f46eaa58f7cdb701cbc737cc8f1a124"),
    Paradigm("left_branch_island_echo_question", "syntax", "island_effects",
             "7dadbe3c5a5ceadb78b9408807ac88230ddd748abfe8de8121f064e2bce94ad8"),
    Paradigm("left_branch_island_simple_question", "syntax", "island_effects",
             "e2a64b8a1b7b8d94f931018cf9325836e9c79953a01379233da255eac5e8cd71"),
    Paradigm("matrix_question_npi_licensor_present", "semantics", "npi_licensing",
             "657c9d6e6d50a9cd651881fcbc57cef2fd998611f6f53158ed05e48822fcd2b5"),
    Paradigm("npi_present_1", "semantics", "npi_licensing",
             "9aa85dc5c2b0d85ea51f21db50d6d327ab5b45d1669e386d54b1360d3ac954af"),
    Paradigm("npi_present_2", "semantics", "npi_licensing",
             "52fcfa230a40ae27998273cc08ecd062aad17025c92389df3404a85ed519909b"),
    Paradigm("only_npi_licensor_present", "semantics", "npi_licensing",
             "475c6595187a32e4dcfb868d3db90394e89669a94a9312ebd60f88dad1665f1c"),
    Paradigm("only_npi_scope", "syntax_semantics", "npi_licensing",
             "ca1f0671643e37936515f02125036bc2904ab9b35c4689b0e7a3ea3914e571f6"),
    Paradigm("passive_1", "syntax", "argument_structure",
             "e9374307bca5c24e9df18597a0859f7fb5ca4cfe5f136ec894d1ba69f4c90116"),
    Paradigm("passive_2", "syntax", "argument_structure",
             "4d49e438185bed4122a252dd9ee69bc8eccb2fe6c1b09ccc78198fd925fed8c5"),
    Paradigm("principle_A_c_command", "syntax_semantics", "binding",
             "74c8111666542c797dee1c38c9e432b0b65751dfa0faa51874a990f2cbfc76fc"),
    Paradigm("principle_A_case_1", "syntax_semantics", "binding",
             "7efb5246fe315dc2cf56b80739783cffcddee9e52650716cf5aa0f6987f7644d"),
    Paradigm("principle_A_case_2", "syntax/semantics", "binding",
             "5de6db4c21a8433bc1f1030e81d5ee151efce02078460f7de7ca5e9566afd914"),
    Paradigm("principle_A_domain_1", "syntax_semantics", "binding",
             "2276dc35a51396c7d11a401e378e0f4b31cd10d7916c73e9a361703cb96eddc5"),
    Paradigm("principle_A_domain_2", "syntax_semantics", "binding",
             "9d14e5ae911fb8ddf571484ef2d6a6e6a053765c1c6d34253aec2c11f7d7306a"),
    Paradigm("principle_A_domain_3", "syntax_semantics", "binding",
             "a0d66b9d8541ab1df08f629161c6c4e8bca3aa2693eaa342edd2097e6b579bdd"),
    Paradigm("principle_A_reconstruction", "syntax_semantics", "binding",
             "65dc403c4d6e9a609f2c4cc2ec6c8baa05cf6fce89b920a816b0d9932204b2a3"),
    Paradigm("regular_plural_subject_verb_agreement_1", "morphology", "subject_verb_agreement",
             "1a18d94062c8e792c0a200a3b00dff0e051a92bb084c05e9b5e5c73bee32a620"),
    Paradigm("regular_plural_subject_verb_agreement_2", "morphology", "subject_verb_agreement",
             "e5b4668811e63b00ac4c9569cb9553281a39c21df43256905ad78e59ae24942c"),
    Paradigm("sentential_negation_npi_licensor_present", "semantics", "npi_licensing",
             "c43405aca13ba4aa6ad87f9b051e4ba5fc458f24e683cfe0af23e6e09ec7268b"),
    Paradigm("sentential_negation_npi_scope", "syntax_semantics", "npi_licensing",
             "6c341ccc39c94bea45c0412986751bf2f6eca48626728e30e23d2b6a22c8b949"),
    Paradigm("sentential_subject_island", "syntax", "island_effects",
             "a286b67cc5912aafeb06750b38923abf3338786ffa4309e0a6a07b1dbe2444bd"),
    Paradigm("superlative_quantifiers_1", "semantics", "quantifiers",
             "bebc5c5ff28cf226cc35293c60cde1fcf7565a7b58cb219d01ac8908b952a497"),
    Paradigm("superlative_quantifiers_2", "semantics", "quantifiers",
             "4bef08f3e6bd3fbb46021dda34000f3c00222c5576babe4882a8541f6820a106"),
    Paradigm("tough_vs_raising_1", "syntax_semantics", "control_raising",
             "8eb3a1ecbdbd969c5b77e2f85b12a39d33723bdc58d673e5067bb456da91d0e5"),
    Paradigm("tough_vs_raising_2", "syntax_semantics", "control_raising",
             "a6db2f24a8aee0c90a9be63e6bb6787fe04e990c518761115f69f27c7438b5ae"),
    Paradigm("transitive", "syntax", "argument_structure",
             "48de2025571897c7590659c793d2d1ce85c247808d4199bad60f66cf2eb179ef"),
    Paradigm("wh_island", "syntax", "island_effects",
             "77824ca8c0008fb7a204e785ca2dcee1b2803f666bb545bd95cb8a51e04f1a4c"),
    Paradigm("wh_questions_object_gap", "syntax", "filler_gap_dependency",
             "685c74eb8c199f30a24bba1bfabf9d9dff7962a64430e62b9b5f61d5369241ff"),
    Paradigm("wh_questions_subject_gap", "syntax", "filler_gap_dependency",
             "3c33e4efc7182824211ff3288694cf010f4ce84f85c8df67410d784139c722b3"),
    Paradigm("wh_questions_subject_gap_long_distance", "syntax", "filler_gap_dependency",
             "985bae202dbc5566b9b5c51bd77dd9d1dbcd87e0f38e008c34a11d7aa07db788"),
    Paradigm("wh_vs_that_no_gap", "syntax", "filler_gap_dependency",
             "6a25d0d1499e9f522696a62ce9dba8c49f58c5446fddc6d852bf562d1016163c"),
    Paradigm("wh_vs_that_no_gap_long_distance", "syntax", "filler_gap_dependency",
             "968faf59602a67f9cfd7c2e91a314a3f7342fd5daf41c21cadd25288fc85fdcf"),
    Paradigm("wh_vs_that_with_gap", "syntax", "filler_gap_dependency",
             "56f1ca988a8ca368234f12359792c414fdfec2891154e3f8ce6404da1d3f3212"),
    Paradigm("wh_vs_that_with_gap_long_distance", "syntax", "filler_gap_dependency",
             "3cb19100d6384264e512801e96c20e172a3c0c7778276b80ed60c65e97b86ab5"),
)

#: The 67 paradigms by UID, in alphabetical order.
PARADIGMS: dict[str, Paradigm] = {paradigm.uid: paradigm for paradigm in _PARADIGMS}


def paradigm_of_suite(name: str) -> Paradigm | None:
    """The paradigm a suite name ``blimp_<UID>`` stands for; None for any other name."""
    if not name.startswith(SUITE_PREFIX):
        return None
    return PARADIGMS.get(name[len(SUITE_PREFIX):])

