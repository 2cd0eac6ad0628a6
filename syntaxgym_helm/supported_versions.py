"""The releases of torch, transformers and gguf the plugin supports, checked where it starts.

:data:`SUPPORTED` holds the range of each, exactly the ranges ``make test-compat`` passed (the
oldest and newest release of each range, in every combination: docs/install.md) and the ranges
``pyproject.toml`` declares (``tests/test_supported_versions.py`` keeps the two equal). pip
enforces them when it installs the plugin; an environment changed afterwards (a newer torch
installed over it, say) is refused where the plugin starts (:func:`refuse_unsupported`: HELM
loading the plugin, ``syntaxgym-helm``) and where a scoring client is made
(:func:`require_supported`), with one line naming what is installed and what is supported, before
anything is scored. Outside the ranges nothing has been checked: the engine hands transformers'
models their past keys and values and reads GGUF files through APIs that change between releases.

Why each bound (what ``make test-compat``'s tests found below each range):

- torch ``2.8`` to ``2.15``: the oldest and newest releases tested (transformers 5.23 itself
  needs 2.6 or later; 2.6 and 2.7 are untested);
- transformers ``5.23`` to ``5.24``: the engine's own use of transformers (a ``DynamicCache`` of
  past keys and values, handed under the keyword the model's forward declares: ``cache`` from
  5.24, ``past_key_values`` before) scores as plain transformers from 5.0 on, but transformers'
  conversion of a GGUF file's tokenizer, which the embedded models go through, changes their
  scores before 5.23: it ignores the file's ``add_bos_token`` (HELM's client then scores the
  embedded Gemma-3-270M without ``<bos>``), up to 5.16 at least it reads SmolLM2's end-of-text
  token as ``<|im_start|>``, and in 5.0 the saved copy of the converted tokenizer tokenizes
  otherwise; 5.24 is the newest release;
- gguf ``0.16.2`` to ``0.19``: releases before 0.16.2 know no ``gemma3`` architecture
  (transformers cannot load the embedded Gemma-3-270M), and those before 0.14 read a file with
  ``ndarray.newbyteorder``, which numpy 2 removed; 0.19 is the newest release.

Reading versions needs neither torch nor transformers imported (package metadata only).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

#: Package -> the releases supported (PEP 440 specifiers, as in ``pyproject.toml``).
SUPPORTED: dict[str, str] = {
    "torch": ">=2.8,<2.16",
    "transformers": ">=5.23,<5.25",
    "gguf": ">=0.16.2,<0.20",
}

#: Packages that may be absent (``gguf`` comes with the ``models`` extra).
OPTIONAL = frozenset({"gguf"})


class UnsupportedVersionError(RuntimeError):
    """A release of torch, transformers or gguf outside :data:`SUPPORTED` is installed."""


def installed_version(package: str) -> str | None:
    """The installed release of ``package`` (from its metadata), None when it is absent."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def problems(installed: Callable[[str], str | None] | None = None,
             supported: Mapping[str, str] = SUPPORTED) -> list[str]:
    """Each package whose installed release (``installed(package)``, default
    :func:`installed_version`) is outside its supported range (or absent, where it is required),
    as ``"torch 2.16.0 (supported: >=2.8,<2.16)"``; empty when all fit."""
    installed = installed or installed_version
    found = []
    for package, specifier in supported.items():
        have = installed(package)
        if have is None:
            if package not in OPTIONAL:
                found.append(f"{package} not installed (supported: {specifier})")
            continue
        try:
            fits = Version(have) in SpecifierSet(specifier)
        except InvalidVersion:
            fits = False
        if not fits:
            found.append(f"{package} {have} (supported: {specifier})")
    return found


def message(found: list[str]) -> str:
    """The one line that refuses an environment with ``found`` problems."""
    wanted = " ".join(f"'{package}{specifier}'" for package, specifier in SUPPORTED.items())
    return (f"syntaxgym-helm does not run with {'; '.join(found)}: install supported releases "
            f"(pip install {wanted}) and start again")


def require_supported(installed: Callable[[str], str | None] | None = None) -> None:
    """Raise :class:`UnsupportedVersionError` (one line) where an installed release is outside
    :data:`SUPPORTED`; for code that scores (the clients), before it loads a model."""
    found = problems(installed)
    if found:
        raise UnsupportedVersionError(message(found))


def refuse_unsupported() -> None:
    """Stop the process with the one line (exit status 1) where an installed release is outside
    :data:`SUPPORTED`: where the plugin starts (HELM catches a plugin's exceptions and would go
    on without it, so this exits instead)."""
    found = problems()
    if found:
        raise SystemExit(message(found))
