"""Crash: ``kill -9`` of ``tracekit run`` in the middle of a run (the offline scripted model, B2-TS and B2-PC cases).

The runner writes each job's trace under a hidden temporary name and renames it into place when the job
is over. After the kill every visible trace file is complete and reads back; re-running the same command
resumes: it runs only the missing jobs, cleans the partial files up and leaves the complete ones byte for
byte as they were.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from pathlib import Path

from tracekit.trace import load_trace

from .support import clean_env, tracekit_command

CASES = ["B2-TS", "B2-PC"]  # 28 jobs
KILL_AFTER_TRACES = 8


def _run_args(out: Path) -> list[str]:
    return ["run", *CASES, "--model", "scripted:reference", "--out", str(out), "--no-summary", "--no-progress"]


def _digests(out: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(out.glob("*.jsonl"))}


def test_kill_9_mid_run_leaves_complete_traces_and_a_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(tracekit_command(_run_args(out)), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=clean_env())  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list(out.glob("*.jsonl"))) < KILL_AFTER_TRACES:
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.01)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -9
    before = _digests(out)
    assert len(before) >= KILL_AFTER_TRACES
    for name in before:
        trace = load_trace(out / name)
        assert trace.problems == [], trace.problems
        assert trace.records[-1].kind == "agent_run", f"{name} is visible but not complete"

    rerun = subprocess.run(tracekit_command(_run_args(out)), capture_output=True, env=clean_env(), timeout=120)
    assert rerun.returncode == 0, rerun.stderr.decode()[-2000:]
    counts = re.search(rb"(\d+) jobs run, (\d+) already complete, (\d+) with errors", rerun.stdout + rerun.stderr)
    assert counts is not None, rerun.stdout.decode()[-500:]
    ran, already, errors = (int(n) for n in counts.groups())
    assert (already, errors) == (len(before), 0)
    after = _digests(out)
    assert {name: after[name] for name in before} == before, "a complete trace was rewritten"
    assert len(after) == ran + already
    assert list(out.glob(".*.part")) == [], "partial files of the killed run are cleaned up"
    for name in after:
        assert load_trace(out / name).problems == []
