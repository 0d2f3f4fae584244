"""Atomic outputs (``tracekit.output``): what a killed writer leaves is named as a temporary and removed by
the next write once its process is gone; a folder of pages lands whole, index first, next to the user's
own files without touching them. The killed writers here are real processes killed with SIGKILL, stopped
first (SIGSTOP) at the moment chosen, never timed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.output import staged_folder, sweep_abandoned, write_text

WRITER = """
import os, signal, sys
from tracekit.output import atomic_output
with atomic_output(sys.argv[1]) as out:
    out.write(b"half of the new")
    out.flush()
    os.kill(os.getpid(), signal.SIGSTOP)
"""


def _stopped_writer(target: Path) -> subprocess.Popen[bytes]:
    """A process stopped halfway through writing ``target`` (its temporary file beside it, locked)."""
    process = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
    _, status = os.waitpid(process.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)
    return process


def _temporaries(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


def test_a_killed_writers_temporary_is_named_so_and_the_next_write_removes_it(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    target.write_text("old")
    process = _stopped_writer(target)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    (left,) = _temporaries(tmp_path)
    assert left.startswith(f".results.json.tracekit-{process.pid}.")
    assert target.read_text() == "old"
    write_text(target, "new")
    assert target.read_text() == "new" and _temporaries(tmp_path) == []


def test_a_live_writers_temporary_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    process = _stopped_writer(target)
    try:
        write_text(target, "mine")
        assert len(_temporaries(tmp_path)) == 1  # the other run is still writing: its file stays
    finally:
        process.kill()
        process.wait()
    write_text(target, "again")
    assert _temporaries(tmp_path) == []


def test_only_tracekits_own_temporaries_are_swept(tmp_path: Path) -> None:
    names = [".results.json.tracekit-notapid.x.tmp", ".results.json.mine.tmp", "results.json.tracekit-1.x.tmp",
             f".results.json.tracekit-{os.getpid()}.abc.tmp"]  # fmt: skip
    for name in names:
        (tmp_path / name).write_text("someone's")
    sweep_abandoned(tmp_path, ".results.json.")
    assert sorted(os.listdir(tmp_path)) == sorted(names)


def test_a_staged_folder_lands_whole_beside_the_users_files(tmp_path: Path) -> None:
    """``--html .`` in a project: its case library in cases/ and its notes stay; the report's pages join."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "b2.yaml").write_text("id: B2-XX-01")
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "runs-3.html").write_text("an earlier, longer report's page")
    (tmp_path / "kinds").mkdir()
    (tmp_path / "kinds" / "finding-x.html").write_text("old")

    def owns(name: str) -> bool:
        return name in ("index.html", "cases", "traces", "kinds") or name.startswith("runs-")

    with staged_folder(tmp_path, owns) as staging:
        assert staging.parent == tmp_path and staging.name.startswith(f".tracekit-staging.{os.getpid()}.")
        for page in ("index.html", "cases/b2.html", "traces/t.html"):
            write_text(staging / page, f"new {page}")
        assert not (tmp_path / "index.html").exists() and not (tmp_path / "traces").exists()
    assert sorted(os.listdir(tmp_path)) == ["cases", "index.html", "notes.txt", "traces"]
    assert sorted(os.listdir(tmp_path / "cases")) == ["b2.html", "b2.yaml"]  # merged, not replaced
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "traces" / "t.html").read_text() == "new traces/t.html"


def test_a_staged_folder_that_fails_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("old")
    with pytest.raises(RuntimeError), staged_folder(tmp_path, lambda name: name == "index.html") as staging:
        write_text(staging / "index.html", "new")
        raise RuntimeError("a page could not be rendered")
    assert os.listdir(tmp_path) == ["index.html"] and (tmp_path / "index.html").read_text() == "old"
