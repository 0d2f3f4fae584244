"""The processes the proxy benchmarks put requests through (``proxy_latency.py``, ``proxy_load.py``): the
fixed upstream (``--serve-upstream``: the same JSON and SSE answers on ``/v1/messages`` and ``/v1/responses``,
no work per request), the bare aiohttp forwarder (``--serve-forwarder``: the HTTP stack's floor),
``tracekit record`` (and ``--guard``), and mitmproxy in reverse mode with streaming on when ``mitmdump`` is
found. ``proxy_latency.py`` runs the servers of this file in its own subprocesses.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("proxy_latency.py")

RECORD = "tracekit record"
FORWARDER = "bare aiohttp forwarder (reference)"
MITMPROXY = "mitmproxy (reverse, streaming)"
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


def start_targets(
    args: argparse.Namespace, scratch: Path, upstream_port: int, processes: list[subprocess.Popen]
) -> tuple[dict[str, int], list[str]]:
    """Start the proxies in front of the upstream (each appended to ``processes``); their ports by row name,
    and notes for the report (a row skipped)."""
    upstream = f"http://127.0.0.1:{upstream_port}"

    def announced(command: list[str]) -> int:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        processes.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        print(f"{command[0]} {command[1]}: pid {process.pid}, {line.strip()}", file=sys.stderr)
        return int(line.rsplit(":", 1)[1])

    proxies = {RECORD: announced(["tracekit", "record", "--upstream", upstream, "--port", "0",
                                  "--out", str(scratch / "traces")])}  # fmt: skip
    if args.guard:
        guard_file = scratch / "guard.yaml"
        guard_file.write_text(GUARD_FILE, encoding="utf-8")
        proxies[GUARDED] = announced(["tracekit", "record", "--upstream", upstream, "--port", "0",
                                      "--out", str(scratch / "guarded"), "--guard", str(guard_file)])  # fmt: skip
    if not args.no_baseline:
        proxies[FORWARDER] = announced([sys.executable, str(SCRIPT), "--serve-forwarder", str(upstream_port)])
    notes = []
    mitmdump = args.mitmdump or shutil.which("mitmdump")
    if mitmdump is None or not Path(mitmdump).exists():
        notes.append("mitmproxy row skipped: no mitmdump found (--mitmdump PATH, or on PATH; see the docstring).")
    else:
        port = free_port()
        processes.append(subprocess.Popen(
            [mitmdump, "--mode", f"reverse:{upstream}", "--set", "stream_large_bodies=1", "-p", str(port), "-q"],
            stdout=subprocess.DEVNULL,
        ))  # fmt: skip
        wait_listening(port)
        proxies[MITMPROXY] = port
    return proxies, notes


def started(
    command: list[str], processes: list[subprocess.Popen], env: dict[str, str] | None = None
) -> tuple[int, int]:
    """Start a proxy that prints its URL first (appended to ``processes``); its pid and port."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    processes.append(process)
    assert process.stdout is not None
    return process.pid, int(process.stdout.readline().rsplit(":", 1)[1])


def start_upstream(scratch: Path, processes: list[subprocess.Popen]) -> str:
    """Start the upstream (``--serve-upstream``, appended to ``processes``); its URL once it listens."""
    port_file = scratch / "port"
    processes.append(subprocess.Popen([sys.executable, str(SCRIPT), "--serve-upstream", str(port_file)]))
    while not port_file.exists() or not port_file.read_text():
        time.sleep(0.05)
    return f"http://127.0.0.1:{int(port_file.read_text())}"


def start_forwarder(upstream: str, processes: list[subprocess.Popen]) -> tuple[int, int]:
    """Start the bare aiohttp forwarder in front of ``upstream`` (appended to ``processes``); its pid and port."""
    return started([sys.executable, str(SCRIPT), "--serve-forwarder", upstream.rsplit(":", 1)[1]], processes)


def stop_all(processes: list[subprocess.Popen]) -> None:
    """Stop the processes, the last started first (a proxy before its upstream)."""
    for process in reversed(processes):
        process.terminate()
        process.wait(timeout=30)


def free_port() -> int:
    """A loopback port free now (mitmdump takes a port number, not 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, timeout: float = 30) -> None:
    """Return once something accepts connections on ``port``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"nothing listens on port {port}") from None
            time.sleep(0.1)
