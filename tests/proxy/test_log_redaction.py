"""Log lines and stderr through the redactor (``RedactingFilter``), and an upstream URL with credentials
refused at start without printing them."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.errors import TracekitError
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.proxy.log_redaction import RedactingFilter, redact_logs
from tracekit.redact import Redactor

SECRET = "tk-log-secret-55aa0c"
PASSWORD = "gateway-pass-93e1"


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


def test_an_upstream_url_with_credentials_is_refused_without_showing_them(tmp_path: Path) -> None:
    url = f"http://user:{PASSWORD}@127.0.0.1:9/api"
    with pytest.raises(TracekitError, match=r"credentials \(\.\.\.@127\.0\.0\.1:9\)") as caught:
        RunningProxy(ProxyConfig(upstream=url, out_dir=tmp_path, redactor=Redactor()))
    assert PASSWORD not in str(caught.value)
    command = [sys.executable, "-m", "tracekit", "record", "--upstream", url, "--port", "0", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "carries credentials" in done.stderr and PASSWORD not in done.stderr + done.stdout
    replay = [sys.executable, "-m", "tracekit", "replay", str(tmp_path), "--port", "0", "--on-miss", "record",
              "--upstream", url]  # fmt: skip
    done = subprocess.run(replay, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "carries credentials" in done.stderr
    assert list(tmp_path.iterdir()) == []
