"""What ``tracekit record`` and ``tracekit replay`` share: options to config, binding checks, running."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path

import click

from tracekit.errors import TracekitError
from tracekit.intercepts import InterceptConfig, load_intercept_config
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
    """Check the bind address, build the proxy and serve until SIGTERM / SIGINT."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        check_host(host, allow_remote, lambda message: click.echo(message, err=True))
        proxy = Proxy(config)
    except (TracekitError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    if proxy.index is not None:
        index = proxy.index
        click.echo(f"tracekit replay: {len(index)} recorded answers from {index.files} trace files", err=True)
        for problem in index.problems[:10]:
            click.echo(f"tracekit replay: skipped {problem}", err=True)
    try:
        asyncio.run(serve(proxy, host, port, announce_to_stdout(config.mode)))
    except TracekitError as exc:
        raise click.UsageError(str(exc)) from exc
    errors = proxy.tracker.recording_errors
    if errors:
        click.echo(f"tracekit {config.mode}: {len(errors)} exchanges could not be recorded: {errors[0]!r}", err=True)


HOST_HELP = "Address to listen on (loopback by default; others need --allow-remote)."
