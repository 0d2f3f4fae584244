"""Where two JSON values first differ: what a replay miss names (the model proxy's and the MCP replay's).

A changed value is named before an added or removed one; among each kind, the path that sorts first (list
positions before keys). Example::

    first_difference({"city": "北京"}, {"city": "上海"})
    # "root['city']: recorded '北京' != request '上海'"
"""

from __future__ import annotations

from typing import Any

from tracekit.trace.canonical import canonical_json


def first_difference(recorded: Any, live: Any, limit: int = 160) -> str:
    """Where ``live`` first differs from ``recorded``, as a path with both values."""
    differences: list[tuple[int, list[tuple[int, Any]], str, Any, Any]] = []
    _walk(recorded, live, [], differences)
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
