"""A diff written as its pairs are made: memory flat in the number of pairs.

``diff_results`` holds every pair (and both results) in memory. For two large results, ``tracekit diff``
pairs the sides from their ``SideKey`` s alone (``plan_pairs``), then builds one pair at a time, its entries
read again from each results file (``tracekit.results.stream``), and hands it to the writers: the JSON
(``write_diff_json``, the same bytes as ``Diff.model_dump_json(indent=2)``), the HTML pages and the
Markdown, which keep only the first pairs their index or comment shows (``Head``).

Example::

    plan = plan_pairs(base_keys, new_keys)
    with atomic_output("diff.json") as out:
        write_diff_json(out, count_changes(plan), (planned.build(base.entry, new.entry, None) for planned in plan))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO, Generic, TypeVar, overload

from tracekit.diff.pairs import Diff, Pair
from tracekit.redact import Redactor, default_redactor

__all__ = ["Head", "write_diff_json"]

Item = TypeVar("Item")


class Head(Generic[Item]):
    """The first ``keep`` items of a long list, and how many it has: what an index or a comment shows of it
    ("… and N more"). ``len`` is the whole list's length; iterating and indexing see the kept items only."""

    def __init__(self, keep: int, items: Iterable[Item] = ()) -> None:
        self.keep = keep
        self.items: list[Item] = []
        self.total = 0
        for item in items:
            self.append(item)

    def append(self, item: Item) -> None:
        """Count ``item``; keep it while fewer than ``keep`` are kept."""
        self.total += 1
        if len(self.items) < self.keep:
            self.items.append(item)

    def __len__(self) -> int:
        return self.total

    def __bool__(self) -> bool:
        return self.total > 0

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    @overload
    def __getitem__(self, index: int) -> Item: ...
    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...
    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice) and index.stop is not None and index.stop > self.keep:
            raise IndexError(f"only the first {self.keep} items are kept")
        return self.items[index]


def write_diff_json(out: IO[bytes], counts: dict[str, int], pairs: Iterable[Pair],
                    redactor: Redactor | None = None) -> None:  # fmt: skip
    """``tracekit diff --json``: the document of ``Diff(counts=counts, pairs=list(pairs))``, written a pair at a
    time, byte for byte what ``model_dump_json(indent=2)`` writes (a pair's own JSON indented to its place in
    ``pairs``), through the redactor."""
    redact = (redactor or default_redactor()).redact_text
    head = Diff(counts=counts, pairs=[]).model_dump_json(indent=2)
    assert head.endswith('"pairs": []\n}')
    first = True
    for pair in pairs:
        text = "\n".join("    " + line for line in pair.model_dump_json(indent=2).split("\n"))
        out.write(redact((head[: -len("]\n}")] + "\n" if first else ",\n") + text).encode("utf-8"))
        first = False
    out.write(redact(head if first else "\n  ]\n}").encode("utf-8"))
