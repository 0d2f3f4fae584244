"""Canonical JSON and content hashes: the identities of requests, arguments and traces.

Canonical JSON is compact, has sorted keys and keeps non-ASCII text as UTF-8 (``orjson`` never
escapes it). Two values that mean the same JSON give the same bytes, hence the same hash.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_json(value: Any) -> bytes:
    """Serialize ``value`` as canonical JSON bytes (sorted keys, no whitespace, UTF-8)."""
    return orjson.dumps(value, option=_OPTIONS, default=_fallback)


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
