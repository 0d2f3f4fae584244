"""Added latency of ``tracekit record``: JSON responses and the first SSE event, proxied vs direct.

Three processes on loopback: a minimal upstream (this file with ``--serve-upstream``: fixed JSON and
SSE answers, no work per request), ``tracekit record`` in front of it (writing traces to a temporary
folder), and this client. Direct and proxied requests are interleaved (their order alternating) over one
keep-alive connection each, so both see the same machine state. Each proxied sample is paired with the
direct sample next to it; the added latency is their difference.

Usage::

    python benchmarks/proxy_latency.py [--requests 500] [--out benchmarks/results/proxy_latency.md]
"""

from __future__ import annotations

import argparse
import http.client
import json
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPLY = {
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
    "content": [{"type": "text", "text": "北京今天晴，最高气温 25 度。"}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 18},
}  # fmt: skip


def sse_events() -> bytes:
    """A short Messages API stream (8 events), sent in one write per event."""
    start = {**REPLY, "content": [], "stop_reason": None}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "北京今天晴，"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "最高气温 25 度。"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 18}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return b"".join(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode() for name, data in events)


def serve_upstream(port_file: str) -> None:
    """The fixed upstream: JSON or SSE as the request asks; writes its port to ``port_file``."""
    import asyncio

    from aiohttp import web

    body = json.dumps(REPLY, ensure_ascii=False).encode()
    events = [event + b"\n\n" for event in sse_events().split(b"\n\n") if event]

    async def messages(request: web.Request) -> web.StreamResponse:
        payload = json.loads(await request.read())
        if not payload.get("stream"):
            return web.Response(body=body, content_type="application/json")
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for event in events:
            await response.write(event)
        await response.write_eof()
        return response

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", messages)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        Path(port_file).write_text(str(site._server.sockets[0].getsockname()[1]))  # type: ignore[union-attr]
        await asyncio.Event().wait()

    asyncio.run(main())


def request_body(number: int, stream: bool) -> bytes:
    """A realistic turn: system prompt, a tool round trip, a new user message (about 2 KB)."""
    messages = [
        {"role": "user", "content": f"第 {number} 次：北京明天天气怎么样？" + "请详细说明。" * 20},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{number}", "name": "maps_weather",
                                           "input": {"city": "北京", "date": "2026-04-08"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{number}",
                                      "content": json.dumps({"weather": "晴", "high": 25, "low": 12}, ensure_ascii=False)}]},
    ]  # fmt: skip
    body = {"model": "claude-bench", "max_tokens": 512, "system": "你是一个出行助手。" * 30, "messages": messages,
            "tools": [{"name": "maps_weather", "description": "天气", "input_schema": {"type": "object"}}]}  # fmt: skip
    if stream:
        body["stream"] = True
    return json.dumps(body, ensure_ascii=False).encode()


def timed_request(connection: http.client.HTTPConnection, body: bytes, stream: bool) -> float:
    """Seconds until the whole JSON body, or until the first complete SSE event, arrived."""
    started = time.perf_counter()
    connection.request("POST", "/v1/messages", body=body, headers={"content-type": "application/json",
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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure(upstream_port: int, proxy_port: int, requests: int, stream: bool, warmup: int) -> dict[str, float]:
    direct = http.client.HTTPConnection("127.0.0.1", upstream_port)
    proxied = http.client.HTTPConnection("127.0.0.1", proxy_port)
    pairs: list[tuple[float, float]] = []
    for number in range(warmup + requests):
        body = request_body(number, stream)
        if number % 2:
            d = timed_request(direct, body, stream)
            p = timed_request(proxied, body, stream)
        else:
            p = timed_request(proxied, body, stream)
            d = timed_request(direct, body, stream)
        if number >= warmup:
            pairs.append((d, p))
    direct.close()
    proxied.close()
    added = [(p - d) * 1000 for d, p in pairs]
    return {
        "direct_median": statistics.median(d for d, _ in pairs) * 1000,
        "proxied_median": statistics.median(p for _, p in pairs) * 1000,
        "added_median": statistics.median(added),
        "added_p99": percentile(added, 0.99),
        "direct_p99": percentile([d * 1000 for d, _ in pairs], 0.99),
        "proxied_p99": percentile([p * 1000 for _, p in pairs], 0.99),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=500, help="Measured requests of each kind and route.")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--out", type=Path, help="Write the results as Markdown here.")
    parser.add_argument("--serve-upstream", metavar="PORT_FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        port_file = Path(scratch) / "port"
        upstream = subprocess.Popen([sys.executable, __file__, "--serve-upstream", str(port_file)])
        proxy = None
        try:
            deadline = time.monotonic() + 20
            while not port_file.exists() or not port_file.read_text():
                if time.monotonic() > deadline:
                    raise SystemExit("the upstream did not start")
                time.sleep(0.05)
            upstream_port = int(port_file.read_text())
            traces = Path(scratch) / "traces"
            proxy = subprocess.Popen(
                ["tracekit", "record", "--upstream", f"http://127.0.0.1:{upstream_port}", "--port", "0",
                 "--out", str(traces)], stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert proxy.stdout is not None
            proxy_port = int(proxy.stdout.readline().rsplit(":", 1)[1])
            results = {
                "JSON response": measure(upstream_port, proxy_port, args.requests, False, args.warmup),
                "first SSE event": measure(upstream_port, proxy_port, args.requests, True, args.warmup),
            }
            recorded = len(list(traces.glob("*.jsonl")))
        finally:
            for process in (proxy, upstream):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=10)
    command = "python benchmarks/proxy_latency.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    report = render(results, args.requests, recorded, command)
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0


def render(results: dict[str, dict[str, float]], requests: int, recorded: int, command: str) -> str:
    lines = [
        "# Proxy latency: `tracekit record` vs. the same upstream directly",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}. Loopback only; {requests} measured requests per row (after warm-up), "
        "direct and proxied interleaved, order alternating. Added = proxied minus the paired direct sample. "
        f"The proxy recorded every exchange ({recorded} trace files, one per session).",
        "",
        "| what | direct median (ms) | proxied median (ms) | added median (ms) | added p99 (ms) | direct p99 | proxied p99 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['direct_median']:.3f} | {r['proxied_median']:.3f} | **{r['added_median']:.3f}** | "
            f"{r['added_p99']:.3f} | {r['direct_p99']:.3f} | {r['proxied_p99']:.3f} |"
        )
    lines += ["", "Target: added medians <= 1.5 ms.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
