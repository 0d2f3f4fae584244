"""Load with faults: 50 concurrent SDK sessions x 40 turns through one ``tracekit record`` child process, in
front of a fake upstream that injects seeded random faults (429/500/529 with and without
``retry-after-ms``, connection resets, streams cut mid-event, in-stream error events, slow first tokens).

Requests are counted at the client (a capturing httpx2 transport under the SDKs) and at the upstream, and
paired one to one, per session and in order, with the exchange records of that session's trace:
- every request that reached the proxy has exactly one exchange record (0 lost, 0 extra);
- successful answers reach the client byte for byte as the upstream sent them, and the trace keeps the
  same bytes (the SSE text) or body;
- failed ones are recorded with their failure and reach the client as the upstream sent them.

Added latency under this load is measured by ``probe.py``, a separate process sending pairs of
identical requests straight to the upstream and through the proxy while the load runs (the SDK clients
themselves share one busy process with the fake upstream, so their own timings mostly measure that).

Figures (printed; also written as JSON to $TRACEKIT_RELIABILITY_FIGURES when set) go to
benchmarks/results.md. Sizes and seed: $TRACEKIT_LOAD_SESSIONS, $TRACEKIT_LOAD_TURNS, $TRACEKIT_LOAD_SEED.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracekit.testing import FakeRequest
from tracekit.trace import load_trace

from .load import (
    PROBE_PREFIX,
    STREAM_ERROR_MESSAGE,
    SUCCESS_KINDS,
    FaultPlan,
    LoadClients,
    SessionResult,
    run_session,
)
from .probe import PROBE_SESSION
from .support import (
    TURN_HEADER,
    CapturingUpstream,
    Key,
    Received,
    RecordProcess,
    Served,
    exchange_records,
    percentile,
    read_lines,
    request_key,
)

SESSIONS = int(os.environ.get("TRACEKIT_LOAD_SESSIONS", "50"))
TURNS = int(os.environ.get("TRACEKIT_LOAD_TURNS", "40"))
SEED = int(os.environ.get("TRACEKIT_LOAD_SEED", "20260407"))
PROBE_PAIRS = os.environ.get("TRACEKIT_LOAD_PROBE_PAIRS", "100000")


@dataclass
class LoadRun:
    """Everything one load run left behind, for the tests below to check."""

    plan: FaultPlan
    requests: dict[Key, FakeRequest]
    served: dict[Key, Served]
    received: list[Received]
    sessions: list[SessionResult]
    traces: dict[str, Path]
    """Session name -> its trace file."""
    probe: dict[str, Any]
    """What probe.py measured: ``pairs`` of (ms to first byte, ms to last byte) direct and proxied."""
    trace_dir: Path
    exit_status: int
    proxy_cpu_seconds: float | None
    stop_seconds: float
    wall_seconds: float


@pytest.fixture(scope="module")
def load_run(tmp_path_factory: pytest.TempPathFactory) -> LoadRun:
    root = tmp_path_factory.mktemp("load")
    plan = FaultPlan(SEED)
    upstream = CapturingUpstream(plan)
    with upstream:
        proxy = RecordProcess(upstream.url, root / "traces", root / "logs")
        stop_file, probe_file = root / "probe.stop", root / "probe.json"
        probe_args = [upstream.url, proxy.url, str(stop_file), str(probe_file), PROBE_PAIRS]
        probe = subprocess.Popen([sys.executable, str(Path(__file__).with_name("probe.py")), *probe_args])
        started = time.perf_counter()
        try:
            sessions, clients = asyncio.run(_drive(proxy.url))
        finally:
            stop_file.touch()
            probe.wait(timeout=60)
            proxy_cpu = proxy.cpu_seconds()
            stop_started = time.perf_counter()
            exit_status = proxy.stop()
            stop_seconds = time.perf_counter() - stop_started
        wall = time.perf_counter() - started
        requests = {request_key(r.headers): r for r in upstream.requests if TURN_HEADER in r.headers}
        assert len(requests) == len(upstream.requests), "every upstream request carries a unique key"
        requests = {key: r for key, r in requests.items() if not key[0].startswith(PROBE_PREFIX)}
        served = dict(upstream.served)
    traces: dict[str, Path] = {}
    for path in sorted((root / "traces").glob("*.jsonl")):
        session = str(read_lines(path)[0].get("session"))
        assert session not in traces, f"two trace files for session {session}"
        traces[session] = path
    probed = orjson.loads(probe_file.read_bytes())
    return LoadRun(plan, requests, served, clients.transport.received, sessions, traces, probed, root / "traces",
                   exit_status, proxy_cpu, stop_seconds, wall)  # fmt: skip


async def _drive(url: str) -> tuple[list[SessionResult], LoadClients]:
    clients = LoadClients.create(url)
    try:
        sessions = await asyncio.gather(*(
            run_session(clients, f"load-{index:02d}", ("anthropic", "openai")[index % 2], TURNS, SEED)
            for index in range(SESSIONS)
        ))  # fmt: skip
    finally:
        await clients.aclose()
    return list(sessions), clients


def _received_by_session(run: LoadRun) -> dict[str, list[Received]]:
    by_session: dict[str, list[Received]] = {}
    for received in run.received:
        by_session.setdefault(received.key[0].split(":")[0], []).append(received)
    return by_session


def _pairs(run: LoadRun) -> list[tuple[Received, dict[str, Any]]]:
    """Each client request with its exchange record (checked one to one, per session, in order)."""
    pairs: list[tuple[Received, dict[str, Any]]] = []
    for name, received in _received_by_session(run).items():
        records = exchange_records(read_lines(run.traces[name]))
        assert len(records) == len(received), f"{name}: {len(received)} requests, {len(records)} exchange records"
        pairs.extend(zip(received, records, strict=True))
    return pairs


def test_the_proxy_stopped_cleanly_and_every_session_has_one_trace(load_run: LoadRun) -> None:
    assert load_run.exit_status == 0
    assert load_run.stop_seconds < 5, "SIGTERM: finish writing and exit within 5 seconds"
    assert sorted(load_run.traces) == sorted([*(s.name for s in load_run.sessions), PROBE_SESSION])
    assert all(s.turns_done == TURNS for s in load_run.sessions)


def test_every_request_reached_the_upstream_once_and_has_exactly_one_exchange_record(load_run: LoadRun) -> None:
    client_keys = [received.key for received in load_run.received]
    assert len(client_keys) == len(set(client_keys)), "the client keys each request uniquely"
    assert sorted(client_keys) == sorted(load_run.requests), "each request was forwarded upstream exactly once"
    lost = extra = 0
    for name, received in _received_by_session(load_run).items():
        records = exchange_records(read_lines(load_run.traces[name]))
        lost += max(0, len(received) - len(records))
        extra += max(0, len(records) - len(received))
    assert (lost, extra) == (0, 0)


def test_records_pair_with_requests_in_order_and_say_what_happened(load_run: LoadRun) -> None:
    problems = []
    for received, record in _pairs(load_run):
        problems += _check_exchange(load_run, received, record)
    assert problems == [], f"{len(problems)} problems, first ones:\n" + "\n".join(problems[:15])


def test_every_reply_an_agent_got_is_in_its_trace(load_run: LoadRun) -> None:
    for session in load_run.sessions:
        recorded = {(r.get("response") or {}).get("id") for r in read_lines(load_run.traces[session.name])
                    if r["kind"] == "model_call"}  # fmt: skip
        missing = [rid for rid, _ in session.completed if rid not in recorded]
        assert missing == [], f"{session.name}: replies the agent got but the trace lacks: {missing[:5]}"


def test_every_probe_request_through_the_proxy_has_one_exchange_record(load_run: LoadRun) -> None:
    probe = load_run.probe
    assert probe["errors"] == [] and len(probe["pairs"]) > 50
    records = exchange_records(read_lines(load_run.traces[PROBE_SESSION]))
    assert len(records) == len(probe["pairs"])
    assert all(r["kind"] == "model_call" and r["status"] == 200 for r in records)


def test_the_traces_read_back_without_problems(load_run: LoadRun) -> None:
    for path in load_run.traces.values():
        trace = load_trace(path)
        assert trace.problems == [], trace.problems[:3]


def test_figures(load_run: LoadRun) -> None:
    """Collect the figures for benchmarks/results.md (and check the load was the one asked for)."""
    figures = _figures(load_run)
    print("\nload figures:", orjson.dumps(figures, option=orjson.OPT_INDENT_2).decode())
    target = os.environ.get("TRACEKIT_RELIABILITY_FIGURES")
    if target:
        Path(target).write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    assert figures["sessions"] == SESSIONS and figures["records_lost"] == 0
    faults = figures["faults_injected"]
    if SESSIONS * TURNS < 1000:
        return  # a small run (set by environment variables) need not draw every kind of fault
    assert all(faults.get(kind, 0) > 0 for kind in ("429_retry_after_ms", "reset", "cut", "stream_error", "slow")), (
        "the seeded plan exercised every kind of fault"
    )


# -- checking one exchange -------------------------------------------------------------------------------


def _check_exchange(run: LoadRun, received: Received, record: dict[str, Any]) -> list[str]:
    key = received.key
    kind = run.plan.kinds[key]
    served = run.served[key]
    stream = run.requests[key].stream
    where = f"{key} ({kind}, {'stream' if stream else 'json'})"
    sent = served.sent
    wire = served.wire
    problems: list[str] = []

    def expect(condition: bool, what: str) -> None:
        if not condition:
            problems.append(f"{where}: {what}")

    if kind in SUCCESS_KINDS:
        assert wire is not None and sent is not None
        expect(received.status == 200 and received.complete, f"client got status {received.status}, "
               f"complete={received.complete}, error={received.error}")  # fmt: skip
        expect(received.body == sent, "the client's bytes differ from the upstream's")
        expect(
            record["kind"] == "model_call" and record["status"] == 200,
            f"record {record['kind']} {record.get('status')}",
        )
        expect(
            "error" not in record and not record.get("partial"), f"success recorded as failed: {record.get('error')}"
        )
        if stream:
            expect(record.get("sse") == sent.decode(), "the recorded SSE differs from what the upstream sent")
        else:
            expect(record.get("response") == orjson.loads(sent), "the recorded response differs")
    elif kind == "reset":
        expect(wire is None, "the upstream answered a reset")
        expect(received.status is None and received.error is not None, f"client got status {received.status}")
        expect(record.get("transport") == "reset", f"recorded transport {record.get('transport')}")
    elif kind == "cut":
        assert sent is not None
        expect(not received.complete, "the client saw a complete answer to a cut one")
        expect(record.get("transport") == "cut", f"recorded transport {record.get('transport')}")
        if stream:
            expect(received.status == 200 and received.body == sent, "the client's bytes before the cut differ")
            expect(record.get("sse") == sent.decode("utf-8", "replace"), "the recorded SSE before the cut differs")
            expect(record.get("partial") is True, "a cut stream is not marked partial")
    elif kind == "stream_error" and stream:
        assert sent is not None
        # The SDK stops reading at the error event (the last one sent), so "complete" is not asked for.
        expect(received.status == 200 and received.body == sent, "the in-stream error reached the client differently")
        expect(record.get("sse") == sent.decode(), "the recorded SSE differs from what the upstream sent")
        expect(
            (record.get("error") or {}).get("message") == STREAM_ERROR_MESSAGE, f"recorded error {record.get('error')}"
        )
    else:  # an HTTP error status with the provider's error body
        assert wire is not None and sent is not None
        expect(received.status == wire.status and received.body == sent,
               f"client got {received.status} instead of {wire.status} (or another body)")  # fmt: skip
        expect(record.get("status") == wire.status, f"recorded status {record.get('status')} for {wire.status}")
        recorded_error = record.get("error") if record["kind"] == "model_call" else record.get("body")
        expect(bool(recorded_error), "the error body was not recorded")
    return problems


# -- figures ---------------------------------------------------------------------------------------------


def _figures(run: LoadRun) -> dict[str, Any]:
    pairs = run.probe["pairs"]
    json_pairs = [p for p in pairs if not p["stream"]]
    sse_pairs = [p for p in pairs if p["stream"]]

    def spread(values: list[float]) -> dict[str, float]:
        return {"n": len(values), "p50": round(percentile(values, 0.5), 2), "p99": round(percentile(values, 0.99), 2)}

    lost = 0
    records = 0
    for name, received in _received_by_session(run).items():
        count = len(exchange_records(read_lines(run.traces[name])))
        records += count
        lost += max(0, len(received) - count)
    kinds = Counter(run.plan.kinds[r.key] for r in run.received)
    gave_up: Counter[str] = Counter()
    for session in run.sessions:
        gave_up.update(session.failures)
    return {
        "seed": SEED,
        "sessions": len(run.sessions),
        "turns_per_session": TURNS,
        "turns_with_a_reply": sum(len(s.completed) for s in run.sessions),
        "http_requests_client": len(run.received),
        "http_requests_upstream": len(run.requests),
        "exchange_records": records,
        "records_lost": lost,
        "faults_injected": {kind: count for kind, count in sorted(kinds.items()) if kind != "ok"},
        "faults_total": sum(count for kind, count in kinds.items() if kind != "ok"),
        "sdk_gave_up": dict(sorted(gave_up.items())),
        "added_latency_ms": {
            "json_total": spread([p["proxied"][1] - p["direct"][1] for p in json_pairs]),
            "sse_first_byte": spread([p["proxied"][0] - p["direct"][0] for p in sse_pairs]),
            "sse_total": spread([p["proxied"][1] - p["direct"][1] for p in sse_pairs]),
        },
        "direct_latency_ms": {
            "json_total": spread([p["direct"][1] for p in json_pairs]),
            "sse_first_byte": spread([p["direct"][0] for p in sse_pairs]),
        },
        "trace_bytes": sum(path.stat().st_size for path in run.trace_dir.glob("*.jsonl")),
        "wall_seconds": round(run.wall_seconds, 1),
        "proxy_cpu_seconds": run.proxy_cpu_seconds,
        "stop_seconds": round(run.stop_seconds, 2),
    }
