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
    """Where ``live`` first differs from ``recorded`` (normalized bodies), as a path with both values.

    A changed value is named before an added or removed one; among each kind, the path that sorts first
    (list positions before keys). Example: ``root['messages'][2]['content'][0]['content']: recorded '晴' !=
    request '雨'``.
    """
    differences: list[tuple[int, list[tuple[int, Any]], str, Any, Any]] = []
    _walk(normalized_request(recorded), normalized_request(live), [], differences)
    if not differences:
        return "no difference in the body (the recorded answers for this request are used up)"
    kind, _, path, before, after = min(differences, key=lambda item: (item[0], item[1]))
    if kind == _ADDED:
        return f"{path}: only in the request ({_short(after, limit)})"
    if kind == _REMOVED:
        return f"{path}: only in the recording ({_short(before, limit)})"
    return f"{path}: recorded {_short(before, limit)} != request {_short(after, limit)}"


_CHANGED, _ADDED, _REMOVED = 0, 1, 2
_MISSING = object()
#: Differences collected before the first is chosen (a body that differs everywhere is not walked whole).
_MAX_DIFFERENCES = 200


def _walk(before: Any, after: Any, steps: list[tuple[int, Any]],
          found: list[tuple[int, list[tuple[int, Any]], str, Any, Any]]) -> None:  # fmt: skip
    if len(found) >= _MAX_DIFFERENCES:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            _step(before.get(key, _MISSING), after.get(key, _MISSING), [*steps, (1, str(key))], found)
    elif isinstance(before, list) and isinstance(after, list):
        for position in range(max(len(before), len(after))):
            left = before[position] if position < len(before) else _MISSING
            right = after[position] if position < len(after) else _MISSING
            _step(left, right, [*steps, (0, position)], found)
    elif before != after or type(before) is not type(after):
        found.append((_CHANGED, steps, _path(steps), before, after))


def _step(before: Any, after: Any, steps: list[tuple[int, Any]],
          found: list[tuple[int, list[tuple[int, Any]], str, Any, Any]]) -> None:  # fmt: skip
    if before is _MISSING:
        found.append((_ADDED, steps, _path(steps), None, after))
    elif after is _MISSING:
        found.append((_REMOVED, steps, _path(steps), before, None))
    else:
        _walk(before, after, steps, found)


def _path(steps: list[tuple[int, Any]]) -> str:
    return "root" + "".join(f"[{part}]" if kind == 0 else f"[{part!r}]" for kind, part in steps)


def _short(value: Any, limit: int) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else canonical_json(value).decode("utf-8", "replace")
    return text if len(text) <= limit else text[: limit - 3] + "..."
