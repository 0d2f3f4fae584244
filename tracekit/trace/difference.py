"""Where two JSON values first differ: what a replay miss names (the model proxy's and the MCP replay's).

Example::

    first_difference({"city": "北京"}, {"city": "上海"})
    # "root['city']: recorded '北京' != request '上海'"
"""

from __future__ import annotations

from typing import Any

from tracekit.trace.canonical import canonical_json

_CATEGORIES = ("values_changed", "type_changes", "dictionary_item_added", "dictionary_item_removed",
               "iterable_item_added", "iterable_item_removed")  # fmt: skip


def first_difference(recorded: Any, live: Any, limit: int = 160) -> str:
    """Where ``live`` first differs from ``recorded``, as a deepdiff path with both values (the earliest path
    of the first kind of change: changed values before added or removed items)."""
    from deepdiff import DeepDiff  # imported on a miss only: it is slow to import

    diff = DeepDiff(recorded, live, verbose_level=2, view="tree")
    for category in _CATEGORIES:
        changes = diff.get(category)
        if not changes:
            continue
        change = min(changes, key=lambda item: [(0, part, "") if isinstance(part, int) else (1, 0, str(part))
                                                for part in item.path(output_format="list")])
        before = _short(change.t1, limit)
        after = _short(change.t2, limit)
        if category.endswith("added"):
            return f"{change.path()}: only in the request ({after})"
        if category.endswith("removed"):
            return f"{change.path()}: only in the recording ({before})"
        return f"{change.path()}: recorded {before} != request {after}"
    return "no difference in the body (the recorded answers for this request are used up)"


def _short(value: Any, limit: int) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else canonical_json(value).decode("utf-8", "replace")
    return text if len(text) <= limit else text[: limit - 3] + "..."
