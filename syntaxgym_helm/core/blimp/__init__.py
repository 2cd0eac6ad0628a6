"""BLiMP (Warstadt et al. 2020) as SyntaxGym suites: each paradigm's 1,000 minimal pairs become a
suite ``blimp_<UID>`` of two-condition items (``good``, ``bad``) whose regions say where the two
sentences differ. docs/blimp.md describes the rules and what is compared.

- :mod:`.regions`: one pair's sentences split into the regions prefix, critical, next_word, rest;
- :mod:`.convert`: a paradigm's JSONL into a suite, every pair converted or reported;
- :mod:`.sources`: the pinned commit, the download address, each paradigm's field, phenomenon and
  file SHA-256;
- :mod:`.fetch`: a suite name to a converted suite file (offline folder, cache, checked download);
- :mod:`.paper`: the paper's per-paradigm accuracies and human agreement, and leaderboard groups.
"""
