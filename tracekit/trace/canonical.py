"""Canonical JSON and content hashes: the identities of requests, arguments and traces.

Canonical JSON is compact, has sorted keys and keeps non-ASCII text as UTF-8 (``orjson`` never
escapes it). Two values that mean the same JSON give the same bytes, hence the same hash.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from tracekit.errors import TraceFormatError

#: orjson writes JSON nested at most this deep (it reads up to 1024 levels).
WRITE_DEPTH_LIMIT = 254

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_json(value: Any) -> bytes:
    """Serialize ``value`` as canonical JSON bytes (sorted keys, no whitespace, UTF-8).

    A value nested deeper than ``WRITE_DEPTH_LIMIT`` raises ``TraceFormatError`` saying so (orjson's own
    error is a bare "Recursion limit reached")."""
    try:
        return orjson.dumps(value, option=_OPTIONS, default=_fallback)
    except orjson.JSONEncodeError as exc:
        if "Recursion limit" not in str(exc):
            raise
        raise TraceFormatError(
            f"a value nested deeper than {WRITE_DEPTH_LIMIT} levels, more than tracekit writes "
            "(tool arguments or content of that depth cannot be compared or hashed)"
        ) from exc


def content_hash(value: Any, length: int = 16) -> str:
    """A short hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()[:length]


def parse_json_arguments(text: str) -> tuple[Any, bool]:
    """Parse a JSON-encoded argument string; returns ``(value, ok)``, the raw text when not JSON."""
    try:
        return orjson.loads(text) if text.strip() else {}, True
    except orjson.JSONDecodeError:
        return text, False


def _fallback(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    raise TypeError(f"cannot serialize {type(value).__name__} as JSON")
