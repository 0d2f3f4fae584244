"""The nearest recording to a request that matched none, found without comparing against every recording.

A miss names the recorded request most like the one sent: same model first, then the most leading
conversation items (``messages`` / ``input``) in common, then the most equal top-level fields, the earliest
recorded winning a tie. Every recording is normalized once, when it is indexed: its items are hashed as
a chain of prefixes (``prefix[d]`` stands for the first ``d`` items), its other top-level fields by value.
Recordings are grouped by route and model, and inside a group by prefix: the bucket ``prefix[d]``
keeps, per set of other fields, the earliest recording holding that prefix and the earliest ending there.
A miss then hashes its own prefixes until the group has no bucket for one (the deepest shared prefix),
and scores the few field sets of that bucket: the work depends on the request and the number of distinct
field sets, not on the number of recordings.

Example::

    index = NearestIndex()
    index.add(0, provider, recorded_body, answer)
    index.nearest("/v1/messages", live_body)   # (answer, (same_model, shared_items, equal_fields)) or None

What the index keeps of a request is its ``RequestHashes``: ``request_hashes`` makes them from a parsed body;
``tracekit.proxy.raw_hashes`` makes the same from the body's JSON bytes without building it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tracekit.providers.base import Provider
from tracekit.proxy.keys import normalized_request
from tracekit.trace.canonical import canonical_json

T = TypeVar("T")
Score = tuple[int, int, int]
#: ``prefix[0]``: the hash of no items.
ROOT = 0
_NONE = hash(b"null")


def value_hash(value: Any) -> int:
    """A hash of what a JSON value means (canonical JSON: key order does not matter)."""
    return hash(canonical_json(value))


def prefix_chain(item_hashes: list[int]) -> list[int]:
    """``[prefix[0], prefix[1], ...]``: the hash of the first ``d`` items for every ``d`` up to the number of
    items, from the ``value_hash`` of each item."""
    chain = [ROOT]
    for item in item_hashes:
        chain.append(hash((chain[-1], item)))
    return chain


@dataclass(slots=True, frozen=True)
class RequestHashes:
    """What the index keeps of one normalized request body (a JSON object)."""

    model: int
    """``value_hash`` of its ``model`` (of None when it has none)."""
    items_field: str | None
    """The top-level field holding its conversation items (None: none, or a string input read as one item)."""
    others: frozenset[tuple[str, int]]
    """``(name, value_hash)`` of every other top-level field."""
    chain: list[int]
    """``prefix_chain`` of its conversation items."""


def request_hashes(provider: Provider, body: Any) -> RequestHashes | None:
    """The hashes of a recorded request body (None when, normalized, it is not a JSON object)."""
    recorded = normalized_request(body)
    if not isinstance(recorded, dict):
        return None
    items = provider.request_items(recorded)
    items_field = items_field_of(recorded, items)
    others = frozenset((name, value_hash(value)) for name, value in recorded.items() if name != items_field)
    chain = prefix_chain([value_hash(item) for item in items or ()])
    return RequestHashes(value_hash(recorded.get("model")), items_field, others, chain)


def aligned(provider: Provider, recorded: Any, live: Any, shared: int) -> Any:
    """``recorded`` with what it has in common with ``live`` (its first ``shared`` items, top-level fields of
    equal canonical JSON) replaced by ``live``'s own objects: a diff of the two skips those (DeepDiff does not
    walk a value compared with itself) and finds the same differences."""
    if not isinstance(recorded, dict) or not isinstance(live, dict):
        return recorded
    recorded_items, live_items = provider.request_items(recorded), provider.request_items(live)
    items_field = items_field_of(recorded, recorded_items)
    same = {
        name: value
        for name, value in live.items()
        if name != items_field and name in recorded and value_hash(recorded[name]) == value_hash(value)
    }
    result = {**recorded, **same}
    if recorded_items is not None and live_items is not None and items_field is not None and shared:
        result[items_field] = [*live_items[:shared], *recorded_items[shared:]]
    return result


def items_field_of(body: dict[str, Any], items: list[Any] | None) -> str | None:
    """The top-level field whose value is the list of conversation items (None when there is none)."""
    if items is None:
        return None
    return next((name for name, value in body.items() if value is items), None)


@dataclass(slots=True)
class _Choice(Generic[T]):
    """The earliest recording of one field set in a bucket, and the earliest whose items end there."""

    set_id: int
    first_order: int
    first: T
    ending_order: int = -1
    ending: T | None = None


@dataclass(slots=True)
class _Group(Generic[T]):
    """The recordings of one route and model."""

    provider: Provider
    buckets: dict[int, list[_Choice[T]]] = field(default_factory=dict)
    """prefix[d] -> one choice per field set (a chain hash of items: it differs from one depth to the next)."""
    field_sets: list[tuple[str | None, dict[str, int]]] = field(default_factory=list)
    """Per field-set id: the items field's name and the hashes of the other top-level fields."""
    field_set_ids: dict[tuple[str | None, frozenset[tuple[str, int]]], int] = field(default_factory=dict)


class NearestIndex(Generic[T]):
    """Recordings (``T``: what a miss names) by route, model and conversation prefix."""

    def __init__(self) -> None:
        self._groups: dict[str, dict[int, _Group[T]]] = {}
        """route -> model hash -> group."""
        self._plain: dict[str, tuple[int, T]] = {}
        """route -> the earliest recording whose body is not a JSON object (it scores (0, 0, 0))."""

    def add(self, order: int, provider: Provider, body: Any, answer: T) -> None:
        """Index one recorded request (``order``: its position among the recordings; lower wins a tie)."""
        self.add_hashed(order, provider, request_hashes(provider, body), answer)

    def add_hashed(self, order: int, provider: Provider, hashes: RequestHashes | None, answer: T) -> None:
        """``add`` for a request already hashed (``hashes`` None: a body that is not a JSON object)."""
        route = provider.ROUTE
        if hashes is None:
            self._plain.setdefault(route, (order, answer))
            return
        groups = self._groups.get(route)
        if groups is None:
            groups = self._groups[route] = {}
        group = groups.get(hashes.model)
        if group is None:
            group = groups[hashes.model] = _Group(provider)
        set_key = (hashes.items_field, hashes.others)
        set_id = group.field_set_ids.get(set_key)
        if set_id is None:
            set_id = group.field_set_ids[set_key] = len(group.field_sets)
            group.field_sets.append((hashes.items_field, dict(hashes.others)))
        chain, buckets = hashes.chain, group.buckets
        deepest = len(chain) - 1
        # Deepest first: once a prefix has a choice of this field set, every shorter prefix has one too (an
        # earlier recording held them all), so only the prefixes new to the set are visited.
        for depth in range(deepest, -1, -1):
            choices = buckets.get(chain[depth])
            choice = None if choices is None else _choice_of(choices, set_id)
            if choice is None:
                ends = depth == deepest
                new = _Choice(set_id, order, answer, order if ends else -1, answer if ends else None)
                if choices is None:
                    buckets[chain[depth]] = [new]
                else:
                    choices.append(new)
                continue
            if depth == deepest and (choice.ending is None or order < choice.ending_order):
                choice.ending_order, choice.ending = order, answer
            if order > choice.first_order:
                break  # the shorter prefixes hold an earlier recording too
            choice.first_order, choice.first = order, answer  # a key met earlier got its request only now

    def nearest(self, route: str, body: Any) -> tuple[T, Score] | None:
        """The recording on ``route`` most like ``body`` and its likeness, or None when none is recorded."""
        groups = self._groups.get(route, {})
        plain = self._plain.get(route)
        live = normalized_request(body)
        best: tuple[Score, int, T] | None = None if plain is None else ((0, 0, 0), plain[0], plain[1])
        if not isinstance(live, dict):  # every recording is as near: the earliest
            firsts = [(choice.first_order, choice.first) for group in groups.values() for choice in group.buckets[ROOT]]
            earliest = min([*firsts, *([plain] if plain else [])], key=lambda pair: pair[0], default=None)
            return None if earliest is None else (earliest[1], (0, 0, 0))
        same = groups.get(value_hash(live.get("model")))
        candidates = [same] if same is not None else list(groups.values())
        for group in candidates:
            found = _best_in_group(group, live, same_model=int(group is same))
            if found is not None and (best is None or (found[0], -found[1]) > (best[0], -best[1])):
                best = found
        return None if best is None else (best[2], best[0])


def _choice_of(choices: list[_Choice[T]], set_id: int) -> _Choice[T] | None:
    for choice in choices:
        if choice.set_id == set_id:
            return choice
    return None


def _best_in_group(group: _Group[T], live: dict[str, Any], same_model: int) -> tuple[Score, int, T] | None:
    """The best (score, order, recording) of one group for the normalized request ``live``."""
    listed = group.provider.request_items(live)
    items = listed or []
    items_field = items_field_of(live, listed)
    depth, prefix = 0, ROOT
    for item in items:  # the deepest prefix some recording of the group shares
        following = hash((prefix, value_hash(item)))
        if following not in group.buckets:
            break
        depth, prefix = depth + 1, following
    choices = group.buckets.get(prefix)
    if not choices:
        return None
    hashes = {name: value_hash(value) for name, value in live.items()}
    complete = depth == len(items)
    best: tuple[Score, int, T] | None = None
    for choice in choices:
        recorded_items_field, others = group.field_sets[choice.set_id]
        equal = 0
        bonus = False
        for name, value in hashes.items():
            if name == recorded_items_field:
                bonus = complete and name == items_field and choice.ending is not None
            elif others.get(name, _NONE) == value:
                equal += 1
        if bonus and choice.ending is not None:
            order, answer = choice.ending_order, choice.ending
        else:
            order, answer = choice.first_order, choice.first
        score = (same_model, depth, equal + int(bonus))
        if best is None or (score, -order) > (best[0], -best[1]):
            best = (score, order, answer)
    return best


__all__ = [
    "ROOT",
    "NearestIndex",
    "RequestHashes",
    "aligned",
    "items_field_of",
    "prefix_chain",
    "request_hashes",
    "value_hash",
]
