"""Errors raised by syntaxgym-helm: each one says where the problem is and what to do."""

from __future__ import annotations

from dataclasses import dataclass


class SyntaxGymError(Exception):
    """Base class of every error this package raises on purpose."""


@dataclass
class SuiteError(SyntaxGymError):
    """A suite, or a formula in it, is malformed.

    ``file`` is the suite's path (or another label for where it came from), ``path`` a JSON path
    inside it such as ``items[3].conditions[1].regions[2]``, ``column`` a 1-based column inside a
    formula, and ``hint`` a sentence that says how to fix it.
    """

    message: str
    file: str | None = None
    path: str | None = None
    column: int | None = None
    hint: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        where = ":".join(part for part in (self.file, self.path) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.column is not None:
            text += f" (column {self.column})"
        if self.hint:
            text += f". {self.hint}"
        return text

    def located(self, *, file: str | None = None, path: str | None = None) -> SuiteError:
        """Return a copy placed in ``file`` and, as a prefix of its own path, ``path``."""
        joined = self.path
        if path:
            joined = f"{path}.{self.path}" if self.path else path
        return type(self)(self.message, file or self.file, joined, self.column, self.hint)


class FormulaError(SuiteError):
    """A prediction formula cannot be parsed, or names something its suite does not have."""


class EvaluationError(SyntaxGymError):
    """A formula could not be evaluated for an item, e.g. it needs the mean of an empty region."""


class AlignmentError(SyntaxGymError):
    """A model's tokens could not be mapped to a sentence's regions without guessing."""


class SuiteFileError(SuiteError):
    """A suite or config file cannot be read: missing, not a regular file, or too large."""

    PREFIX = "cannot read the file: "

    @classmethod
    def because(cls, reason: str, file: str, hint: str) -> SuiteFileError:
        return cls(cls.PREFIX + reason, file, hint=hint)

    @property
    def reason(self) -> str:
        """Why, without the file: e.g. ``it is a named pipe (FIFO), not a regular file``."""
        return self.message.removeprefix(self.PREFIX)


def clip(text: str, limit: int = 300) -> str:
    """``text`` cut to about ``limit`` characters for a message or a log line: its start and end
    with the number of characters left out between, e.g. a prompt of 70,000 characters that a
    window service truncated (a log line must stay readable, and its cost bounded)."""
    if len(text) <= limit:
        return text
    head = max(1, limit * 2 // 3)
    tail = max(1, limit - head)
    return f"{text[:head]}[... {len(text) - head - tail:,} characters ...]{text[-tail:]}"
