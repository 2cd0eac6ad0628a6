"""A bound on the length of HELM's log lines.

HELM logs the prompts of a run's first instance in full ("Sample prompts"), one log line per line
of the prompt. A prompt that a window service truncated to the model's context is one line of up
to the context's length (over a hundred thousand characters for a long context), one unreadable
line that terminals and log viewers choke on. :func:`install_log_line_limit` (called where a run
starts: :mod:`.registration`) puts a filter on HELM's logger that keeps the start and end of any
message longer than :data:`MAX_LOG_LINE` characters and says how much was left out; nothing else
changes.
"""

from __future__ import annotations

import logging

from syntaxgym_helm.core.errors import clip

#: The longest message HELM's logger writes whole (HELM's longest ordinary lines, a run spec,
#: are about 2,000 characters).
MAX_LOG_LINE = 8000


class LogLineLimit(logging.Filter):
    """Shortens every record's message to about :data:`MAX_LOG_LINE` characters."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and len(record.msg) > MAX_LOG_LINE and not record.args:
            record.msg = clip(record.msg, MAX_LOG_LINE)
        return True


def install_log_line_limit(logger_name: str = "helm") -> None:
    """Put the filter on HELM's logger (once)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(existing, LogLineLimit) for existing in logger.filters):
        logger.addFilter(LogLineLimit())
