"""HELM glue: what makes a SyntaxGym suite a HELM benchmark, and nothing else.

- :mod:`.scenario`: a suite as HELM instances (one per item, its conditions as references tagged
  with their names);
- :mod:`.run_spec`: the ``syntaxgym`` run spec function and the ``model=`` run expander;
- :mod:`.stats`: the stats the metric emits, their values and display text (one source);
- :mod:`.metric`: HELM's reference metric over one item's requests, built on
  :mod:`syntaxgym_helm.core.item_evaluation`;
- :mod:`.schema`: the leaderboard's HELM schema, for every registered suite or for the suites run;
- :mod:`.leaderboard`: the committed schema and run-entry files, the files ``helm-summarize``
  needs for one run suite, and its tables as markdown.
"""
