"""Large and endless streams through the recording proxy (issue 27 C, item 5): an aiohttp upstream on
loopback streams an Anthropic Messages stream of SIZE megabytes of text deltas; an httpx client reads it
through ``RunningProxy`` while another thread asks ``/_tracekit/health`` every 50 ms.

Reports, per size: seconds to relay the whole stream, the upstream alone (read directly), the slowest
health answer meanwhile, and the proxy process's peak RSS. Before the fix relaying was quadratic (the
assembler re-joined the growing text at each delta) and everything was kept for the trace.

    python benchmarks/proxy_large_stream.py --sizes 20 60 200
    PYTHONPATH=/path/to/older/checkout python benchmarks/proxy_large_stream.py --sizes 20 60 --budget 120
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil
from aiohttp import web

from tracekit.loop_thread import LoopThread
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_upstream import start_messages_upstream  # a sibling script

DELTA = "数据" * 250 + "x" * 500  # 1,000 characters, 2,000 bytes of UTF-8
BATCH = 32  # deltas per write


def _event(name: str, data: dict[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def _stream(request: web.Request) -> web.StreamResponse:
    size = int(request.query.get("mb", "20")) * 1024 * 1024
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    message = {"id": "msg_big", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
               "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 0}}  # fmt: skip
    await response.write(_event("message_start", {"type": "message_start", "message": message}))
    await response.write(_event("content_block_start", {"type": "content_block_start", "index": 0,
                                                        "content_block": {"type": "text", "text": ""}}))  # fmt: skip
    delta = _event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": DELTA}})  # fmt: skip
    block = delta * BATCH
    sent = 0
    while sent < size:
        await response.write(block)
        sent += len(block)
    await response.write(_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    await response.write(_event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                                  "usage": {"output_tokens": 1}}))  # fmt: skip
    await response.write(_event("message_stop", {"type": "message_stop"}))
    await response.write_eof()
    return response


def _read(url: str, size_mb: int, budget: float) -> tuple[float, int]:
    body = {"model": "claude-x", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    started = time.perf_counter()
    received = 0
    target = f"{url}/v1/messages?mb={size_mb}"
    with httpx.Client(timeout=budget) as client, client.stream("POST", target, json=body) as answer:
        for chunk in answer.iter_raw():
            received += len(chunk)
            if time.perf_counter() - started > budget:
                break
    return time.perf_counter() - started, received


def _health(url: str, done: threading.Event, slowest: list[float]) -> None:
    """Ask /health every 50 ms until ``done``; the slowest answer's seconds in ``slowest[0]``."""
    with httpx.Client(timeout=60) as client:
        while not done.wait(0.05):
            sent = time.perf_counter()
            client.get(url + "/_tracekit/health")
            slowest[0] = max(slowest[0], time.perf_counter() - sent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 60, 200], metavar="MB")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds per stream before giving up")
    args = parser.parse_args()
    thread = LoopThread("bench-upstream")
    runner, upstream = thread.run(start_messages_upstream(_stream), timeout=10)
    me = psutil.Process()
    try:
        for size in args.sizes:
            alone, _ = _read(upstream, size, args.budget)
            with tempfile.TemporaryDirectory() as folder:
                config = ProxyConfig(upstream=upstream, out_dir=Path(folder), redactor=Redactor())
                with RunningProxy(config) as proxy:
                    slowest = [0.0]
                    done = threading.Event()

                    checker = threading.Thread(target=_health, args=(proxy.url, done, slowest))
                    checker.start()
                    took, received = _read(proxy.url, size, args.budget)
                    done.set()
                    checker.join()
                    rss = me.memory_info().rss
            whole = "whole" if received >= size * 1024 * 1024 else f"only {received / 2**20:.0f} MB within the budget"
            print(f"{size} MB: relayed in {took:.1f} s ({whole}); upstream alone {alone:.1f} s; slowest /health "
                  f"{slowest[0] * 1000:.0f} ms; RSS {rss / 2**20:.0f} MB")  # fmt: skip
    finally:
        thread.stop(runner.cleanup())


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
