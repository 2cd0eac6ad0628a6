"""Token-to-region alignment: which region of a SyntaxGym sentence each model token belongs to.

A SyntaxGym sentence is a list of numbered regions; its text is the non-empty region contents
joined by the suite's separator (a single space, or nothing for scripts written without spaces:
:func:`sentence_text`, :func:`region_spans`). A language model reports one surprisal per token, as
token texts in whatever form its tokenizer or server gives them. :func:`align` maps each token to
the region it belongs to, or to ``None`` when it belongs to none, so that
:mod:`syntaxgym_helm.core.region_stats` can aggregate each region's tokens.

Rules (every alignment follows them; anything else raises :class:`AlignmentError`):

1. **First byte.** A token counts for the region of the character its first non-whitespace byte
   belongs to. A token whose text straddles a region boundary (e.g. a SentencePiece piece that
   swallows the space and the start of the next region) therefore counts wholly for the earlier
   region, and a token that holds a piece of a character counts where that character is.
2. **Whitespace.** Whitespace between regions belongs to no region. A token that is only
   whitespace, or empty, counts for the region of the next non-whitespace character, because
   that is where GPT-2-style tokenizers put a space's probability too (``" 1990"`` is one token
   there, ``"▁"`` + ``"1"`` in Llama's); with no character after it, it counts for no region. An
   empty token stands between two characters, never inside one: so when a client gives a
   character split over several tokens to the last of them (as the plugin's client does), the
   empty pieces before it count where the character is. A whitespace token stands where the
   text has whitespace (or at its very start or end).
3. **Excluded (``None``).** Tokens that lie inside ``prefix`` (text the request put before the
   sentence); special tokens that do not literally occur at that point of the text (``<eos>``,
   ``</s>``, ``<s>``, ``<|endoftext|>``, ``<pad>``, ``[CLS]``, any ``<...>`` or ``<|...|>``);
   whitespace-only tokens after the end of the sentence. A token whose non-whitespace text runs
   from the prefix into the sentence is an error, not excluded: the first region would lose text.
   An empty token may stand for a special token that the prefix spells (``<|endoftext|>``):
   servers that detokenize with special tokens hidden (llama-cpp-python) return ``""`` for it.
4. **Token forms.** A token's text is read, in this order of preference, as: the exact text,
   whose leading whitespace may be absent (word-level tokens such as ``"know"``, ``"."``), or
   present where the text has none only at the start of the text or of the sentence
   (SentencePiece's dummy prefix); WordPiece ``##`` continuations; ``</w>`` word ends;
   SentencePiece (``▁`` for a space, ``<0xNN>`` byte pieces); GPT-2 byte-level vocabulary
   (``Ġ`` space, ``Ċ`` newline, one character per byte); OpenAI-style ``bytes:\\xe6\\x97``
   escapes. The last three name bytes, so a character split across tokens matches byte by byte,
   exactly.
5. **Pieces of characters and unknown words.** ``<unk>``, ``<UNK>``, ``[UNK]`` stand for one or
   more characters of one word (no whitespace). A token decoded alone, when it holds a piece of
   a character, shows that piece in one of two ways, and each is matched exactly: a run of
   U+FFFD (``�``, ``errors="replace"``, as HELM's HuggingFace client shows it) stands for bytes
   that decode to exactly that many U+FFFD; an empty token (``errors="ignore"``, as
   llama-cpp-python shows it) for bytes inside one character that decode to nothing. If the text
   can be covered in more than one way and the ways put some token in different regions, that
   is an error, never a guess (HELM's ``�`` texts can be: the metric then reads the tokens'
   exact texts from the model's tokenizer, see :mod:`syntaxgym_helm.harness.exact_texts`).
   Only when no alignment exists so: a token's text may also have lost pieces of characters at
   its ends (``" caf"`` for ``" caf"`` + the first byte of ``é``) or between two characters;
   the alignment that drops the fewest such pieces counts.
6. **Case.** Matching is exact. Only when no exact alignment exists is one retried ignoring ASCII
   case (for word-level models that lowercase); :attr:`Alignment.case_insensitive` says so.
7. **Coverage.** The tokens must cover every non-whitespace character of prefix + sentence, in
   order, and nothing more.

Matching works on the UTF-8 bytes of prefix + sentence, so byte-level tokens that split a
character are exact; offsets in results and messages are in characters.

The package, by concern:

- :mod:`.spans`: the sentence text and where each region lies in it;
- :mod:`.token_forms`: how a token's text may be read (rules 4 and 5: ``Ġ``, ``▁``, byte
  pieces, ``bytes:`` escapes, ``<unk>``, special tokens, U+FFFD runs);
- :mod:`.text`: prefix + sentence as bytes, and where a token's reading can match in it;
- :mod:`.search`: the walk of all tokens over the text, and the messages when it fails;
- :mod:`.aligner`: :func:`align` and its result, :class:`Alignment`.
"""

from syntaxgym_helm.core.alignment.aligner import Alignment, align, align_tokens
from syntaxgym_helm.core.alignment.spans import RegionLike, RegionSpan, region_spans, sentence_text
from syntaxgym_helm.core.errors import AlignmentError

__all__ = [
    "Alignment",
    "AlignmentError",
    "RegionLike",
    "RegionSpan",
    "align",
    "align_tokens",
    "region_spans",
    "sentence_text",
]
