"""The record/replay proxy between an agent and a model API.

- ``Proxy`` / ``ProxyConfig``: the aiohttp application (record from upstream, or replay recordings),
  with the case's intercepts and faults applied to every request.
- ``RunningProxy``: a proxy in a background thread (tests, notebooks); ``serve``: the CLI's loop;
  ``LoadingProxy``: replay's port open at once, the proxy built (recordings loaded) in the background.
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

from typing import TYPE_CHECKING

from tracekit.lazy import lazy_exports

if TYPE_CHECKING:
    from tracekit.proxy.config import ProxyConfig
    from tracekit.proxy.keys import first_difference, normalized_request, request_key, route_key
    from tracekit.proxy.launch import RedactingFilter, redact_logs
    from tracekit.proxy.listening import check_host, is_loopback
    from tracekit.proxy.loading import LoadingProxy
    from tracekit.proxy.options import DEFAULT_MAX_BODY_BYTES
    from tracekit.proxy.raw_text import bytes_of
    from tracekit.proxy.recorder import Recorder, RecordingStats
    from tracekit.proxy.replayer import RecordedAnswer, RecordedRoute, ReplayIndex
    from tracekit.proxy.request_secrets import SECRET_QUERY_PARAMETERS, SecretFields
    from tracekit.proxy.runner import RunningProxy, serve
    from tracekit.proxy.server import HEALTH_PATH, Proxy
    from tracekit.proxy.sessions import Session, SessionRegistry
    from tracekit.proxy.shared_texts import resolve_shared_texts
    from tracekit.proxy.trace_files import SessionTrace
    from tracekit.proxy.tracking import ExchangeTracker

#: Each public name -> the module of the package that defines it.
_HOMES = {
    "options": ["DEFAULT_MAX_BODY_BYTES"],
    "server": ["HEALTH_PATH", "Proxy"],
    "config": ["ProxyConfig"],
    "loading": ["LoadingProxy"],
    "request_secrets": ["SECRET_QUERY_PARAMETERS", "SecretFields"],
    "tracking": ["ExchangeTracker"],
    "replayer": ["RecordedAnswer", "RecordedRoute", "ReplayIndex"],
    "recorder": ["Recorder", "RecordingStats"],
    "launch": ["RedactingFilter", "redact_logs"],
    "listening": ["check_host", "is_loopback"],
    "runner": ["RunningProxy", "serve"],
    "sessions": ["Session", "SessionRegistry"],
    "trace_files": ["SessionTrace"],
    "raw_text": ["bytes_of"],
    "keys": ["first_difference", "normalized_request", "request_key", "route_key"],
    "shared_texts": ["resolve_shared_texts"],
}

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "HEALTH_PATH",
    "SECRET_QUERY_PARAMETERS",
    "ExchangeTracker",
    "LoadingProxy",
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

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
