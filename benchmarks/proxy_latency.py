"""Added latency of ``tracekit record``: JSON responses and the first SSE event, proxied vs direct, on the
Anthropic Messages API and the OpenAI Responses API.

Processes on loopback (``proxy_targets``): a minimal upstream (this file with ``--serve-upstream``: fixed
JSON and SSE answers on ``/v1/messages`` and ``/v1/responses``, no work per request), ``tracekit record`` in front of
it (writing traces to a temporary folder), a bare aiohttp forwarder as a reference point
(``--serve-forwarder``; skip it with ``--no-baseline``), with ``--guard`` a second ``tracekit record`` with
the live guard (``GUARD_FILE``: a warn rule, a stop rule and every budget, none reached, so every check runs),
and this client. Each round sends the same
request directly and through each proxy, in an order shuffled from round to round, over one keep-alive
connection per target, so all see the same machine state. The added latency of a proxied request is its
time minus the direct request's time in the same round; what the guard adds is the guarded proxy's time
minus the plain one's in the same round (target: at most 0.2 ms median, issue 21).

With ``--concurrency N`` it measures throughput instead (``proxy_load``): N client connections at once,
each an agent session, in rounds that rotate between the targets; per target requests per second and the
p99 latency (targets, issue 20: ``tracekit record`` at >= 0.9x the forwarder's rate and <= 1.5x its p99).

A peer row, mitmproxy in reverse mode with streaming on (``mitmdump --mode reverse:http://127.0.0.1:UP
--set stream_large_bodies=1 -p PORT -q``), is added when ``mitmdump`` is found (``--mitmdump PATH``, else
on PATH; skipped with a note otherwise). It is never a tracekit dependency; install it into a venv of its
own::

    python -m venv MITM_VENV && MITM_VENV/bin/pip install mitmproxy==11.0.2

Usage::

    python benchmarks/proxy_latency.py [--requests 500] [--guard] [--mitmdump MITM_VENV/bin/mitmdump]
        [--out benchmarks/results/proxy_latency.md]
    python benchmarks/proxy_latency.py --concurrency 64 [--rounds 5] [--per-connection 20] [--mitmdump ...]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy_load import measure_load, render_load  # sibling scripts
from proxy_targets import GUARD_FILE, GUARDED, RECORD, REPLY, serve_forwarder, serve_upstream, start_targets

__all__ = ["GUARD_FILE", "REPLY", "percentile", "request_body"]  # what guard_overhead.py takes from here


def request_body(number: int, stream: bool, route: str = "/v1/messages") -> bytes:
    """A realistic turn: system prompt, a tool round trip, a new user message (about 2 KB)."""
    if route == "/v1/responses":
        return responses_request_body(number, stream)
    messages = [
        {"role": "user", "content": f"第 {number} 次：北京明天天气怎么样？" + "请详细说明。" * 20},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{number}", "name": "maps_weather",
                                           "input": {"city": "北京", "date": "2026-04-08"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{number}",
                                      "content": '{"weather": "晴", "high": 25, "low": 12}'}]},
    ]  # fmt: skip
    body = {"model": "claude-bench", "max_tokens": 512, "system": "你是一个出行助手。" * 30, "messages": messages,
            "tools": [{"name": "maps_weather", "description": "天气", "input_schema": {"type": "object"}}]}  # fmt: skip
    if stream:
        body["stream"] = True
    return json.dumps(body, ensure_ascii=False).encode()


def responses_request_body(number: int, stream: bool) -> bytes:
    """The same turn as the Responses API sends it: instructions, input items, a function tool."""
    call_id = f"call_{number}"
    items = [
        {"role": "user", "content": f"第 {number} 次：北京明天天气怎么样？" + "请详细说明。" * 20},
        {"type": "function_call", "id": f"fc_{number}", "call_id": call_id, "name": "maps_weather",
         "arguments": '{"city": "北京", "date": "2026-04-08"}'},
        {"type": "function_call_output", "call_id": call_id, "output": '{"weather": "晴", "high": 25, "low": 12}'},
    ]  # fmt: skip
    body: dict[str, Any] = {"model": "gpt-bench", "instructions": "你是一个出行助手。" * 30, "input": items,
            "tools": [{"type": "function", "name": "maps_weather", "description": "天气",
                       "parameters": {"type": "object"}}]}  # fmt: skip
    if stream:
        body["stream"] = True
    return json.dumps(body, ensure_ascii=False).encode()


def timed_request(connection: http.client.HTTPConnection, body: bytes, stream: bool, route: str) -> float:
    """Seconds until the whole JSON body, or until the first complete SSE event, arrived."""
    started = time.perf_counter()
    connection.request("POST", route, body=body, headers={"content-type": "application/json",
                                                          "x-api-key": "bench-key-not-secret"})  # fmt: skip
    response = connection.getresponse()
    if not stream:
        response.read()
        return time.perf_counter() - started
    buffer = b""
    while b"\n\n" not in buffer:
        buffer += response.read1(65536)
    elapsed = time.perf_counter() - started
    response.read()
    return elapsed


def round_order(names: list[str], number: int) -> list[str]:
    """The targets of round ``number`` in a shuffled order, the same on every run (seeded by the round).

    A plain rotation keeps the cyclic order, so a target always follows the same one and pays for its
    predecessor's work after the answer (a proxy recording on the other core); shuffled, every target
    follows every other one equally often."""
    return random.Random(number).sample(names, len(names))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(
    direct_port: int, proxies: dict[str, int], requests: int, stream: bool, warmup: int, route: str
) -> dict[str, dict]:
    """Interleave direct and proxied requests (the order shuffled each round); per proxy, the added latency
    of each proxied request over the direct one of the same round (and, with the guarded proxy, the guard's
    own: guarded minus plain, same round, under ``"guard"``)."""
    names = ["direct", *proxies]
    connections = {"direct": http.client.HTTPConnection("127.0.0.1", direct_port)}
    connections.update({name: http.client.HTTPConnection("127.0.0.1", port) for name, port in proxies.items()})
    samples: dict[str, list[float]] = {name: [] for name in names}
    for number in range(warmup + requests):
        body = request_body(number, stream, route)
        for name in round_order(names, number):
            elapsed = timed_request(connections[name], body, stream, route)
            if number >= warmup:
                samples[name].append(elapsed * 1000)
    for connection in connections.values():
        connection.close()
    direct = samples["direct"]
    results = {}
    for name in proxies:
        added = [p - d for p, d in zip(samples[name], direct, strict=True)]
        results[name] = {
            "direct_median": statistics.median(direct),
            "proxied_median": statistics.median(samples[name]),
            "added_median": statistics.median(added),
            "added_p99": percentile(added, 0.99),
            "direct_p99": percentile(direct, 0.99),
            "proxied_p99": percentile(samples[name], 0.99),
        }
    if GUARDED in proxies:
        guard = [g - p for g, p in zip(samples[GUARDED], samples[RECORD], strict=True)]
        results["guard"] = {"record_median": statistics.median(samples[RECORD]),
                            "guarded_median": statistics.median(samples[GUARDED]),
                            "added_median": statistics.median(guard), "added_p99": percentile(guard, 0.99)}  # fmt: skip
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=500, help="Measured requests of each kind and route.")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--out", type=Path, help="Write the results as Markdown here.")
    parser.add_argument("--no-baseline", action="store_true", help="Skip the bare aiohttp forwarder reference.")
    parser.add_argument("--guard", action="store_true", help="Add a `tracekit record --guard` row (issue 21).")
    parser.add_argument("--mitmdump", help="The mitmdump to run for the mitmproxy row (default: on PATH).")
    parser.add_argument("--concurrency", type=int, help="Measure throughput with this many client connections.")
    parser.add_argument("--rounds", type=int, default=5, help="Load rounds per target (with --concurrency).")
    parser.add_argument("--per-connection", type=int, default=20, help="Requests per connection and round.")
    parser.add_argument("--serve-upstream", metavar="PORT_FILE", help=argparse.SUPPRESS)
    parser.add_argument("--serve-forwarder", metavar="UPSTREAM_PORT", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return 0
    if args.serve_forwarder:
        serve_forwarder(args.serve_forwarder)
        return 0
    load_before = os.getloadavg()[0]
    processes: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as scratch:
        port_file = Path(scratch) / "port"
        processes.append(subprocess.Popen([sys.executable, __file__, "--serve-upstream", str(port_file)]))
        try:
            deadline = time.monotonic() + 20
            while not port_file.exists() or not port_file.read_text():
                if time.monotonic() > deadline:
                    raise SystemExit("the upstream did not start")
                time.sleep(0.05)
            upstream_port = int(port_file.read_text())
            traces = Path(scratch) / "traces"
            proxies, notes = start_targets(args, Path(scratch), upstream_port, processes)
            pids = {"direct": processes[0].pid, **dict(zip(proxies, (p.pid for p in processes[1:]), strict=True))}
            if args.concurrency:
                load_results = {}
                for api, route in (("", "/v1/messages"), ("Responses API, ", "/v1/responses")):
                    for kind, stream in (("JSON", False), ("SSE", True)):
                        targets = {"direct": upstream_port, **{n: p for n, p in proxies.items() if n != GUARDED}}
                        if GUARDED in proxies:
                            targets[GUARDED] = proxies[GUARDED]
                        load = measure_load(targets, args.concurrency, args.per_connection, args.rounds, 2, stream,
                                            route, pids)  # fmt: skip
                        load_results[f"{api}{kind}"] = asyncio.run(load)
            else:
                results: dict[str, dict] = {}
                guard_rows: dict[str, dict] = {}
                for api, route in (("", "/v1/messages"), ("Responses API, ", "/v1/responses")):
                    for kind, stream in (("JSON response", False), ("first SSE event", True)):
                        figures = measure(upstream_port, proxies, args.requests, stream, args.warmup, route)
                        guard_row = figures.pop("guard", None)
                        if guard_row is not None:
                            guard_rows[f"{api}{kind}"] = guard_row
                        for name, row in figures.items():
                            results[f"{api}{kind}: {name}"] = row
        finally:
            for process in reversed(processes):
                process.terminate()
                process.wait(timeout=30)
        recorded = len(list(traces.glob("*.jsonl")))
    command = "python benchmarks/proxy_latency.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    load = (load_before, os.getloadavg()[0])
    if args.concurrency:
        report = render_load(load_results, args.concurrency, args.per_connection, args.rounds, recorded, command,
                             load, notes)  # fmt: skip
    else:
        report = render(results, args.requests, recorded, command, load, guard_rows, notes)
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0


def render(
    results: dict[str, dict],
    requests: int,
    recorded: int,
    command: str,
    load: tuple[float, float],
    guard_rows: dict[str, dict] | None = None,
    notes: list[str] | None = None,
) -> str:
    lines = [
        "# Proxy latency: `tracekit record` vs. the same upstream directly",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs. Loopback only; {requests} measured requests per row "
        "(after warm-up); direct and proxied requests interleaved, their order shuffled each round (seeded). Added = "
        "proxied minus the direct sample of the same round. "
        f"The proxy recorded every exchange ({recorded} trace files, one per session). Load average (1 min) "
        f"{load[0]:.2f} before and {load[1]:.2f} after: other work shares the machine, so figures move between runs.",
        "",
        *(f"{note}\n" for note in notes or ()),
        "All figures in milliseconds.",
        "",
        "| what | direct median | proxied median | **added median** | added p99 | direct p99 | proxied p99 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['direct_median']:.3f} | {r['proxied_median']:.3f} | **{r['added_median']:.3f}** | "
            f"{r['added_p99']:.3f} | {r['direct_p99']:.3f} | {r['proxied_p99']:.3f} |"
        )
    recorded_rows = {name: r["added_median"] for name, r in results.items() if name.endswith(f": {RECORD}")}
    worst_record = max(recorded_rows.values(), default=0.0)
    lines += [
        "",
        f"Target (issue 20): `{RECORD}` adds at most 1.0 ms median (JSON response and first SSE event): "
        f"{'met' if worst_record <= 1.0 else 'missed'} (largest added median {worst_record:.3f} ms). The reference "
        "rows put the same requests through a bare aiohttp forwarder (no parsing, stitching or recording): the "
        "cost of the HTTP stack itself on this machine; the mitmproxy rows are a peer proxy (reverse mode, "
        "streaming on).",
        "",
    ]
    if guard_rows:
        lines += [
            "What `--guard` adds (issue 21): `tracekit record --guard` minus `tracekit record` in the same round "
            "(the guard file turns on a warn rule, a stop rule and every budget; no limit is reached).",
            "",
            "| request | record median | record --guard median | **guard added, median** | guard added, p99 |",
            "|---|---|---|---|---|",
        ]
        for name, r in guard_rows.items():
            lines.append(f"| {name} | {r['record_median']:.3f} | {r['guarded_median']:.3f} | "
                         f"**{r['added_median']:.3f}** | {r['added_p99']:.3f} |")  # fmt: skip
        worst = max(r["added_median"] for r in guard_rows.values())
        lines += ["", f"Target: the guard adds at most 0.2 ms median: {'met' if worst <= 0.2 else 'missed'} "
                  f"(largest median {worst:.3f} ms).", ""]  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
