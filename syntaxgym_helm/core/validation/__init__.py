"""Validation of suite JSON: every problem found, each located by file and JSON path.

:func:`check_suite` walks decoded JSON once, element by element (dacite checks each element's
fields and types; the walk adds the list indices dacite cannot know), and returns a
:class:`SuiteReport` holding the built :class:`~syntaxgym_helm.core.suite_data.Suite` (when there
were no errors), every :class:`~syntaxgym_helm.core.errors.SuiteError` found and the warnings for
what it repaired or read from an older format (extra spaces in region content, which real suites
have, are normalised, not rejected). :func:`check_suite_file` reads the file first.

An element with an error is left out of the checks that depend on it (an item with a broken
region is not compared with the other items, a formula naming an unknown condition is not
looked up in the items), so each mistake is reported once, where it is, and not again as the
knock-on problems it causes.

Modules: :mod:`.suite_check` (the top level and files), :mod:`.structure` (meta, regions, items),
:mod:`.predictions` (formulas), :mod:`.checker` (the report and error vocabulary) and
:mod:`.raw` (the elements' shapes for dacite).
"""

from syntaxgym_helm.core.validation.checker import MAX_ERRORS, SuiteReport
from syntaxgym_helm.core.validation.suite_check import check_suite, check_suite_file

__all__ = ["MAX_ERRORS", "SuiteReport", "check_suite", "check_suite_file"]
