"""Crash: ``kill -9`` of the recording proxy in the middle of a load with faults.

- Every reply an agent had received before the kill is in its session's trace on disk, and every trace
  file reads back, with at most a torn last line (the record being written when the process died).
- A proxy restarted on the same folder, with the same session names, writes new files and leaves the old
  ones byte for byte as they were.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tracekit.trace import load_trace

from .load import FaultPlan, LoadClients, SessionResult, run_session
from .support import CapturingUpstream, RecordProcess, exchange_records, read_lines, request_key

SESSIONS = 20
KILL_AFTER_REPLIES = 150
SEED = 7


async def _load_until_killed(proxy: RecordProcess) -> tuple[list[SessionResult], float]:
    """Run SESSIONS endless sessions; kill -9 the proxy once KILL_AFTER_REPLIES replies were received."""
    clients = LoadClients.create(proxy.url)
    stop = asyncio.Event()
    results = [SessionResult(f"crash-{i:02d}", ("anthropic", "openai")[i % 2]) for i in range(SESSIONS)]
    tasks = [
        asyncio.create_task(run_session(clients, r.name, r.provider, 10_000, SEED, stop, result=r)) for r in results
    ]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(len(r.completed) for r in results) < KILL_AFTER_REPLIES:
            await asyncio.sleep(0.005)
        killed_at = time.perf_counter()
        proxy.kill()
        stop.set()
        await asyncio.gather(*tasks)
    finally:
        stop.set()
        await clients.aclose()
    return results, killed_at


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("crash")
    out = root / "traces"
    with CapturingUpstream(FaultPlan(SEED)) as upstream:
        proxy = RecordProcess(upstream.url, out, root / "logs")
        sessions, killed_at = asyncio.run(_load_until_killed(proxy))
        before = {path.name: _sha256(path) for path in out.glob("*.jsonl")}
        forwarded = Counter(request_key(r.headers)[0].split(":")[0] for r in upstream.requests)
        restarted = RecordProcess(upstream.url, out, root / "logs", name="restarted")
        try:
            again = asyncio.run(_rerun(restarted))
        finally:
            restart_status = restarted.stop()
    return {"out": out, "sessions": sessions, "killed_at": killed_at, "before": before, "forwarded": forwarded,
            "again": again, "restart_status": restart_status, "proxy_status": proxy.process.returncode}  # fmt: skip


async def _rerun(proxy: RecordProcess) -> list[SessionResult]:
    clients = LoadClients.create(proxy.url)
    try:
        names = [f"crash-{i:02d}" for i in range(5)]  # the same session names as before the crash
        return list(await asyncio.gather(*(run_session(clients, n, "anthropic", 5, SEED + 1) for n in names)))
    finally:
        await clients.aclose()


def test_the_proxy_was_killed_mid_load(crashed: dict[str, Any]) -> None:
    assert crashed["proxy_status"] == -9
    replies = sum(len(s.completed) for s in crashed["sessions"])
    assert replies >= 150
    assert len(crashed["before"]) == SESSIONS


def test_every_reply_received_before_the_kill_is_on_disk(crashed: dict[str, Any]) -> None:
    on_disk: dict[str, set[str]] = {}
    for name in crashed["before"]:
        trace = load_trace(crashed["out"] / name)
        ids = on_disk.setdefault(trace.header.session or "", set())
        ids.update(str((r.response or {}).get("id")) for r in trace.records if r.kind == "model_call")
    missing = [
        (session.name, reply_id)
        for session in crashed["sessions"]
        for reply_id, received_at in session.completed
        if received_at < crashed["killed_at"] and reply_id not in on_disk.get(session.name, set())
    ]
    assert missing == []


def test_at_most_the_exchange_in_flight_per_session_is_lost(crashed: dict[str, Any]) -> None:
    """Each session sends one request at a time, so at most one per session can be in flight at the kill."""
    lost = 0
    for name in crashed["before"]:
        records = read_lines(crashed["out"] / name)
        session = records[0]["session"]
        recorded = len(exchange_records(records))
        forwarded = crashed["forwarded"][session]
        assert forwarded - 1 <= recorded <= forwarded, f"{session}: {forwarded} forwarded, {recorded} recorded"
        lost += forwarded - recorded
    print(f"\ncrash figures: {sum(crashed['forwarded'].values())} requests forwarded before the kill, {lost} in flight")


def test_the_files_left_by_the_kill_read_back_with_at_most_a_torn_last_line(crashed: dict[str, Any]) -> None:
    torn = 0
    for name in crashed["before"]:
        path = crashed["out"] / name
        lines = path.read_bytes().splitlines()
        trace = load_trace(path)
        for problem in trace.problems:
            assert problem.line == len(lines) and "torn" in problem.message, str(problem)
        torn += len(trace.problems)
    assert torn <= SESSIONS
    replies = sum(1 for s in crashed["sessions"] for _, at in s.completed if at < crashed["killed_at"])
    print(f"\ncrash figures: {len(crashed['before'])} trace files, {replies} replies received before kill -9, "
          f"0 missing on disk, {torn} torn last lines")  # fmt: skip


def test_a_restarted_proxy_writes_new_files_and_leaves_the_old_ones_alone(crashed: dict[str, Any]) -> None:
    assert crashed["restart_status"] == 0
    out: Path = crashed["out"]
    after = {path.name: _sha256(path) for path in out.glob("*.jsonl")}
    assert {name: after[name] for name in crashed["before"]} == crashed["before"]
    new_files = sorted(set(after) - set(crashed["before"]))
    assert len(new_files) == 5
    for name in new_files:
        trace = load_trace(out / name)
        assert trace.problems == []
        assert trace.header.session in {f"crash-{i:02d}" for i in range(5)}
        assert len(read_lines(out / name)) > 1
    assert all(s.turns_done == 5 for s in crashed["again"])
