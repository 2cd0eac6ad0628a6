"""Token-to-region alignment: which region of a SyntaxGym sentence each model token belongs to.

A SyntaxGym sentence is a list of numbered regions; its text is the non-empty region contents
joined by single spaces (:func:`sentence_text`, :func:`region_spans`). A language model reports
one surprisal per token, as token texts in whatever form its tokenizer or server gives them.
:func:`align` maps each token to the region it belongs to, or to ``None`` when it belongs to
none, so that :mod:`syntaxgym_helm.core.region_stats` can aggregate each region's tokens.

Rules (every alignment follows them; anything else raises :class:`AlignmentError`):

1. **First character.** A token counts for the region of its first non-whitespace character.
   A token whose text straddles a region boundary (e.g. a SentencePiece piece that swallows the
   space and the start of the next region) therefore counts wholly for the earlier region.
2. **Whitespace.** Whitespace between regions belongs to no region. A token that is only
   whitespace (or empty, as HELM's per-token decoding makes SentencePiece's bare ``▁``) counts for
   the region of the next non-whitespace character, because that is where GPT-2-style tokenizers
   put a space's probability too (``" 1990"`` is one token there, ``"▁"`` + ``"1"`` in Llama's);
   with no character after it, it counts for no region.
3. **Excluded (``None``).** Tokens that lie inside ``prefix`` (text the request put before the
   sentence); special tokens that do not literally occur at that point of the text (``<eos>``,
   ``</s>``, ``<s>``, ``<|endoftext|>``, ``<pad>``, ``[CLS]``, any ``<...>`` or ``<|...|>``);
   whitespace-only tokens after the end of the sentence. A token whose non-whitespace text runs
   from the prefix into the sentence is an error, not excluded: the first region would lose text.
   An empty token may stand for a special token that the prefix spells (``<|endoftext|>``):
   servers that detokenize with special tokens hidden (llama-cpp-python) return ``""`` for it.
4. **Token forms.** A token's text is read, in this order of preference, as: the exact text,
   whose leading whitespace may be absent (word-level tokens such as ``"know"``, ``"."``);
   WordPiece ``##`` continuations; ``</w>`` word ends; SentencePiece (``▁`` for a space,
   ``<0xNN>`` byte pieces); GPT-2 byte-level vocabulary (``Ġ`` space, ``Ċ`` newline, one
   character per byte); OpenAI-style ``bytes:\\xe6\\x97`` escapes. The last three name bytes, so
   a character split across tokens matches byte by byte, exactly.
5. **Wildcards.** ``<unk>``, ``<UNK>``, ``[UNK]`` stand for one or more characters of one word
   (no whitespace); runs of U+FFFD (``�``, what decoding a token that holds part of a multi-byte
   character alone gives) stand for one or more non-ASCII bytes, never a whole character (a whole
   one would have decoded); so does an empty token, which is what decoding such a token alone with
   the invalid bytes dropped gives (llama-cpp-python's ``errors="ignore"``). A wildcard covers the
   text up to where the next token matches. If the text can be covered in more than one way and
   the ways put some token in different regions, that is an error, never a guess.
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
