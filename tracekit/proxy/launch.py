"""What ``tracekit record`` and ``tracekit replay`` share: options to config, binding checks, running (their
options themselves are in ``tracekit.proxy.options``, which loads nothing of the proxy), and log output
through the redactor.

What they print on stderr is written too, through the redactor: a replay miss quotes the request where it
differs from the nearest recording, and an agent may have pasted its key into the prompt; an aiohttp
traceback may show a header. ``RedactingFilter`` sits on the handlers and replaces every secret the
redactor knows (at the time the line is written) in the message and in the exception text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path

import click

from tracekit.errors import TracekitError
from tracekit.intercepts import InterceptConfig, load_intercept_config
from tracekit.proxy.recorder import RecordingStats
from tracekit.proxy.runner import announce_to_stdout, bind, check_host, serve
from tracekit.proxy.server import Proxy, ProxyConfig, check_config
from tracekit.redact import Redactor, default_redactor


def redactor_with(values: Iterable[str]) -> Redactor:
    """The process redactor with the ``--redact`` values added (literal, or ``re:`` + a pattern)."""
    redactor = default_redactor()
    for value in values:
        redactor.add_secret(value)
    return redactor


def case_config(path: Path | None) -> InterceptConfig:
    """The intercepts and faults of ``--case FILE`` (none without it); errors exit with status 2."""
    if path is None:
        return InterceptConfig()
    try:
        return load_intercept_config(path)
    except TracekitError as exc:
        raise click.UsageError(str(exc)) from exc


def run(config: ProxyConfig, host: str, port: int, allow_remote: bool) -> None:
    """Check the bind address, build the proxy and serve until SIGTERM / SIGINT. Everything it prints on
    stderr (log lines included) goes through ``config.redactor``."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    redact_logs(config.redactor)

    def echo(message: str) -> None:
        click.echo(config.redactor.redact_text(message), err=True)

    try:
        check_host(host, allow_remote, echo)
        check_config(config)
        sock = bind(host, port)  # before the proxy: a taken port creates no --out and loads no recording
    except (TracekitError, ValueError) as exc:
        raise click.UsageError(config.redactor.redact_text(str(exc))) from exc
    try:
        proxy = Proxy(config)
    except (TracekitError, ValueError) as exc:
        sock.close()
        raise click.UsageError(config.redactor.redact_text(str(exc))) from exc
    if proxy.index is not None:
        index = proxy.index
        echo(f"tracekit replay: {len(index)} recorded answers from {index.files} trace files")
        for problem in index.problems[:10]:
            echo(f"tracekit replay: skipped {problem}")
    try:
        asyncio.run(serve(proxy, host, port, announce_to_stdout(config.mode), sock))
    except TracekitError as exc:
        raise click.UsageError(config.redactor.redact_text(str(exc))) from exc
    if proxy.index is not None:
        echo(replay_summary(proxy.index.hits, proxy.index.misses, config.on_miss))
    errors = proxy.tracker.recording_errors
    if errors:
        echo(f"tracekit {config.mode}: {len(errors)} exchanges could not be recorded: {errors[0]!r}")
    recorder = proxy.tracker.recorder
    if recorder is not None and (config.mode == "record" or recorder.stats.exchanges):
        echo(recording_summary(config.mode, recorder.stats, recorder.out_dir))


def recording_summary(mode: str, stats: RecordingStats, out_dir: Path | None) -> str:
    """What a recording wrote, in one sentence (so that an empty or unreadable recording never goes unnoticed)."""
    where = f" in {out_dir}" if out_dir is not None else ""
    text = (f"tracekit {mode}: wrote {stats.sessions} sessions, {stats.exchanges} exchanges{where} "
            f"({stats.other_routes} to other routes, {stats.unread} with model output tracekit does not read)")
    if not stats.exchanges:
        text += "; no request reached the proxy"
    elif stats.unread:
        text += "; analyze does not see those"
    return text


def replay_summary(hits: int, misses: int, on_miss: str) -> str:
    """What a replay answered, in one sentence, as ``recording_summary`` says what a recording wrote."""
    text = f"tracekit replay: {hits + misses} requests, {hits} answered from the recordings, {misses} misses"
    if misses and on_miss == "record":
        text += " (forwarded upstream and recorded)"
    elif misses:
        text += " (each named above with its nearest recording; --on-miss record --upstream URL records them)"
    elif not hits:
        text += "; no request reached the proxy"
    return text


# -- log output through the redactor ------------------------------------------------------------------

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
