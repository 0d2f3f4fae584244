"""Log lines through the redactor (``RedactingFilter``): messages, their arguments, tracebacks and stacks."""

from __future__ import annotations

import logging

from tracekit.proxy.launch import RedactingFilter, redact_logs
from tracekit.redact import Redactor

SECRET = "tk-log-secret-55aa0c"


def _logged(redactor: Redactor, emit: object) -> str:
    """What a handler with the filter wrote while ``emit(logger)`` ran."""
    logger = logging.getLogger(f"tracekit.test.{id(redactor)}")
    logger.propagate = False
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Collect()
    logger.addHandler(handler)
    redact_logs(redactor, logger)
    redact_logs(redactor, logger)  # idempotent: one filter per handler
    try:
        assert len(handler.filters) == 1 and isinstance(handler.filters[0], RedactingFilter)
        emit(logger)  # type: ignore[operator]
    finally:
        logger.removeHandler(handler)
    return "\n".join(lines)


def test_messages_arguments_and_tracebacks_are_redacted() -> None:
    redactor = Redactor(secrets=[SECRET])

    def emit(logger: logging.Logger) -> None:
        logger.warning("miss: %s / %r", f"key {SECRET}", {"x-api-key": SECRET})
        try:
            raise ValueError(f"header was {SECRET}")
        except ValueError:
            logger.exception("failed with %s", SECRET)
        logger.warning("plain %d", 5, stack_info=True)

    text = _logged(redactor, emit)
    assert SECRET not in text
    assert text.count("[REDACTED]") == 4
    assert "ValueError: header was [REDACTED]" in text and "plain 5" in text and "Stack (most recent call last)" in text


def test_a_secret_learnt_after_the_filter_was_installed_is_redacted_too() -> None:
    redactor = Redactor(patterns=())

    def emit(logger: logging.Logger) -> None:
        redactor.add_secret(SECRET)
        logger.warning("late %s", SECRET)

    assert _logged(redactor, emit) == "late [REDACTED]"
