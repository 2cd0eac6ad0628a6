"""Reports on finished SyntaxGym runs: read what ``helm-run`` wrote, never run a model again.

- :mod:`.runs`: find run folders and rebuild every item's
  :class:`~syntaxgym_helm.core.item_evaluation.ItemEvaluation` from ``scenario_state.json`` (the
  same scoring code the metric ran);
- :mod:`.annotate`: the suite JSON annotated with region ``metric_value``, as syntaxgym-core
  writes it;
- :mod:`.tables`: tidy per-prediction and per-region rows, written as CSV;
- :mod:`.plots`: mean region surprisal by region and condition, one panel per model (PNG);
- :mod:`.summary` and :mod:`.paper`: accuracy per suite, circuit and SG score, models as columns,
  beside the published figures of Hu et al. (2020) where the model is one of theirs;
- :mod:`.pairs_summary`: the minimal-pair data sets' runs (BLiMP, CLAMS, RuBLiMP, TurBLiMP,
  SLING): accuracy per paradigm, language, group and overall beside the papers' figures, and
  ties; :mod:`.pairs_regions` and :mod:`.pairs_plots`: where in the sentence the pairs differ and
  which region each model's preference comes from (CSV and PNG, per data set);
- :mod:`.variants`: a model beside its scoring variants (``M~bow``): both accuracies and the
  items whose verdict changes;
- :mod:`.compare`: two sets of runs side by side, flagging backends that disagree;
- :mod:`.build`: everything above for a folder of runs (``syntaxgym-helm report``).
"""
