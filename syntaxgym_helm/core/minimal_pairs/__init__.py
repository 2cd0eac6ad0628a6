"""Minimal pairs as SyntaxGym suites, for every data set: BLiMP (English), CLAMS (English,
French, German, Hebrew, Russian), RuBLiMP (Russian), TurBLiMP (Turkish) and SLING (Mandarin).

A pair (good and bad sentence, id, paradigm, language, and where the data set marks them, the
critical words) becomes a two-condition item (``good``, ``bad``) whose regions say where the two
sentences differ, with the whole-sentence comparison ``(*;%good%) < (*;%bad%)`` as prediction 0;
each paradigm file becomes one suite ``<data set>_<paradigm>``. docs/multilingual.md describes the
rules, names and counts.

- :mod:`.regions`: one pair's sentences cut into the regions prefix, critical, next_word, rest;
- :mod:`.dataset`: a data set (source, languages, reader) and its files;
- :mod:`.convert`: a file to a suite, every pair converted or reported;
- :mod:`.fetch`: a suite name to a converted suite (offline folder, cache, checked download);
- :mod:`.catalogue`: every data set by name;
- :mod:`.clams`, :mod:`.rublimp`, :mod:`.turblimp`, :mod:`.sling`: the readers (BLiMP's is in
  :mod:`syntaxgym_helm.core.blimp`).
"""
