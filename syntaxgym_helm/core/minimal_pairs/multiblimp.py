"""MultiBLiMP 1.0 (Jumelet, Weissweiler, Nivre, Bisazza 2025): subject-verb and subject-participle
agreement in number, person and gender in 101 languages, from Universal Dependencies; one suite
per language, ``multiblimp_<ISO 639-3 code>`` (``multiblimp_nld``), as lm-evaluation-harness's
``multiblimp_<code>`` tasks.

A file ``<code>/data.tsv`` (the Hugging Face dataset ``jumelet/multiblimp``) is tab-separated with
a header (a first, unnamed column of row numbers where pandas wrote one) and one pair per row:
``sen`` is the grammatical sentence, ``wrong_sen`` the same with the agreeing word inflected
wrongly, ``head``/``swap_head`` that word on each side (the layer's marked critical words),
``phenomenon`` (``SV-#``, ``SV-G``, ``SV-P``, ``SP-#``, ``SP-G``, ``SP-P``: subject-verb or
subject-participle agreement in number, gender, person), ``lang`` (the file's language), the
grammatical and ungrammatical feature values and the treebank's record of the sentence. Pairs
are numbered by their line.

The files are not pinned here: they could not be fetched where the package was built, so no
revision or checksum is recorded and none is downloaded; an offline copy
(``$SYNTAXGYM_MULTIBLIMP_DIR/<code>/data.tsv``) is read and its SHA-256 recorded in the suite.
The table of files (``data/pairs_multiblimp.tsv``) lists the languages and pair counts of
lm-evaluation-harness 0.4.13's task README. The authors compare summed log-probabilities, and a
version normalised per token (lm-evaluation-harness's README): the sentence score ``mean``.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from syntaxgym_helm.core.minimal_pairs.columns import Columns
from syntaxgym_helm.core.minimal_pairs.dataset import DataSet, SourceFile

CITATION = ("Jumelet, Weissweiler, Nivre, Bisazza (2025). MultiBLiMP 1.0: A Massively "
            "Multilingual Benchmark of Linguistic Minimal Pairs. TACL; arXiv:2504.02768 "
            "(data CC BY 4.0)")
#: The columns of the published files; the first, unnamed one is pandas' row number.
COLUMNS = Columns(
    required=("sen", "wrong_sen", "head", "swap_head", "phenomenon", "lang"),
    optional=("", "verb", "verb_idx", "cop", "cop_idx", "child", "child_idx", "child_features",
              "child_upos", "head_idx", "head_features", "head_upos", "distance", "attractors",
              "metadata", "feature_vals", "prefix", "congruent_attractors",
              "incongruent_attractors", "num_attractors", "num_congruent_attractors",
              "num_incongruent_attractors", "has_attractors", "only_has_congruent_attractors",
              "only_has_incongruent_attractors", "sample_weight", "grammatical_feature",
              "ungrammatical_feature", "wo", "inflect_item", "agreement_certainty"),
    good="sen", bad="wrong_sen", paradigm="lang", marked=("head", "swap_head"),
    delimiters=("\t",))
#: (ISO 639-3 code, language, pairs) as lm-evaluation-harness 0.4.13's multiblimp README lists them.
LANGUAGES: tuple[tuple[str, str, int], ...] = (
    ("abk", "Abkhazian", 40),
    ("aqz", "Akuntsu", 14),
    ("sqi", "Albanian", 243),
    ("amh", "Amharic", 112),
    ("grc", "Ancient Greek", 3695),
    ("hbo", "Ancient Hebrew", 983),
    ("apu", "Apurinã", 28),
    ("hye", "Armenian", 1415),
    ("eus", "Basque", 273),
    ("bel", "Belarusian", 2570),
    ("ben", "Bengali", 21),
    ("bho", "Bhojpuri", 34),
    ("bor", "Borôro", 241),
    ("bre", "Breton", 260),
    ("bul", "Bulgarian", 2458),
    ("bua", "Buriat", 103),
    ("cat", "Catalan", 2284),
    ("chu", "Church Slavonic", 4166),
    ("xcl", "Classical Armenian", 1623),
    ("ces", "Czech", 4256),
    ("dan", "Danish", 50),
    ("nld", "Dutch", 2331),
    ("egy", "Egyptian (Ancient)", 22),
    ("eng", "English", 770),
    ("myv", "Erzya", 464),
    ("est", "Estonian", 2575),
    ("fao", "Faroese", 232),
    ("fin", "Finnish", 2570),
    ("fra", "French", 2548),
    ("glg", "Galician", 753),
    ("kat", "Georgian", 204),
    ("deu", "German", 2298),
    ("aln", "Gheg Albanian", 677),
    ("got", "Gothic", 1579),
    ("guj", "Gujarati", 7),
    ("heb", "Hebrew", 2330),
    ("azz", "H-P Nahuatl", 207),
    ("hin", "Hindi", 1447),
    ("hit", "Hittite", 50),
    ("hun", "Hungarian", 845),
    ("isl", "Icelandic", 2801),
    ("gle", "Irish", 28),
    ("ita", "Italian", 2999),
    ("quc", "K'iche'", 131),
    ("xnr", "Kangri", 86),
    ("krl", "Karelian", 260),
    ("kxh", "Karo (Ethiopia)", 120),
    ("kaz", "Kazakh", 173),
    ("kir", "Kirghiz", 185),
    ("koi", "Komi-Permyak", 43),
    ("kpv", "Komi-Zyrian", 320),
    ("lat", "Latin", 3149),
    ("lav", "Latvian", 3032),
    ("lij", "Ligurian", 254),
    ("lit", "Lithuanian", 1180),
    ("olo", "Livvi", 190),
    ("nds", "Low German", 1774),
    ("mkd", "Macedonian", 39),
    ("mar", "Marathi", 460),
    ("frm", "Middle French", 294),
    ("ell", "Modern Greek", 1096),
    ("mdf", "Moksha", 82),
    ("yrl", "Nhengatu", 720),
    ("pcm", "Nigerian Pidgin", 26),
    ("kmr", "Northern Kurdish", 544),
    ("sme", "Northern Sami", 2536),
    ("fro", "Old French", 1976),
    ("orv", "Old Russian", 4615),
    ("ota", "Ottoman Turkish", 99),
    ("fas", "Persian", 2553),
    ("xpg", "Phrygian", 50),
    ("pol", "Polish", 3272),
    ("por", "Portuguese", 3048),
    ("ron", "Romanian", 2056),
    ("rus", "Russian", 3832),
    ("san", "Sanskrit", 4442),
    ("gla", "Scottish Gaelic", 66),
    ("hbs", "Serbo-Croatian", 3286),
    ("sms", "Skolt Sami", 263),
    ("slk", "Slovak", 4145),
    ("slv", "Slovenian", 4483),
    ("spa", "Spanish", 2541),
    ("arb", "Standard Arabic", 1215),
    ("swe", "Swedish", 201),
    ("tam", "Tamil", 382),
    ("ttc", "Tektiteko", 69),
    ("tpn", "Tupinambá", 9),
    ("tur", "Turkish", 1742),
    ("uig", "Uighur", 758),
    ("ukr", "Ukrainian", 2744),
    ("hsb", "Upper Sorbian", 186),
    ("urd", "Urdu", 550),
    ("urb", "Urubú-Kaapor", 13),
    ("uzb", "Uzbek", 50),
    ("vep", "Veps", 187),
    ("wbp", "Warlpiri", 12),
    ("cym", "Welsh", 1120),
    ("hyw", "Western Armenian", 1153),
    ("wol", "Wolof", 705),
    ("sah", "Yakut", 144),
    ("nhi", "Tenango Nahuatl", 38),
)


def describe(path: str) -> SourceFile:
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    code = parts[-2] if len(parts) > 1 else PurePosixPath(path).stem
    return SourceFile(suite=f"multiblimp_{code}", path=f"{code}/data.tsv",
                      source_path=f"{code}/data.tsv", language=code, paradigm=code, group="")


def _listing() -> list[SourceFile]:
    return [SourceFile(suite=f"multiblimp_{code}", path=f"{code}/data.tsv",
                       source_path=f"{code}/data.tsv", sha256="", pairs=pairs, language=code,
                       paradigm=code, group="") for code, _, pairs in LANGUAGES]


MULTIBLIMP = DataSet(
    name="multiblimp", title="MultiBLiMP", citation=CITATION,
    short_citation="Jumelet et al., 2025", paper_url="https://arxiv.org/abs/2504.02768",
    licence="CC BY 4.0", repository="jumelet/multiblimp", commit="",
    download="https://huggingface.co/datasets/{repository}/resolve/{commit}/{path}",
    languages=tuple(code for code, _, _ in LANGUAGES), read=COLUMNS.read, describe=describe,
    shared_folder="multilingual/multiblimp", shared_glob="*/data.tsv",
    good_label="sen", bad_label="wrong_sen", language_names={
        code: name for code, name, _ in LANGUAGES}, listing=_listing,
    leaderboard_groups=lambda: [], paper_score="mean", files_label="languages")
