"""Minimal pairs as SyntaxGym suites, for every data set: BLiMP (English), CLAMS (English,
French, German, Hebrew, Russian), RuBLiMP (Russian), TurBLiMP (Turkish) and SLING (Mandarin).

A pair (good and bad sentence, id, paradigm, language, and where the data set marks them, the
critical words) becomes a two-condition item (``good``, ``bad``) whose regions say where the two
sentences differ, with the whole-sentence comparison ``(*;%good%) < (*;%bad%)`` as prediction 0;
each paradigm file becomes one suite ``<data set>_<paradigm>``. docs/multilingual.md and
docs/blimp.md describe the rules, names and counts; docs/adding_a_dataset.md how to add one.

The layer, the same for every data set:

- :mod:`.regions`: one pair's sentences cut into the regions prefix, critical, next_word, rest;
- :mod:`.dataset`: a data set's declaration (source, languages, reader, groups, paper) and its
  files; :mod:`.columns`: the reader of files that are rows with columns, declared;
- :mod:`.convert`: a file to a suite, every pair converted or reported;
- :mod:`.fetch`: a suite name to a converted suite (offline folder, cache, checked download);
- :mod:`.catalogue`: every data set by name (their one registration);
- :mod:`.papers`: the papers' figures, as each data set declares them.

The data sets, one module each: :mod:`.blimp` (with its own cut, :mod:`.blimp_cut`, and its
paper's figures, :mod:`.blimp_paper`), :mod:`.clams`, :mod:`.rublimp`, :mod:`.turblimp`,
:mod:`.sling`.
"""
