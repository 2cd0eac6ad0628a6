"""Generating SyntaxGym suites from JSONNET configs: a lexicon and templates in, a suite out.

A config (``configs/suites/*.jsonnet``) declares typed lexicon entries, slots that entries fill,
one template per region and condition, sampling constraints and the predictions;
:func:`generate_suite` expands it into a validated suite, reproducibly (same config and seed,
byte-identical suite), recording its provenance in ``meta.generator``.

Modules: :mod:`.loader` (JSONNET with confined imports), :mod:`.model` (the config's data
model), :mod:`.config` (reading and checking a config, with :mod:`.reader`), :mod:`.template`
(region templates), :mod:`.candidates` (candidate sets and unsatisfiable constraints),
:mod:`.sampler` (per-item search), :mod:`.build` (the suite).
"""

from syntaxgym_helm.generate.build import (
    GENERATOR_NAME,
    GENERATOR_VERSION,
    PROVENANCE_KEY,
    GeneratedSuite,
    generate_suite,
    sentences,
)

__all__ = ["GENERATOR_NAME", "GENERATOR_VERSION", "PROVENANCE_KEY", "GeneratedSuite",
           "generate_suite", "sentences"]
