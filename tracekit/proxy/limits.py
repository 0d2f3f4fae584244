"""The proxy's bounds against a hostile upstream or client, with their defaults (docs/security.md).

Each is a ``ProxyConfig`` field of the same name in lower case; the figures are chosen so that no honest
model API or agent comes near them:

- ``MAX_RESPONSE_BYTES``: a JSON answer larger than this once decoded gets a 502 (twice the 32 MB request
  limit Anthropic documents; the longest model answers are a few MB).
- ``MAX_KEPT_STREAM_BYTES``: how much of a stream the trace keeps; the rest is passed on to the client and
  the model call is marked ``truncated``.
- ``HEADER_TIMEOUT``: seconds a client has to send a request's head once it connected or sent the previous
  one; ``IDLE_TIMEOUT``: seconds a kept-alive connection may stay silent between requests.
- ``MAX_CONNECTIONS``: client connections served at once; more are answered ``503`` and closed.
- ``SESSION_IDLE_TIMEOUT``: seconds after its last exchange that a session is closed (its trace complete on
  disk, its memory freed).
"""

from __future__ import annotations

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_KEPT_STREAM_BYTES = 16 * 1024 * 1024
HEADER_TIMEOUT = 30.0
IDLE_TIMEOUT = 120.0
MAX_CONNECTIONS = 512
SESSION_IDLE_TIMEOUT = 1800.0

_BUSY_BODY = b'{"error":{"type":"overloaded","message":"tracekit proxy: too many connections; retry shortly"}}'
BUSY_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                b"Connection: close\r\nContent-Length: %d\r\n\r\n%s") % (len(_BUSY_BODY), _BUSY_BODY)  # fmt: skip
"""What a connection beyond ``MAX_CONNECTIONS`` is answered before it is closed."""

#: Each bound's command-line option: (option, ProxyConfig field, type, default, help). A number must be
#: positive (the CLI builds its options from this table: ``tracekit.cli.proxy_options.limit_options``).
LIMIT_OPTIONS: tuple[tuple[str, str, type, float, str], ...] = (
    ("--max-response-bytes", "max_response_bytes", int, MAX_RESPONSE_BYTES,
     "A JSON answer larger than this once decoded (a gzip bomb) gets a 502 and is recorded as refused."),
    ("--max-kept-stream-bytes", "max_kept_stream_bytes", int, MAX_KEPT_STREAM_BYTES,
     "How much of a stream the trace keeps; the rest is passed on, the model call marked truncated."),
    ("--header-timeout", "header_timeout", float, HEADER_TIMEOUT,
     "Seconds a client has to send a request's head, and then its body (slow clients are closed)."),
    ("--idle-timeout", "idle_timeout", float, IDLE_TIMEOUT,
     "Seconds a kept-alive client connection may stay silent between requests."),
    ("--max-connections", "max_connections", int, MAX_CONNECTIONS,
     "Client connections served at once; more get a 503 with Retry-After."),
    ("--session-idle-timeout", "session_idle_timeout", float, SESSION_IDLE_TIMEOUT,
     "Seconds after its last exchange that a session is closed (trace finished, memory freed); a named "
     "session that comes back continues in NAME-2.jsonl, whose header names the old file."),
)  # fmt: skip
