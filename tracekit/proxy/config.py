"""What a proxy is configured with (``ProxyConfig``) and the checks it passes before anything starts
(``check_config``).

This module loads none of the proxy (no aiohttp, no record models): ``tracekit replay`` builds and checks
its configuration before it opens its port, and builds the proxy itself in the background
(``tracekit.proxy.loading``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tracekit.proxy import limits
from tracekit.proxy.matching import MatchRules
from tracekit.proxy.options import DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT
from tracekit.redact import Redactor, default_redactor

if TYPE_CHECKING:
    from tracekit.intercepts import InterceptConfig
    from tracekit.proxy.observers import ExchangeObserver


@dataclass
class ProxyConfig:
    """How a proxy answers and what it records."""

    mode: str = "record"
    """'record' (answers from upstream) or 'replay' (answers from recordings)."""
    upstream: str | None = None
    out_dir: Path | None = None
    """Where traces are written (record: required; replay: optional, misses recorded with on_miss)."""
    replay_dir: Path | None = None
    intercepts: InterceptConfig | None = None
    """The case's intercepts and faults (``tracekit.intercepts``); None: none (the case library is not loaded)."""
    redactor: Redactor = field(default_factory=default_redactor)
    fsync: bool = False
    timing: str = "instant"
    on_miss: str = "error"
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """Larger request bodies get a 413 in the provider's error shape and are neither forwarded nor recorded."""
    secret_fields: tuple[str, ...] = ()
    """Dotted paths into request bodies (``metadata.user_id``) whose values are secrets: registered with the
    redactor as each request arrives, forwarded unchanged."""
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds to open a connection upstream (then the exchange fails with ``transport: connect_timeout``)."""
    read_timeout: float = DEFAULT_READ_TIMEOUT
    """Seconds without a byte from upstream (then ``transport: read_timeout``)."""
    header_timeout: float = limits.HEADER_TIMEOUT
    """Seconds a client has to send a request's head (and then its body); then the connection is closed."""
    idle_timeout: float = limits.IDLE_TIMEOUT
    """Seconds a kept-alive client connection may stay silent between requests."""
    max_connections: int = limits.MAX_CONNECTIONS
    """Client connections served at once; more get a 503 with Retry-After and are closed."""
    session_idle_timeout: float = limits.SESSION_IDLE_TIMEOUT
    """Seconds after its last exchange that a session is closed: its trace finished on disk, its memory (and
    the observer's) freed. A named session that comes back continues in a new file naming the old one."""
    max_kept_stream_bytes: int = limits.MAX_KEPT_STREAM_BYTES
    """How much of a stream the trace keeps; the rest is passed on and the model call marked ``truncated``."""
    max_response_bytes: int = limits.MAX_RESPONSE_BYTES
    """A JSON answer larger than this once decoded (a gzip bomb) gets a 502 and is recorded as refused."""
    observer: ExchangeObserver | None = None
    """Watches every exchange and may note or refuse requests (``observers``; the live guard)."""
    match_rules: MatchRules = field(default_factory=MatchRules)
    """What replay's ``volatile`` rung leaves out (``tracekit.proxy.matching``)."""


def check_config(config: ProxyConfig) -> None:
    """Refuse (``ValueError``) a configuration that cannot work, before anything starts: no upstream where
    one is needed, an upstream that is not an http(s) URL with a host (a bare host name would be a 500 on
    every request), a body limit under a byte, timeouts and limits that are not positive."""
    replaying = config.mode == "replay"
    needs_upstream = not replaying or config.on_miss == "record"
    if needs_upstream and not config.upstream:
        raise ValueError("an upstream URL is needed" + (" to record misses" if replaying else ""))
    if needs_upstream:
        url = str(config.upstream)
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            example = f"https://{url}" if "://" not in url else "https://api.anthropic.com"
            raise ValueError(f"--upstream {url!r} is not an http(s) URL with a host; give the scheme too, "
                             f"e.g. {example}")  # fmt: skip
    if config.max_body_bytes < 1:
        raise ValueError(f"the body size limit must be at least 1 byte, not {config.max_body_bytes}")
    if min(config.connect_timeout, config.read_timeout, config.header_timeout, config.idle_timeout) <= 0:
        raise ValueError("the connect, read, header and idle timeouts must be positive numbers of seconds")
    if config.session_idle_timeout <= 0:
        raise ValueError("the session idle timeout must be a positive number of seconds")
    if config.max_connections < 1 or config.max_response_bytes < 1:
        raise ValueError("max_connections and max_response_bytes must be at least 1")


__all__ = ["ProxyConfig", "check_config"]
