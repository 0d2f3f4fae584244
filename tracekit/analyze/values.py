"""Values inside arguments and results: canonical keys, leaves with their key paths, and occurrence.

A path is written the way case files write them: ``city_id``, ``items[1].product_id``; ``items[].id``
(or ``items[*].id``) means every element. Results are parsed as JSON when they are JSON, otherwise
they are plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import orjson

#: Smallest text length of a value that counts as evidence of data flow; shorter values ("1", "是")
#: occur everywhere by chance.
MIN_FLOW_LENGTH = 2


def parse_result(text: str) -> Any:
    """A tool result as JSON when it is JSON (object or array), else the text itself."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return text
    return text


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar inside ``value`` with its path (``items[0].id``); the root scalar has path ``""``."""
    # Scalars are yielded here rather than from a nested generator each: most leaves are scalars.
    if isinstance(value, dict):
        for key, inner in value.items():
            inner_path = f"{path}.{key}" if path else str(key)
            if isinstance(inner, (dict, list)):
                yield from leaves(inner, inner_path)
            else:
                yield inner_path, inner
    elif isinstance(value, list):
        for position, inner in enumerate(value):
            inner_path = f"{path}[{position}]"
            if isinstance(inner, (dict, list)):
                yield from leaves(inner, inner_path)
            else:
                yield inner_path, inner
    else:
        yield path, value


_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d*|\*)\]")


def values_at(value: Any, path: str) -> list[Any]:
    """The values found at ``path`` in ``value``.

    A one-segment path that is not a top-level key is looked up as a key anywhere in the document,
    so ``product_id`` finds ``items[3].product_id`` (catalogs name ids without their containers).
    """
    found = _walk(value, _segments(path))
    if not found and "." not in path and "[" not in path:
        found = [inner for key, inner in _keys_anywhere(value) if key == path]
    return found


def scalar_texts(value: Any) -> set[str]:
    """The text of every scalar inside ``value`` (``scalar_text`` of each leaf), as a set."""
    found: set[str] = set()
    _collect_texts(value, found)
    return found


def _collect_texts(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        for inner in value.values():
            _collect_texts(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _collect_texts(inner, found)
    elif isinstance(value, str):
        found.add(value)
    elif value is not None and not isinstance(value, bool):
        found.add(str(int(value)) if isinstance(value, float) and value.is_integer() else str(value))


def scalar_text(value: Any) -> str | None:
    """The text of a scalar as it would appear in a message (None for null, booleans, containers)."""
    if value is None or isinstance(value, (bool, dict, list)):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def occurs_in(value: Any, text: str) -> bool:
    """Whether the scalar ``value`` appears in ``text`` as a whole token (``1`` does not occur in ``110000``):
    not glued to ASCII letters, digits or underscores on either side (CJK text around it is fine)."""
    needle = value if isinstance(value, str) else scalar_text(value)
    if not needle:
        return False
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        if (start == 0 or text[start - 1] not in _WORD) and (end == len(text) or text[end] not in _WORD):
            return True
        start = text.find(needle, start + 1)
    return False


def same_scalar(a: Any, b: Any) -> bool:
    """Equality of scalars across JSON types: ``110000`` equals ``"110000"``."""
    text_a, text_b = scalar_text(a), scalar_text(b)
    return text_a is not None and text_a == text_b


@lru_cache(maxsize=8192)
def is_identifier_name(name: str) -> bool:
    """The generic rule for identifier parameters: named ``id`` or ending in ``_id`` (a list named
    ``*_ids`` holds identifiers too). ``name`` may be a path: its last key decides."""
    last = re.sub(r"(\[\d*\])+$", "", name.rsplit(".", 1)[-1])
    return last in ("id", "ids") or last.endswith(("_id", "_ids"))


def _segments(path: str) -> list[str | int | None]:
    parts: list[str | int | None] = []
    for name, index in _SEGMENT.findall(path):
        if name:
            parts.append(name)
        elif index in ("", "*"):
            parts.append(None)
        else:
            parts.append(int(index))
    return parts


def _walk(value: Any, segments: list[str | int | None]) -> list[Any]:
    if not segments:
        return [value]
    head, rest = segments[0], segments[1:]
    if head is None:
        return [found for inner in value for found in _walk(inner, rest)] if isinstance(value, list) else []
    if isinstance(head, int):
        return _walk(value[head], rest) if isinstance(value, list) and -len(value) <= head < len(value) else []
    if isinstance(value, dict) and head in value:
        return _walk(value[head], rest)
    return []


def _keys_anywhere(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key), inner
            yield from _keys_anywhere(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys_anywhere(inner)
