"""The names tracekit's parts agree on, defined once: the header an agent names its session with, the
health route, the content types the fakes answer with, the image types a trace may carry, the trace
``source`` of a judge's own calls.

Example::

    from tracekit.constants import SESSION_HEADER

    headers = {SESSION_HEADER: "CASE-01__A__r0"}
"""

from __future__ import annotations

#: The request header that names the agent session an exchange belongs to (DESIGN.md "Sessions"); the
#: proxy reads it and never forwards it.
SESSION_HEADER = "x-tracekit-session"
#: The route the proxy and the fake upstream answer ``{"status": "ok"}`` on.
HEALTH_PATH = "/_tracekit/health"
#: Content types of a JSON answer and of a stream of server-sent events.
JSON_CONTENT_TYPE = "application/json"
SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8"
#: The image media types the Messages API accepts in a base64 source (Anthropic's "Vision" guide).
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: The header ``source`` of the trace files the judge's own model calls are recorded in.
JUDGE_SOURCE = "judge"
