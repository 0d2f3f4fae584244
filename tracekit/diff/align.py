"""Alignment of two tool-call sequences: which calls stayed, were added, removed, moved or had their
arguments changed.

Calls are compared by (tool name, canonical arguments): JSON with sorted keys, so key order and
whitespace never count as a change. The longest common subsequence of the two key lists gives the calls
that kept their place (``same``); of the rest, a removed call whose key equals an added call's is
``moved`` (reordered), a removed and an added call of the same tool are ``changed`` (their argument
difference is a deepdiff of the canonical arguments), and what is left is ``removed`` or ``added``.

Example::

    rows = align_calls([("search", {"q": "a"}), ("book", {"id": 1})],
                       [("book", {"id": 1}), ("search", {"q": "b"})])
    [row.op for row in rows]   # ['same', 'changed']: book kept, search moved after it with q changed
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field

Op = Literal["same", "added", "removed", "moved", "changed"]
Call = tuple[str, Any]
"""A call as the alignment reads it: (tool name, arguments)."""


class AlignedCall(BaseModel):
    """One row of the side-by-side alignment."""

    op: Op = Field(description="same, added (only in new), removed (only in base), moved (reordered), changed.")
    tool: str = Field(description="The tool called.")
    base: int | None = Field(description="Index of the call in the base sequence (null: added).")
    new: int | None = Field(description="Index of the call in the new sequence (null: removed).")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="changed rows: deepdiff of the canonical arguments (base -> new)."
    )


def canonical(arguments: Any) -> str:
    """Arguments as canonical JSON (sorted keys, no insignificant whitespace)."""
    return orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()


def align_calls(base: Sequence[Call], new: Sequence[Call]) -> list[AlignedCall]:
    """The rows of the alignment, in the order of the new sequence (removed calls where they were)."""
    base_keys = [(name, canonical(args)) for name, args in base]
    new_keys = [(name, canonical(args)) for name, args in new]
    if base_keys == new_keys:  # the common case of a large diff: nothing moved
        return [_row("same", name, i, i) for i, (name, _) in enumerate(new_keys)]
    kept = _lcs(base_keys, new_keys)
    kept_base = {i for i, _ in kept}
    kept_new = {j for _, j in kept}
    removed = [i for i in range(len(base)) if i not in kept_base]
    added = [j for j in range(len(new)) if j not in kept_new]
    partner: dict[int, tuple[Op, int]] = {}  # new index -> (op, base index)
    for op, same_key in (("moved", True), ("changed", False)):
        for j in added:
            if j in partner:
                continue
            for i in removed:
                matched = base_keys[i] == new_keys[j] if same_key else base_keys[i][0] == new_keys[j][0]
                if matched and all(i != other for _, other in partner.values()):
                    partner[j] = (op, i)  # type: ignore[assignment]
                    break
    paired_base = {i for _, i in partner.values()}
    rows: list[AlignedCall] = []
    anchors = {j: i for i, j in kept}
    next_base = 0

    def flush(upto: int) -> None:
        """Removed base calls before ``upto`` not shown yet go here, where they were."""
        nonlocal next_base
        for i in range(next_base, upto):
            if i not in kept_base and i not in paired_base:
                rows.append(_row("removed", base[i][0], i, None))
        next_base = max(next_base, upto)

    for j in range(len(new)):
        if j in anchors:
            flush(anchors[j])
            next_base = anchors[j] + 1
            rows.append(_row("same", new[j][0], anchors[j], j))
        elif j in partner:
            op, i = partner[j]
            following = min((anchors[k] for k in anchors if k > j), default=len(base))
            if op == "changed" and i < following:  # a changed call in the place of the base's call
                flush(i)
                next_base = max(next_base, i + 1)
            diff = _argument_diff(base[i][1], new[j][1]) if op == "changed" else {}
            rows.append(_row(op, new[j][0], i, j, diff))
        else:
            rows.append(_row("added", new[j][0], None, j))
    flush(len(base))
    return rows


_NO_ARGUMENTS: dict[str, Any] = {}


def _row(op: Op, tool: str, base: int | None, new: int | None, arguments: dict[str, Any] | None = None) -> AlignedCall:
    """A row built without validation (the values are ours; a diff of 100,000 pairs makes millions of rows);
    rows without an argument difference share one empty dict."""
    return AlignedCall.model_construct(op=op, tool=tool, base=base, new=new, arguments=arguments or _NO_ARGUMENTS)


def _lcs(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence (dynamic programming; traces have tens of calls)."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _argument_diff(base: Any, new: Any) -> dict[str, Any]:
    """deepdiff of the canonical arguments, as plain JSON (``values_changed``, ``dictionary_item_added``...)."""
    # Imported here: deepdiff loads pandas when it is installed (a second of start-up), and every report
    # imports this module while only a diff with changed arguments calls it.
    from deepdiff import DeepDiff

    diff = DeepDiff(json.loads(canonical(base)), json.loads(canonical(new)))
    result: dict[str, Any] = json.loads(diff.to_json())
    return result
