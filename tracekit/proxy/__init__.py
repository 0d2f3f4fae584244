"""The record/replay proxy between an agent and a model API.

- ``Proxy`` / ``ProxyConfig``: the aiohttp application (record from upstream, or replay recordings),
  with the case's intercepts and faults applied to every request.
- ``RunningProxy``: a proxy in a background thread (tests, notebooks); ``serve``: the CLI's loop.
- ``ReplayIndex``: recordings by canonical request key; ``request_key``: that key.
- ``SessionRegistry``: session stitching; ``Recorder``: one trace file per session.
- One exchange is ``request.ParsedRequest`` (immutable, made safe at the edge) + ``exchange.Turn`` (what the
  proxy decided) + ``exchange.Reception`` (the answer as it arrives) -> ``exchange.Outcome`` (settled once);
  ``relay`` passes answers on, ``records`` turns them into trace records, ``other_routes`` forwards and
  records every other route (``http_exchange``), ``route_key`` keys those for replay.
- ``SecretFields`` / ``RedactingFilter``: request-body fields and log lines kept secret; the proxy's own
  refusals (413 over ``DEFAULT_MAX_BODY_BYTES``, one of the defaults in ``options``) are in ``refusals``.
- ``resolve_shared_texts``: puts back the long texts a model call names instead of repeating them.
- ``bytes_of``: the exact bytes of a field the trace lists in ``escaped``.

The names are loaded on first use (``from tracekit.proxy import RunningProxy`` works as usual), so that a
module of the package that loads nothing else, like ``options`` for ``tracekit record --help``, is imported
without the whole proxy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracekit.proxy.keys import first_difference, normalized_request, request_key, route_key
    from tracekit.proxy.launch import RedactingFilter, redact_logs
    from tracekit.proxy.options import DEFAULT_MAX_BODY_BYTES
    from tracekit.proxy.raw_text import bytes_of
    from tracekit.proxy.recorder import Recorder, RecordingStats
    from tracekit.proxy.replayer import RecordedAnswer, RecordedRoute, ReplayIndex
    from tracekit.proxy.request_secrets import SECRET_QUERY_PARAMETERS, SecretFields
    from tracekit.proxy.runner import RunningProxy, check_host, is_loopback, serve
    from tracekit.proxy.server import HEALTH_PATH, Proxy, ProxyConfig
    from tracekit.proxy.sessions import Session, SessionRegistry
    from tracekit.proxy.shared_texts import resolve_shared_texts
    from tracekit.proxy.trace_files import SessionTrace, TraceFile
    from tracekit.proxy.tracking import ExchangeTracker

#: Each public name -> the module of the package that defines it.
_WHERE = {
    "DEFAULT_MAX_BODY_BYTES": "options",
    "HEALTH_PATH": "server",
    "SECRET_QUERY_PARAMETERS": "request_secrets",
    "ExchangeTracker": "tracking",
    "Proxy": "server",
    "ProxyConfig": "server",
    "RecordedAnswer": "replayer",
    "RecordedRoute": "replayer",
    "Recorder": "recorder",
    "RecordingStats": "recorder",
    "RedactingFilter": "launch",
    "ReplayIndex": "replayer",
    "RunningProxy": "runner",
    "SecretFields": "request_secrets",
    "Session": "sessions",
    "SessionRegistry": "sessions",
    "SessionTrace": "trace_files",
    "TraceFile": "trace_files",
    "bytes_of": "raw_text",
    "check_host": "runner",
    "first_difference": "keys",
    "is_loopback": "runner",
    "normalized_request": "keys",
    "redact_logs": "launch",
    "request_key": "keys",
    "resolve_shared_texts": "shared_texts",
    "route_key": "keys",
    "serve": "runner",
}

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "HEALTH_PATH",
    "SECRET_QUERY_PARAMETERS",
    "ExchangeTracker",
    "Proxy",
    "ProxyConfig",
    "RecordedAnswer",
    "RecordedRoute",
    "Recorder",
    "RecordingStats",
    "RedactingFilter",
    "ReplayIndex",
    "RunningProxy",
    "SecretFields",
    "Session",
    "SessionRegistry",
    "SessionTrace",
    "TraceFile",
    "bytes_of",
    "check_host",
    "first_difference",
    "is_loopback",
    "normalized_request",
    "redact_logs",
    "request_key",
    "resolve_shared_texts",
    "route_key",
    "serve",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
