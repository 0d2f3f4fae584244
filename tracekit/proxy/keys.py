"""Replay matching: the canonical key of a request, and where two requests differ.

The key is a hash of the request body's canonical JSON (parsed, sorted keys) with the fields that do
not change what the model is asked removed: ``stream`` and ``stream_options`` (a stream is answered from
a JSON recording and the other way round) and volatile identifiers such as ``metadata.user_id``.
Headers never take part. A body that is not JSON is keyed by its bytes.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tracekit.trace.canonical import canonical_json
from tracekit.trace.difference import first_difference as value_difference

#: Top-level request fields left out of the key.
VOLATILE_FIELDS = frozenset({"stream", "stream_options"})
#: Nested request fields left out of the key, as (object field, key) pairs.
VOLATILE_NESTED = (("metadata", "user_id"),)


def normalized_request(body: Any) -> Any:
    """The request body with the fields that do not take part in matching removed (a shallow copy)."""
    if not isinstance(body, dict):
        return body
    normalized = {key: value for key, value in body.items() if key not in VOLATILE_FIELDS}
    for outer, inner in VOLATILE_NESTED:
        nested = normalized.get(outer)
        if isinstance(nested, dict) and inner in nested:
            rest = {key: value for key, value in nested.items() if key != inner}
            if rest:
                normalized[outer] = rest
            else:
                del normalized[outer]
    return normalized


def request_key(route: str, body: Any, raw: bytes = b"") -> str:
    """The replay key of a request to ``route`` (``/v1/messages`` or ``/v1/chat/completions``)."""
    digest = hashlib.sha256(route.encode())
    digest.update(b"\0")
    digest.update(canonical_json(normalized_request(body)) if body is not None else raw)
    return digest.hexdigest()[:24]


def route_key(method: str, path: str, body: Any, raw: bytes = b"") -> str:
    """The replay key of a request to another route: its method, path and canonical body (not its query)."""
    return request_key(f"{method.upper()} {path}", body, raw)


def first_difference(recorded: Any, live: Any, limit: int = 160) -> str:
    """Where ``live`` first differs from ``recorded`` (normalized bodies), as a path with both values
    (``tracekit.trace.difference``, which the MCP replay shares).

    A changed value is named before an added or removed one; among each kind, the path that sorts first
    (list positions before keys). Example: ``root['messages'][2]['content'][0]['content']: recorded '晴' !=
    request '雨'``.
    """
    return value_difference(normalized_request(recorded), normalized_request(live), limit)
