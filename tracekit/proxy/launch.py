"""What ``tracekit record`` and ``tracekit replay`` share: options to config, binding checks, running."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from tracekit.errors import TracekitError
from tracekit.intercepts import InterceptConfig, load_intercept_config
from tracekit.proxy.answers import DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT
from tracekit.proxy.log_redaction import redact_logs
from tracekit.proxy.recorder import RecordingStats
from tracekit.proxy.refusals import DEFAULT_MAX_BODY_BYTES
from tracekit.proxy.runner import announce_to_stdout, check_host, serve
from tracekit.proxy.server import Proxy, ProxyConfig
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
        proxy = Proxy(config)
    except (TracekitError, ValueError) as exc:
        raise click.UsageError(config.redactor.redact_text(str(exc))) from exc
    if proxy.index is not None:
        index = proxy.index
        echo(f"tracekit replay: {len(index)} recorded answers from {index.files} trace files")
        for problem in index.problems[:10]:
            echo(f"tracekit replay: skipped {problem}")
    try:
        asyncio.run(serve(proxy, host, port, announce_to_stdout(config.mode)))
    except TracekitError as exc:
        raise click.UsageError(config.redactor.redact_text(str(exc))) from exc
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


def timeout_options(function: Callable[..., None]) -> Callable[..., None]:
    """``--connect-timeout`` and ``--read-timeout``: how long the proxy waits for the upstream."""
    function = click.option(
        "--read-timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_READ_TIMEOUT,
        show_default=True, metavar="SECONDS",
        help="Seconds without a byte from upstream before the exchange fails (recorded as transport "
             "read_timeout). A client that goes away ends its exchange at once.",
    )(function)  # fmt: skip
    return click.option(
        "--connect-timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_CONNECT_TIMEOUT,
        show_default=True, metavar="SECONDS",
        help="Seconds to open a connection upstream (then transport connect_timeout).",
    )(function)  # fmt: skip


def body_options(function: Callable[..., None]) -> Callable[..., None]:
    """``--max-body-bytes`` and ``--redact-field``, shared by ``record`` and ``replay``."""
    function = click.option(
        "--redact-field", "redact_fields", multiple=True, metavar="PATH",
        help="A request-body field whose value is a secret (repeatable; dotted path, e.g. metadata.user_id; "
             "a number indexes a list; values of 8+ characters). Forwarded unchanged, never written.",
    )(function)  # fmt: skip
    return click.option(
        "--max-body-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BODY_BYTES, show_default=True,
        metavar="N", help="Larger request bodies get a 413 in the provider's error shape (not forwarded).",
    )(function)  # fmt: skip


HOST_HELP = "Address to listen on (loopback by default; others need --allow-remote)."
