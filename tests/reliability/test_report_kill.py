"""Crash: ``kill -9`` of ``tracekit analyze --json OUT/results.json --html OUT --html-single OUT/review.html``
at chosen moments, with and without a complete report from an earlier run in OUT.

The process is stopped at the moment chosen, by the event itself: a small driver runs the real CLI with
``os.replace`` / ``os.rename`` wrapped so that the process sends itself SIGSTOP just before the n-th rename
onto a given target (a results JSON about to land, the fifth trace page about to land in the staging
folder, the new index about to replace the old, the trace pages' folder about to, the single file about
to). The test waits for the stop (``waitpid`` with ``WUNTRACED``), kills it with SIGKILL and checks what
the user's folder holds:

- pages of a report (``runs-N.html``, ``traces/``, ``cases/``, ``kinds/``) never stand without
  ``index.html``;
- nothing visible is left but the report's and the user's own files; what is left hidden is named as a
  temporary (``.tracekit-staging.<pid>.*``, ``.<name>.tracekit-<pid>.*.tmp``);
- before the new report is complete, the earlier report is there byte for byte (and the earlier results
  JSON until the new one is whole), or no page at all when there was none;
- the next run completes, writes exactly what an uninterrupted run writes, and leaves no temporary.

Inputs: 16 traces of the bundled ``recordings/`` (8 of the reference run, 8 of the flawed one: scripted
policies, ``recordings/README.md``); the earlier report is of the 8 reference traces alone.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DRIVER = """
import os, signal, sys
target, count = sys.argv[1], int(sys.argv[2])
seen = 0
def stopping(real):
    def rename(source, destination, *args, **kwargs):
        global seen
        if os.path.abspath(os.fspath(destination)) == target or (
                target.startswith("staging:") and "/.tracekit-staging." in os.fspath(destination)
                and os.fspath(destination).endswith(target[len("staging:"):])):
            seen += 1
            if seen == count:
                os.kill(os.getpid(), signal.SIGSTOP)
        return real(source, destination, *args, **kwargs)
    return rename
os.replace, os.rename = stopping(os.replace), stopping(os.rename)
from tracekit.cli.main import cli
cli(sys.argv[3:], prog_name="tracekit")
"""

#: Where to stop: (name, target relative to the run's folder or "staging:" + the end of a staged path, n).
MOMENTS = [
    ("results JSON about to land", "out/results.json", 1),
    ("fifth trace page about to be staged", "staging:.html", 5),
    ("new index about to replace the old", "out/index.html", 1),
    ("trace pages about to move in", "out/traces", 1),
    ("single file about to land", "out/review.html", 1),
]
#: Moments before which the new report is not complete: the earlier one must still be there, whole.
BEFORE_COMPLETE = {"results JSON about to land", "fifth trace page about to be staged",
                   "new index about to replace the old"}  # fmt: skip
REPORT = re.compile(r"index\.html|runs-\d+\.html|cases|traces|kinds")
TEMPORARY = re.compile(r"\.tracekit-staging\.\d+\.\w+|\..+\.tracekit-\d+\.\w+\.tmp")


def _copy_traces(folder: Path, runs: tuple[str, ...]) -> None:
    for run in runs:
        for path in sorted((ROOT / "recordings" / run).glob("*.jsonl"))[:8]:
            (folder / run).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, folder / run / path.name)


def _command(where: Path) -> list[str]:
    out = where / "out"
    return ["analyze", str(where / "traces"), "--cases", str(ROOT / "cases"), "--json", str(out / "results.json"),
            "--html", str(out), "--html-single", str(out / "review.html"), "--no-progress"]  # fmt: skip


def _run(command: list[str], cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tracekit", *command], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}  # fmt: skip


def _hidden(folder: Path) -> list[str]:
    return [path.relative_to(folder).as_posix() for path in folder.rglob(".*")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, bytes]]:
    """What an uninterrupted run writes, and the earlier report (reference traces only), as snapshots."""
    where = tmp_path_factory.mktemp("clean")
    _copy_traces(where / "traces", ("reference",))
    _run(_command(where), where)
    earlier = _snapshot(where / "out")
    shutil.rmtree(where / "out")
    _copy_traces(where / "traces", ("flawed",))
    _run(_command(where), where)
    return {"earlier": earlier, "complete": _snapshot(where / "out")}


@pytest.mark.parametrize("earlier_report", [True, False], ids=["over-an-earlier-report", "first-report"])
@pytest.mark.parametrize(("moment", "target", "count"), MOMENTS, ids=[moment[0] for moment in MOMENTS])
def test_a_kill_at_any_moment_leaves_a_whole_report_or_the_earlier_one(
    tmp_path: Path, runs: dict[str, dict[str, bytes]], moment: str, target: str, count: int, earlier_report: bool
) -> None:
    out = tmp_path / "out"
    _copy_traces(tmp_path / "traces", ("reference", "flawed"))
    if earlier_report:
        for name, data in runs["earlier"].items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(data)
    stop_at = target if target.startswith("staging:") else str(tmp_path / target)
    with open(tmp_path / "killed.log", "wb") as log:
        process = subprocess.Popen([sys.executable, "-c", DRIVER, stop_at, str(count), *_command(tmp_path)],
                                   cwd=tmp_path, stdout=log, stderr=log)  # fmt: skip
    try:
        _, status = os.waitpid(process.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), f"the run ended before {moment}: {(tmp_path / 'killed.log').read_text()}"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()

    entries = sorted(os.listdir(out))
    visible = [name for name in entries if not name.startswith(".")]
    assert all(REPORT.fullmatch(name) or name in ("results.json", "review.html") for name in visible), visible
    assert all(TEMPORARY.fullmatch(Path(name).name) for name in _hidden(out) if "/" not in name), _hidden(out)
    if any(REPORT.fullmatch(name) for name in visible):
        assert "index.html" in visible, visible  # never pages without their index
    pages = {name: data for name, data in _snapshot(out).items() if REPORT.fullmatch(name.split("/")[0])}
    if moment in BEFORE_COMPLETE:  # the earlier report byte for byte, or none: no page before the whole report
        assert pages == ({name: data for name, data in runs["earlier"].items() if REPORT.fullmatch(name.split("/")[0])}
                         if earlier_report else {}), moment  # fmt: skip
    if moment == "results JSON about to land":
        assert (out / "results.json").exists() == earlier_report
        assert not earlier_report or (out / "results.json").read_bytes() == runs["earlier"]["results.json"]

    _run(_command(tmp_path), tmp_path)  # the next run
    assert _snapshot(out) == runs["complete"]
    assert _hidden(out) == []  # the killed run's temporaries are gone
