"""The SyntaxGym domain, with neither HELM nor torch: what a suite is and how an item is judged.

- :mod:`.suite`: suites read, checked and written (the data model itself is :mod:`.suite_data`);
- :mod:`.validation`: reading suite JSON into that model, every error located;
- :mod:`.files`, :mod:`.strict_json`: reading suite and config files safely and strictly;
- :mod:`.registry`: suites by name (Hu et al. 2020, the built-in ones), downloads and the cache;
- :mod:`.formula`: the prediction language (a parser; nothing is ``eval``-ed);
- :mod:`.alignment`: token texts to regions;
- :mod:`.region_stats`: a region's value from its tokens' surprisals;
- :mod:`.item_evaluation`: one item from its conditions' tokens and logprobs to prediction outcomes;
- :mod:`.errors`: the errors all of these raise.
"""
