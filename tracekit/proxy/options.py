"""The command-line options ``tracekit record`` and ``tracekit replay`` share, with their help and defaults.

This module imports only click, so that ``tracekit record --help`` shows them without loading the proxy
(aiohttp, the trace models); the commands import the proxy when they run. The proxy's default limits are
here for the same reason.

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

import click

#: Seconds to open a connection upstream; the SDKs themselves give up after 5.
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds without a byte from upstream (before the response or between chunks): the SDKs' own default
#: request timeout, so that the proxy is never the first to give up on a slow model.
DEFAULT_READ_TIMEOUT = 600.0
#: Anthropic documents 32 MB as the Messages API's request size limit; larger bodies get a 413 from the proxy.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024


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
