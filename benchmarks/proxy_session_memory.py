"""Memory per proxy session, and what expiry gives back (issue 27 C / issue 31 item 3): SESSIONS agent
sessions of one request each go through ``RunningProxy`` (optionally with the live guard), then every idle
session is expired (``expire_idle(0)``, what ``session_idle_timeout`` does on its own).

Reports RSS at the baseline (after a warm-up of 500 sessions, expired), then for two rounds: after the
sessions, and after they expired. Every object of an expired session is freed (tracemalloc shows nothing
per session left); what RSS keeps is memory the allocator holds for reuse, which the second round reuses
instead of growing. Run it twice::

    python benchmarks/proxy_session_memory.py --sessions 20000
    python benchmarks/proxy_session_memory.py --sessions 20000 --guard

The process runs with ``PYTHONMALLOC=malloc``, as ``tracekit record`` does (``tracekit.cli.entry`` says why);
``--allocator pymalloc`` measures CPython's default allocator instead.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from tracekit.guard.observer import LiveGuard
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor

_UPSTREAM = ("import sys, threading\nfrom tracekit.testing import FakeUpstream\n"
             "with FakeUpstream(lambda request: '好的。') as up:\n    print(up.url, flush=True)\n"
             "    threading.Event().wait()\n")


async def _send(url: str, first: int, count: int) -> None:
    """``count`` requests on one keep-alive connection, each the first turn of a new session."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    for number in range(first, first + count):
        question = {"role": "user", "content": f"会话 {number}：北京明天天气怎么样？请详细说明。"}
        body = json.dumps({"model": "claude-bench", "max_tokens": 16, "messages": [question]}).encode()
        writer.write(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"anthropic-version: 2023-06-01\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = int(next(line.split(b":")[1] for line in lines if line.lower().startswith(b"content-length")))
        await reader.readexactly(length)
    writer.close()


def _run(url: str, first: int, count: int) -> None:
    async def all_of() -> None:
        per = count // 4
        await asyncio.gather(*(_send(url, first + i * per, per) for i in range(4)))

    asyncio.run(all_of())


def _rss() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20000)
    parser.add_argument("--guard", action="store_true", help="with the live guard (default detectors)")
    parser.add_argument("--allocator", choices=("malloc", "pymalloc"), default="malloc",
                        help="PYTHONMALLOC of this process: malloc, as `tracekit record` runs (tracekit.cli.entry), "
                             "or CPython's default pymalloc")  # fmt: skip
    args = parser.parse_args()
    if os.environ.get("PYTHONMALLOC") != args.allocator:  # fixed at start-up: run again, as tracekit record does
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, "PYTHONMALLOC": args.allocator})
    # The fake upstream runs in a process of its own (it keeps every request): RSS here is the proxy's.
    upstream = subprocess.Popen([sys.executable, "-c", _UPSTREAM], stdout=subprocess.PIPE, text=True)
    assert upstream.stdout is not None
    upstream_url = upstream.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as folder:
        config = ProxyConfig(upstream=upstream_url, out_dir=Path(folder), redactor=Redactor(),
                             observer=LiveGuard() if args.guard else None)  # fmt: skip
        with RunningProxy(config) as proxy:
            _run(proxy.url, 0, 500)
            proxy.expire_idle(0)
            baseline = _rss()
            rounds = []
            for round_number in range(2):  # twice: what expiry leaves must not grow from one round to the next
                started = time.perf_counter()
                _run(proxy.url, 1000 + round_number * args.sessions, args.sessions)
                took = time.perf_counter() - started
                proxy.wait_written(timeout=120)
                full = _rss()
                expired = proxy.expire_idle(0, timeout=600)
                rounds.append((took, full, expired, _rss()))
    upstream.terminate()
    upstream.wait(timeout=10)
    print(f"{'guard' if args.guard else 'record'} (PYTHONMALLOC={args.allocator}): RSS baseline {baseline:.0f} MB")
    for number, (took, full, expired, after) in enumerate(rounds, 1):
        per = (full - baseline) * 1024 / args.sessions
        print(f"  round {number}: {args.sessions} sessions in {took:.1f} s; with them {full:.0f} MB ({per:.1f} kB "
              f"per session over the baseline); after {expired} expired: {after:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
