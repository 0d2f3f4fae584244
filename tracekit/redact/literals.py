"""Finding many literal secrets in one pass, at a cost that does not grow with how many there are.

A proxy that sees a new ``Authorization`` value on every request registers a secret per request. One
regular expression of every secret costs a compilation per new secret that grows with their number (Python's
``re`` compiles an alternation of 1,500 keys in seconds) and a scan that tries each alternative at each
position. Here the secrets sit in Aho-Corasick automata (``ahocorasick_rs``: one pass over the text finds
every secret, whatever their number), kept as a binary counter of levels: a new secret makes an automaton of
one, and two automata of the same size are merged, so each secret is rebuilt into a larger automaton
O(log n) times in all, and a scan runs over O(log n) automata.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import ahocorasick_rs

_LONGEST = ahocorasick_rs.MatchKind.LeftmostLongest
_CONTIGUOUS = ahocorasick_rs.Implementation.ContiguousNFA


class _Level(NamedTuple):
    words: list[str]
    text: ahocorasick_rs.AhoCorasick
    binary: ahocorasick_rs.BytesAhoCorasick


def _level(words: list[str]) -> _Level:
    return _Level(
        words,
        ahocorasick_rs.AhoCorasick(words, matchkind=_LONGEST, implementation=_CONTIGUOUS),
        ahocorasick_rs.BytesAhoCorasick([word.encode() for word in words], matchkind=_LONGEST,
                                        implementation=_CONTIGUOUS),
    )  # fmt: skip


class Literals:
    """A growing set of literal strings, found in text and bytes (see the module docstring).

    Example::

        literals = Literals()
        literals.add(["tk-secret-1234"])
        literals.spans("key tk-secret-1234")      # [(4, 18)]
    """

    def __init__(self) -> None:
        self._levels: list[_Level] = []
        self._known: set[str] = set()

    def __len__(self) -> int:
        return len(self._known)

    def __contains__(self, word: str) -> bool:
        return word in self._known

    def add(self, words: Iterable[str]) -> None:
        """Add ``words`` (ones known already are skipped)."""
        new = sorted({word for word in words if word and word not in self._known})
        if not new:
            return
        self._known.update(new)
        self._levels.append(_level(new))
        while len(self._levels) > 1 and len(self._levels[-2].words) <= len(self._levels[-1].words):
            upper = self._levels.pop()
            lower = self._levels.pop()
            self._levels.append(_level(lower.words + upper.words))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the words occur in ``text`` (character offsets, sorted, overlaps merged)."""
        return _merged([(start, end) for level in self._levels
                        for _, start, end in level.text.find_matches_as_indexes(text, overlapping=False)])  # fmt: skip

    def byte_spans(self, data: bytes) -> list[tuple[int, int]]:
        """Where the words occur in ``data`` (byte offsets, sorted, overlaps merged)."""
        found = [level.binary.find_matches_as_indexes(data, overlapping=False) for level in self._levels]
        return _merged([(start, end) for matches in found for _, start, end in matches])


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if len(spans) < 2:
        return spans
    spans.sort()
    merged = [spans[0]]
    for start, end in spans[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged
