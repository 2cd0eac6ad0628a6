"""HELM glue: what makes a SyntaxGym suite a HELM benchmark, and nothing else.

- :mod:`.scenario`: a suite as HELM instances (one per item, its conditions as references);
- :mod:`.run_spec`: the ``syntaxgym`` run spec function and the ``model=`` run expander;
- :mod:`.metric`: HELM's reference metric over one item's requests, built on
  :mod:`syntaxgym_helm.core.item_evaluation`;
- :mod:`.leaderboard`: the leaderboard schema and the run-entry files.
"""
