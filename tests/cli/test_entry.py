"""``tracekit record`` executes itself again with ``PYTHONMALLOC=malloc`` (``tracekit.cli.entry``), so that
the memory of expired sessions goes back to the system; nothing else does, and a choice already made stands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.cli.entry import allocator_restart

PYTHON = "/venv/bin/python"


def restart(*args: str, environ: dict[str, str] | None = None, system: str = "posix") -> object:
    argv = ["/venv/bin/tracekit", *args]
    return allocator_restart(argv, [PYTHON, *argv], environ or {"HOME": "/h"}, PYTHON, system)


def test_record_runs_again_with_the_c_allocator_and_the_same_arguments() -> None:
    assert restart("record", "--upstream", "https://api.x", "--out", "录音") == (
        PYTHON,
        [PYTHON, "/venv/bin/tracekit", "record", "--upstream", "https://api.x", "--out", "录音"],
        {"HOME": "/h", "PYTHONMALLOC": "malloc"},
    )


@pytest.mark.parametrize(
    ("args", "environ", "system"),
    [
        (("replay", "recordings"), None, "posix"),  # start-up counts there, and sessions are few
        (("record", "--help"), None, "posix"),  # help stays instant
        (("record", "--out", "x"), {"PYTHONMALLOC": "pymalloc"}, "posix"),  # the user's choice stands
        (("record", "--out", "x"), None, "nt"),
        ((), None, "posix"),
    ],
)
def test_nothing_else_runs_again(args: tuple[str, ...], environ: dict[str, str] | None, system: str) -> None:
    assert restart(*args, environ=environ, system=system) is None


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads the process's environment in /proc")
def test_the_record_process_keeps_its_id_and_runs_with_the_c_allocator(tmp_path: Path) -> None:
    environ = {name: value for name, value in os.environ.items() if name != "PYTHONMALLOC"}
    command = [sys.executable, "-m", "tracekit", "record", "--upstream", "http://127.0.0.1:9", "--port", "0",
               "--out", str(tmp_path / "out")]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
    try:
        assert process.stdout is not None
        assert "listening on http://127.0.0.1:" in process.stdout.readline()  # served: the restart is behind it
        running = Path(f"/proc/{process.pid}/environ").read_bytes().split(b"\0")
        assert b"PYTHONMALLOC=malloc" in running
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert process.returncode == 0
