"""The command-line options ``tracekit record`` and ``tracekit replay`` share, with their help and defaults,
and the two steps of theirs that turn a proxy error into a usage error (exit status 2).

This module imports only click and the proxy's defaults (``tracekit.proxy.options``), so that
``tracekit record --help`` shows them without loading the proxy (aiohttp, the trace models); the proxy is
imported inside ``intercepts_of`` and ``serve_proxy`` when the command runs.

Example::

    @click.command()
    @click.option("--host", default="127.0.0.1", help=HOST_HELP)
    @body_options
    @timeout_options
    def record(host: str, redact_fields: tuple[str, ...], max_body_bytes: int, connect_timeout: float,
               read_timeout: float) -> None: ...
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tracekit.cli.guard_option import guard_observer
from tracekit.errors import TracekitError
from tracekit.proxy.limits import LIMIT_OPTIONS
from tracekit.proxy.options import DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT

if TYPE_CHECKING:
    from tracekit.intercepts import InterceptConfig


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


def intercepts_of(path: Path | None) -> InterceptConfig | None:
    """The intercepts and faults of ``--case FILE`` (None without it); a bad file is a usage error."""
    from tracekit.proxy.launch import case_config  # the proxy loads when the command runs, not for --help

    try:
        return case_config(path)
    except TracekitError as exc:
        raise click.UsageError(str(exc)) from exc


def serve_proxy(
    host: str, port: int, allow_remote: bool, *, case_file: Path | None, redact: tuple[str, ...],
    guard_file: str | None, **settings: Any,
) -> None:
    """Build the proxy's configuration from the options ``record`` and ``replay`` share (``--case``,
    ``--redact``, ``--guard``) and ``settings`` (the other ``ProxyConfig`` fields), and run it until SIGTERM
    / SIGINT; what it cannot start with is a usage error (exit status 2), told through the redactor like
    everything it prints."""
    # The proxy loads when the command runs, not for --help.
    from tracekit.proxy.config import ProxyConfig
    from tracekit.proxy.launch import redactor_with, run

    config = ProxyConfig(intercepts=intercepts_of(case_file), redactor=redactor_with(redact),
                         observer=guard_observer(guard_file), **settings)  # fmt: skip

    def echo(message: str) -> None:
        click.echo(message, err=True)

    try:
        run(config, host, port, allow_remote, echo)
    except TracekitError as exc:
        raise click.UsageError(config.redactor.redact_text(str(exc))) from exc


_LIMITS_KEY = "tracekit_proxy_limits"


def _remember(field: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def store(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        ctx.meta.setdefault(_LIMITS_KEY, {})[field] = value
        return value

    return store


def limit_options(function: Callable[..., None]) -> Callable[..., None]:
    """The proxy's bounds (``tracekit.proxy.limits``) as options of ``record`` / ``replay``, read back with
    ``chosen_limits``."""
    for option, field, kind, default, text in reversed(LIMIT_OPTIONS):
        checked = click.IntRange(min=1) if kind is int else click.FloatRange(min=0, min_open=True)
        function = click.option(option, type=checked, default=default, show_default=True, expose_value=False,
                                callback=_remember(field), help=text)(function)  # fmt: skip
    return function


def chosen_limits() -> dict[str, Any]:
    """The bounds the running command was given, as ``ProxyConfig`` fields."""
    return dict(click.get_current_context().meta.get(_LIMITS_KEY, {}))
