"""Latency the live guard adds to ``tracekit record``: the same proxy with and without ``--guard``.

Processes on loopback: the fixed upstream of ``proxy_latency.py`` (JSON and SSE answers, no work per
request), ``tracekit record`` in front of it, ``tracekit record --guard FILE`` in front of it too (a guard
file with a warn rule, a stop rule and every budget, so that every check runs; no limit is reached), and
this client. Each round sends the same request directly and through both proxies, in an order shuffled
from round to round, over one keep-alive connection per target. The guard's cost for a request is the
guarded proxy's time minus the plain proxy's time in the same round; its median is the figure
(target: at most 0.2 ms, issue 21).

Two request patterns: every request a new session (each request's conversation differs: the guard makes
a session, its detectors and trace builder, per request), and one session for all requests (the
``x-tracekit-session`` header: the guard takes each request's messages and feeds the calls they settle).

``--in-process`` measures the guard's two stages without HTTP instead: the proxy's exchange tracker, recorder
and ``LiveGuard`` driven directly, the medians of the CPU time of the thread (``time.thread_time_ns``) over
the requests, which a shared machine disturbs far less than wall-clock latency.

Usage::

    python benchmarks/guard_overhead.py [--requests 400] [--out benchmarks/results/guard_overhead.md]
    python benchmarks/guard_overhead.py --in-process [--requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tracekit.guard import LiveGuard, load_guard_config
from tracekit.providers import get_provider
from tracekit.proxy.exchange import Exchange
from tracekit.proxy.observers import watch_answer, watch_request
from tracekit.proxy.recorder import Recorder
from tracekit.proxy.request import read_request
from tracekit.proxy.tracking import ExchangeTracker
from tracekit.redact import Redactor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy_latency import GUARD_FILE, REPLY, percentile, request_body, round_order  # a sibling script


def turn(number: int, stream: bool) -> bytes:
    """``proxy_latency``'s request (system prompt, a tool round trip, a user message) whose tool call differs
    from request to request: a session that works, not one that loops (the guard would note a loop, and the
    recorder write the notes; that is not the cost of watching)."""
    body = json.loads(request_body(number, stream))
    body["messages"][1]["content"][0]["input"]["request"] = number
    return json.dumps(body, ensure_ascii=False).encode()


def timed(connection: http.client.HTTPConnection, body: bytes, stream: bool, session: str | None) -> float:
    """Milliseconds until the whole JSON body, or the first complete SSE event, arrived."""
    headers = {"content-type": "application/json", "x-api-key": "bench-key-not-secret"}
    if session:
        headers["x-tracekit-session"] = session
    started = time.perf_counter()
    connection.request("POST", "/v1/messages", body=body, headers=headers)
    response = connection.getresponse()
    if not stream:
        response.read()
        return (time.perf_counter() - started) * 1000
    buffer = b""
    while b"\n\n" not in buffer:
        buffer += response.read1(65536)
    elapsed = (time.perf_counter() - started) * 1000
    response.read()
    return elapsed


def measure(ports: dict[str, int], requests: int, warmup: int, stream: bool, one_session: bool) -> dict[str, float]:
    """Interleaved rounds; the guard's added time per request (guarded minus plain, same round)."""
    names = list(ports)
    connections = {name: http.client.HTTPConnection("127.0.0.1", port) for name, port in ports.items()}
    samples: dict[str, list[float]] = {name: [] for name in names}
    for number in range(warmup + requests):
        body = turn(number, stream)
        for name in round_order(names, number):
            session = f"bench-{name}" if one_session and name != "direct" else None
            elapsed = timed(connections[name], body, stream, session)
            if number >= warmup:
                samples[name].append(elapsed)
    for connection in connections.values():
        connection.close()
    added = [g - p for g, p in zip(samples["record --guard"], samples["record"], strict=True)]
    return {
        "direct": statistics.median(samples["direct"]),
        "record": statistics.median(samples["record"]),
        "guard": statistics.median(samples["record --guard"]),
        "added_median": statistics.median(added),
        "added_p99": percentile(added, 0.99),
    }


def start_record(upstream_port: int, out: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(["tracekit", "record", "--upstream", f"http://127.0.0.1:{upstream_port}", "--port",
                                "0", "--out", str(out), *extra], stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None
    return process, int(process.stdout.readline().rsplit(":", 1)[1])


def in_process(requests: int, warmup: int, one_session: bool) -> dict[str, float]:
    """Milliseconds of CPU (medians): the guard's request stage, which the client waits for, and its answer
    stage, which runs after the answer went out; each request recorded as the proxy records it."""
    provider = get_provider("anthropic")
    reply = json.dumps(REPLY, ensure_ascii=False).encode()

    async def run(scratch: Path) -> dict[str, float]:
        tracker = ExchangeTracker(Recorder(scratch, Redactor()))
        assert tracker.recorder is not None
        (scratch / "guard.yaml").write_text(GUARD_FILE, encoding="utf-8")
        guard = LiveGuard(load_guard_config(scratch / "guard.yaml"))
        headers = {"x-tracekit-session": "bench"} if one_session else {}
        stages: dict[str, list[int]] = {"request": [], "answer": []}
        for number in range(warmup + requests):
            parsed = read_request("/v1/messages", "", headers, turn(number, False), provider)
            exchange = Exchange(parsed, tracker.begin(parsed))
            started = time.thread_time_ns()
            watch_request(guard, exchange)
            asked = time.thread_time_ns()
            received = exchange.received
            received.status, received.answered, received.body = 200, True, reply
            outcome = tracker.complete(exchange)  # schedules the recording, run by the sleep below
            answered = time.thread_time_ns()
            watch_answer(guard, exchange, outcome)  # before the recording, as the proxy's tracker runs it
            done = time.thread_time_ns()
            await asyncio.sleep(0)
            if number >= warmup:
                stages["request"].append(asked - started)
                stages["answer"].append(done - answered)
        await tracker.recorder.written()
        tracker.close()
        return {stage: statistics.median(values) / 1e6 for stage, values in stages.items()}

    with tempfile.TemporaryDirectory() as scratch:
        return asyncio.run(run(Path(scratch)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="Measured requests per row.")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--out", type=Path, help="Write the results as Markdown here.")
    parser.add_argument("--in-process", action="store_true", help="The guard's CPU per request, without HTTP.")
    args = parser.parse_args()
    if args.in_process:
        for pattern, one_session in (("a new session per request", False), ("one session", True)):
            row = in_process(args.requests, args.warmup, one_session)
            print(f"{pattern}: request stage {row['request']:.4f} ms, answer {row['answer']:.4f} ms (CPU, median)")
        return 0
    load_before = os.getloadavg()[0]
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        port_file = Path(scratch) / "port"
        latency = str(Path(__file__).resolve().parent / "proxy_latency.py")
        upstream = subprocess.Popen([sys.executable, latency, "--serve-upstream", str(port_file)])
        processes: list[subprocess.Popen[str]] = []
        try:
            deadline = time.monotonic() + 20
            while not port_file.exists() or not port_file.read_text():
                if time.monotonic() > deadline:
                    raise SystemExit("the upstream did not start")
                time.sleep(0.05)
            upstream_port = int(port_file.read_text())
            guard = Path(scratch) / "guard.yaml"
            guard.write_text(GUARD_FILE, encoding="utf-8")
            plain, plain_port = start_record(upstream_port, Path(scratch) / "plain")
            guarded, guarded_port = start_record(upstream_port, Path(scratch) / "guarded", "--guard", str(guard))
            processes += [plain, guarded]
            ports = {"direct": upstream_port, "record": plain_port, "record --guard": guarded_port}
            for pattern, one_session in (("a new session per request", False), ("one session", True)):
                for kind, stream in (("JSON response", False), ("first SSE event", True)):
                    rows[f"{kind}, {pattern}"] = measure(ports, args.requests, args.warmup, stream, one_session)
        finally:
            for process in [*processes, upstream]:
                process.terminate()
                process.wait(timeout=10)
    command = "python benchmarks/guard_overhead.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    report = render(rows, args.requests, command, (load_before, os.getloadavg()[0]))
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0


def render(rows: dict[str, dict[str, float]], requests: int, command: str, load: tuple[float, float]) -> str:
    lines = [
        "# Guard overhead: `tracekit record --guard` vs. `tracekit record`",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs. Loopback only; {requests} measured requests per "
        "row after warm-up, direct / record / record --guard interleaved, their order shuffled each round "
        "(seeded). Added by the guard = guarded minus plain in the same round. Load average (1 min) "
        f"{load[0]:.2f} before and {load[1]:.2f} after (a shared machine).",
        "",
        "Milliseconds.",
        "",
        "| request | direct median | record median | record --guard median | **guard added, median** | "
        "guard added, p99 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['direct']:.3f} | {row['record']:.3f} | {row['guard']:.3f} | "
                     f"**{row['added_median']:.3f}** | {row['added_p99']:.3f} |")  # fmt: skip
    worst = max(row["added_median"] for row in rows.values())
    lines += ["", f"Target (issue 21): the guard adds at most 0.2 ms median per request: "
              f"{'met' if worst <= 0.2 else 'missed'} (largest median {worst:.3f} ms)."]  # fmt: skip
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
