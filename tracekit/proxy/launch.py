"""What ``tracekit record`` and ``tracekit replay`` share: options to config, binding checks, running."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from tracekit.errors import TracekitError
from tracekit.intercepts import InterceptConfig, load_intercept_config
from tracekit.proxy.log_redaction import redact_logs
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
