"""Evaluating a JSONNET suite config, with imports confined to the config's own folder.

A config may ``import`` (or ``importstr``) files under its own folder, e.g. shared lexicons in
``.libsonnet`` files; an import that leads outside it, by ``..``, an absolute path or a symbolic
link, is refused, so that a config copied with its folder is complete and generating a suite
never reads anything else on the machine.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syntaxgym_helm.core.errors import SuiteError, SuiteFileError
from syntaxgym_helm.core.files import read_regular_file

#: Jsonnet's recursion limit (its default, stated so it cannot change under us).
MAX_STACK = 500


@dataclass(frozen=True)
class LoadedConfig:
    """A config file evaluated to JSON."""

    path: Path
    data: Any
    #: Files the config imported, relative to its folder, in the order first imported.
    imports: tuple[str, ...]

    @property
    def sha256(self) -> str:
        """Hash of the evaluated config (imports included): what the suite is generated from.

        Hashing the evaluated JSON, not the source text, means comments and formatting do not
        change it, while any change that can change the suite does."""
        canonical = json.dumps(self.data, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass
class _ConfinedImporter:
    """Jsonnet's import callback: files under ``root`` only."""

    root: Path
    imported: list[str] = field(default_factory=list)
    refused: SuiteError | None = None

    def __call__(self, base_dir: str, relative: str) -> tuple[str, bytes]:
        importer = Path(base_dir or ".")
        target = (importer / relative).resolve()  # resolves '..' and symbolic links
        if not target.is_relative_to(self.root):
            self.refused = SuiteError(
                f"import {relative!r} leads outside the config's folder ({target} is not under "
                f"{self.root})", hint="configs may import only files in their own folder: "
                "copy the file there")
            raise PermissionError(self.refused.message)
        try:
            content = read_regular_file(target)  # a pipe or a device is refused, not read
        except SuiteFileError as exc:
            name_hint = "check the file name (imports are relative to the importing file)"
            self.refused = SuiteError(f"cannot read import {relative!r}: {exc.reason}",
                                      hint=exc.hint if target.exists() else name_hint)
            raise OSError(self.refused.message) from None
        name = target.relative_to(self.root).as_posix()
        if name not in self.imported:
            self.imported.append(name)
        return str(target), content


def load_config(path: str | Path) -> LoadedConfig:
    """Evaluate the JSONNET config at ``path``; raise :class:`SuiteError` naming the file."""
    import _jsonnet  # the `jsonnet` package; imported here so that suites load without it

    config = Path(path)
    source = str(config)
    # Read here, not by jsonnet, so that a pipe or a device is refused (SuiteFileError).
    try:
        config_text = read_regular_file(config).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"the config is not UTF-8 text (byte {exc.start})", source,
                         hint="save it as UTF-8") from None
    root = config.resolve().parent
    importer = _ConfinedImporter(root)
    try:
        text = _jsonnet.evaluate_snippet(str(config.resolve()), config_text,
                                         import_callback=importer, max_stack=MAX_STACK)
    except RuntimeError as exc:
        if importer.refused is not None:
            raise importer.refused.located(file=source) from None
        raise _jsonnet_error(str(exc), source) from None
    return LoadedConfig(config, json.loads(text), tuple(importer.imported))


def _jsonnet_error(text: str, source: str) -> SuiteError:
    """Jsonnet's message (``RUNTIME ERROR: ...`` then a stack trace) as a located error."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    first = lines[0] if lines else "the config could not be evaluated"
    for prefix in ("RUNTIME ERROR: ", "STATIC ERROR: "):
        first = first.removeprefix(prefix)
    trace = [line for line in lines[1:] if line != "During manifestation"]
    hint = f"at {trace[0]}" if trace else None
    return SuiteError(f"JSONNET error: {first}", source, hint=hint)
