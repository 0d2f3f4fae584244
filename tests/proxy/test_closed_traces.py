"""The paths of expired sessions' trace files, kept for the scrub at close (issue 31 item 3): on disk, read
back whole and in order, and still kept when the temporary file cannot be written."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tracekit.proxy.closed_traces import ClosedTraces

# Names of every kind: Chinese, spaces, a newline (a path may hold one), bytes that are not UTF-8.
_NAMES = [
    "会话-0001.jsonl",
    "with space.jsonl",
    "line\nbreak.jsonl",
    b"\xff\xfe-raw.jsonl".decode("utf-8", "surrogateescape"),
]


def _paths(folder: Path, count: int) -> list[Path]:
    return [folder / f"{number:05d}-{_NAMES[number % len(_NAMES)]}" for number in range(count)]


def test_paths_come_back_whole_and_in_order_across_read_blocks(tmp_path: Path) -> None:
    closed = ClosedTraces()
    expected = _paths(tmp_path, 5000)  # ~250 kB: several of the 64 kB blocks read back
    for path in expected:
        closed.add(path)
    assert closed.count == 5000
    assert list(closed.paths()) == expected
    closed.add(tmp_path / "after-a-read.jsonl")  # adding goes on after a read
    assert list(closed.paths()) == [*expected, tmp_path / "after-a-read.jsonl"]
    closed.close()
    assert list(closed.paths()) == []


def test_paths_are_kept_on_disk_not_in_memory(tmp_path: Path) -> None:
    closed = ClosedTraces()
    for path in _paths(tmp_path, 100):
        closed.add(path)
    assert closed._in_memory == [] and closed._file is not None
    closed.close()


def test_paths_are_kept_in_memory_when_the_temporary_file_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    closed = ClosedTraces()
    expected = _paths(tmp_path, 3)
    closed.add(expected[0])
    monkeypatch.setattr(tempfile, "TemporaryFile", no_space)
    assert closed._file is not None
    monkeypatch.setattr(closed._file, "write", no_space)
    closed.add(expected[1])
    closed.add(expected[2])
    assert list(closed.paths()) == expected
    closed.close()
