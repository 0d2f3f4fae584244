"""A case set unpickles its cases one at a time, as they are read (``tracekit.cases.packed``): what a Ray task
carrying the library with its batch pays for is the cases its traces name."""

from __future__ import annotations

import pickle
from pathlib import Path

from tracekit.application import load_case_set
from tracekit.cases.packed import PackedCases

CASES = Path(__file__).resolve().parents[2] / "cases"


def test_a_pickled_case_set_reads_as_the_loaded_one_and_unpickles_only_what_is_read() -> None:
    loaded = load_case_set(CASES)
    assert isinstance(loaded.cases, PackedCases) and len(loaded.cases) > 10
    travelled = pickle.loads(pickle.dumps(loaded, pickle.HIGHEST_PROTOCOL))
    cases = travelled.cases
    assert isinstance(cases, PackedCases)
    assert list(cases) == list(loaded.cases) and len(cases._packed) == len(loaded.cases)  # nothing read yet
    first = next(iter(cases))
    assert cases[first] == loaded.cases[first] and cases[first] is cases[first]
    assert len(cases._packed) == len(loaded.cases) - 1
    assert cases.get("no-such-case") is None and "no-such-case" not in cases
    # Pickled again (a window of a later Ray execution), the case read and those still packed both travel.
    again = pickle.loads(pickle.dumps(cases))
    assert dict(again) == dict(loaded.cases) and travelled == loaded
