"""Cases by id that travel pickled and are unpickled one at a time, when first read.

A ``CaseSet`` goes with the analysis settings to every worker: once per process with ``--jobs``, but with
every 256-trace task on Ray, where unpickling the whole library (the 96 cases of ``cases/``: 0.27 MB, 7.5 ms
of the set's 8.7 ms here) is repeated work a batch mostly does not need: its traces name a few cases.
``PackedCases`` pickles as one blob per case and unpickles a case only when it is read; read again, it is the
same object.

Example::

    cases = PackedCases({case.id: case for case in loaded})
    again = pickle.loads(pickle.dumps(cases))   # no case unpickled yet
    again["A-01"]                               # this one is, now
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping

from tracekit.cases.model import Case


class PackedCases(Mapping[str, Case]):
    """A read-only mapping of case id to ``Case`` whose pickle unpickles each case lazily (module docstring)."""

    __slots__ = ("_cases", "_packed")

    def __init__(self, cases: Mapping[str, Case]) -> None:
        self._cases: dict[str, Case | None] = dict(cases)
        self._packed: dict[str, bytes] = {}

    @classmethod
    def _unpickled(cls, packed: dict[str, bytes]) -> PackedCases:
        cases = cls({})
        cases._cases = dict.fromkeys(packed)
        cases._packed = packed
        return cases

    def __reduce__(self) -> tuple[object, tuple[dict[str, bytes]]]:
        packed = {
            case_id: self._packed[case_id] if case is None else pickle.dumps(case, pickle.HIGHEST_PROTOCOL)
            for case_id, case in self._cases.items()
        }
        return PackedCases._unpickled, (packed,)

    def __getitem__(self, case_id: str) -> Case:
        case = self._cases[case_id]
        if case is None:
            case = self._cases[case_id] = pickle.loads(self._packed.pop(case_id))
        return case

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    def __repr__(self) -> str:
        return f"PackedCases({len(self._cases)} cases, {len(self._packed)} still packed)"


__all__ = ["PackedCases"]
