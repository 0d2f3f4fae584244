"""Log output through the redactor: what ``tracekit record`` / ``replay`` print on stderr is written too.

A replay miss quotes the request where it differs from the nearest recording, and an agent may have pasted
its key into the prompt; an aiohttp traceback may show a header. ``RedactingFilter`` sits on the handlers
and replaces every secret the redactor knows (at the time the line is written) in the message and in the
exception text.
"""

from __future__ import annotations

import logging

from tracekit.redact import Redactor

_FORMATTER = logging.Formatter()


class RedactingFilter(logging.Filter):
    """Redacts each record's message, exception and stack text in place (it never drops a record)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        redact = self.redactor.redact_text
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = _FORMATTER.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def redact_logs(redactor: Redactor, logger: logging.Logger | None = None) -> RedactingFilter:
    """Put a ``RedactingFilter`` on every handler of ``logger`` (the root logger by default)."""
    redacting = RedactingFilter(redactor)
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(redacting)
    return redacting
