"""Added latency of ``tracekit record``: JSON responses and the first SSE event, proxied vs direct, on the
Anthropic Messages API and the OpenAI Responses API.

Processes on loopback: a minimal upstream (this file with ``--serve-upstream``: fixed JSON and SSE
answers on ``/v1/messages`` and ``/v1/responses``, no work per request), ``tracekit record`` in front of
it (writing traces to a temporary folder), a bare aiohttp forwarder as a reference point
(``--serve-forwarder``; skip it with ``--no-baseline``), with ``--guard`` a second ``tracekit record`` with
the live guard (``GUARD_FILE``: a warn rule, a stop rule and every budget, none reached, so every check runs),
and this client. Each round sends the same
request directly and through each proxy, the order rotating from round to round, over one keep-alive
connection per target, so all see the same machine state. The added latency of a proxied request is its
time minus the direct request's time in the same round; what the guard adds is the guarded proxy's time
minus the plain one's in the same round (target: at most 0.2 ms median, issue 21).

Usage::

    python benchmarks/proxy_latency.py [--requests 500] [--guard] [--out benchmarks/results/proxy_latency.md]
"""

from __future__ import annotations

import argparse
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

RECORD = "tracekit record"
GUARDED = "tracekit record --guard"
GUARD_FILE = """\
findings:
  repeated_call: {action: warn}
  retry_storm: {action: stop}
budgets:
  tokens: {limit: 1000000000, action: stop}
  model_calls: {limit: 1000000, action: stop}
  tool_calls: {limit: 1000000, action: warn}
  seconds: {limit: 86400, action: stop}
  errors: {limit: 1000000, action: warn}
"""

REPLY = {
    "id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-bench",
    "content": [{"type": "text", "text": "北京今天晴，最高气温 25 度。"}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 18},
}  # fmt: skip


def sse_events() -> bytes:
    """A short Messages API stream (8 events), sent in one write per event."""
    start = {**REPLY, "content": [], "stop_reason": None}

    def delta(text: str) -> dict[str, object]:
        return {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}

    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
        ("content_block_start",
         {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", delta("北京今天晴，")),
        ("content_block_delta", delta("最高气温 25 度。")),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 18}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode() for name, data in events
    )


RESPONSES_REPLY = {
    "id": "resp_bench", "object": "response", "created_at": 1775520000, "status": "completed", "error": None,
    "incomplete_details": None, "model": "gpt-bench", "output": [
        {"id": "msg_bench", "type": "message", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "北京今天晴，最高气温 25 度。", "annotations": []}]}],
    "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 18,
              "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 138},
}  # fmt: skip


def responses_sse_events() -> bytes:
    """The Responses API stream of ``RESPONSES_REPLY`` (10 events), as ``tracekit`` renders it for replay."""
    from tracekit.providers import openai_responses

    return openai_responses.render_stream(RESPONSES_REPLY)


def serve_upstream(port_file: str) -> None:
    """The fixed upstream: JSON or SSE as the request asks, on both routes; writes its port to ``port_file``."""
    import asyncio

    from aiohttp import web

    def answering(reply: dict[str, Any], sse: bytes) -> Callable[[web.Request], Any]:
        body = json.dumps(reply, ensure_ascii=False).encode()
        events = [event + b"\n\n" for event in sse.split(b"\n\n") if event]

        async def answer(request: web.Request) -> web.StreamResponse:
            payload = json.loads(await request.read())
            if not payload.get("stream"):
                return web.Response(body=body, content_type="application/json")
            response = web.StreamResponse(headers={"content-type": "text/event-stream"})
            await response.prepare(request)
            for event in events:
                await response.write(event)
            await response.write_eof()
            return response

        return answer

    routes = {"/v1/messages": answering(REPLY, sse_events()),
              "/v1/responses": answering(RESPONSES_REPLY, responses_sse_events())}  # fmt: skip
    asyncio.run(_serve(routes, lambda port: Path(port_file).write_text(str(port))))


def serve_forwarder(upstream_port: int) -> None:
    """A reference point: a bare aiohttp forwarder (no parsing, no recording), as cheap as a proxy on this
    stack gets. Prints its URL like ``tracekit record``."""
    import asyncio

    import aiohttp
    from aiohttp import web

    async def main() -> None:
        session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
        upstream = f"http://127.0.0.1:{upstream_port}"

        async def forward(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            headers = {"content-type": "application/json"}
            async with session.post(upstream + request.path, data=body, headers=headers) as answer:
                if not answer.headers.get("content-type", "").startswith("text/event-stream"):
                    return web.Response(body=await answer.read(), status=answer.status, content_type="application/json")
                response = web.StreamResponse(status=answer.status, headers={"content-type": "text/event-stream"})
                await response.prepare(request)
                async for chunk in answer.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response

        def announce(port: int) -> None:
            print(f"forwarder: listening on http://127.0.0.1:{port}", flush=True)

        await _serve({route: forward for route in ROUTES}, announce)

    asyncio.run(main())


ROUTES = ("/v1/messages", "/v1/responses")


async def _serve(handlers: dict[str, Any], announce: Callable[[int], object]) -> None:
    """Serve each handler at POST on its path on a free loopback port, ``announce`` the port, serve forever."""
    import asyncio

    from aiohttp import web

    app = web.Application()
    for path, handler in handlers.items():
        app.router.add_post(path, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    announce(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
    await asyncio.Event().wait()


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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(
    direct_port: int, proxies: dict[str, int], requests: int, stream: bool, warmup: int, route: str
) -> dict[str, dict]:
    """Interleave direct and proxied requests (the order rotating each round); per proxy, the added latency
    of each proxied request over the direct one of the same round (and, with the guarded proxy, the guard's
    own: guarded minus plain, same round, under ``"guard"``)."""
    names = ["direct", *proxies]
    connections = {"direct": http.client.HTTPConnection("127.0.0.1", direct_port)}
    connections.update({name: http.client.HTTPConnection("127.0.0.1", port) for name, port in proxies.items()})
    samples: dict[str, list[float]] = {name: [] for name in names}
    for number in range(warmup + requests):
        body = request_body(number, stream, route)
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
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
    with tempfile.TemporaryDirectory() as scratch:
        port_file = Path(scratch) / "port"
        upstream = subprocess.Popen([sys.executable, __file__, "--serve-upstream", str(port_file)])
        proxy = forwarder = guarded = None
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
            proxies = {RECORD: proxy_port}
            if args.guard:
                guard_file = Path(scratch) / "guard.yaml"
                guard_file.write_text(GUARD_FILE, encoding="utf-8")
                guarded = subprocess.Popen(
                    ["tracekit", "record", "--upstream", f"http://127.0.0.1:{upstream_port}", "--port", "0",
                     "--out", str(Path(scratch) / "guarded"), "--guard", str(guard_file)], stdout=subprocess.PIPE,
                    text=True,
                )  # fmt: skip
                assert guarded.stdout is not None
                proxies[GUARDED] = int(guarded.stdout.readline().rsplit(":", 1)[1])
            if not args.no_baseline:
                forwarder = subprocess.Popen([sys.executable, __file__, "--serve-forwarder", str(upstream_port)],
                                             stdout=subprocess.PIPE, text=True)  # fmt: skip
                assert forwarder.stdout is not None
                proxies["bare aiohttp forwarder (reference)"] = int(forwarder.stdout.readline().rsplit(":", 1)[1])
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
            recorded = len(list(traces.glob("*.jsonl")))
        finally:
            for process in (proxy, guarded, forwarder, upstream):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=10)
    command = "python benchmarks/proxy_latency.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    report = render(results, args.requests, recorded, command, (load_before, os.getloadavg()[0]), guard_rows)
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
) -> str:
    lines = [
        "# Proxy latency: `tracekit record` vs. the same upstream directly",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs. Loopback only; {requests} measured requests per row "
        "(after warm-up); direct and proxied requests interleaved, their order rotating each round. Added = "
        "proxied minus the direct sample of the same round. "
        f"The proxy recorded every exchange ({recorded} trace files, one per session). Load average (1 min) "
        f"{load[0]:.2f} before and {load[1]:.2f} after: other work shares the machine, so figures move between runs.",
        "",
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
    lines += [
        "",
        "Target: added medians <= 1.5 ms. The reference rows put the same requests through a bare aiohttp",
        "forwarder (no parsing, stitching or recording): the cost of the HTTP stack itself on this machine.",
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
