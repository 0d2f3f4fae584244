"""The importers' temporary file (``tracekit.importers.spill``): objects come back equal, in order and by
position, and nothing readable of them is on disk."""

from __future__ import annotations

import contextlib
import os

from tracekit.importers.spill import Spill

SECRET = "sk-ant-api03-" + "Zx9" * 20


def _on_disk(spill: Spill) -> bytes:
    """Every byte of the spill's file as the system holds it (flushed, read with ``pread`` at its own
    offsets), not through the spill."""
    spill._file.flush()
    descriptor = spill._file.fileno()
    return os.pread(descriptor, os.fstat(descriptor).st_size, 0)


def test_objects_come_back_by_position_and_in_order() -> None:
    values = [{"text": "北京的天气", "n": n, "blob": b"\x00\xff" * n} for n in range(50)]
    with contextlib.closing(Spill()) as spill:
        places = [spill.add(value) for value in values]
        assert spill.load(places[17]) == values[17]
        assert spill.load(places[0]) == values[0]
        assert spill.add("after a load") > places[-1]
        assert list(spill) == [*values, "after a load"]


def test_no_secret_or_text_reaches_the_disk() -> None:
    with contextlib.closing(Spill()) as spill:
        spill.add({"headers": {"x-api-key": SECRET}, "prompt": "北京的天气"})
        written = _on_disk(spill)
    assert written
    assert SECRET.encode() not in written
    assert "北京的天气".encode() not in written
    assert b"x-api-key" not in written


def test_cleared_spill_takes_a_new_key_and_starts_again() -> None:
    with contextlib.closing(Spill()) as spill:
        spill.add(SECRET)
        before = _on_disk(spill)
        spill.clear()
        where = spill.add(SECRET)
        assert where == 0
        assert _on_disk(spill) != before  # the same object at the same place: another stream
        assert list(spill) == [SECRET]
