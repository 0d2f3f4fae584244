"""A gzip bomb from the upstream (issue 27 C, item 1): an aiohttp upstream on loopback answers a model
request with SIZE MB of zeros gzipped (1 GB in about 1 MB); ``tracekit record`` (a child process, default
limits) sits in front. Reports what the client got, the recorder's peak RSS (sampled every 10 ms), and
whether the next request is served. Before the fix the recorder reached 6.1 GB and crashed.

    python benchmarks/proxy_gzip_bomb.py --size-mb 1024
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

import httpx
import psutil
from aiohttp import web

from tracekit.loop_thread import LoopThread

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_upstream import start_messages_upstream  # a sibling script


def _bomb(size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1024 * 1024)
    return b"".join([*(compressor.compress(block) for _ in range(size // len(block))), compressor.flush()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    args = parser.parse_args()
    bomb = _bomb(args.size_mb * 1024 * 1024)

    async def answer(request: web.Request) -> web.Response:
        if (await request.json())["messages"][0]["content"] == "bomb":
            return web.Response(body=bomb, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
        return web.json_response({"id": "m", "type": "message", "role": "assistant", "model": "x",
                                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                                  "usage": {"input_tokens": 1, "output_tokens": 1}})  # fmt: skip

    thread = LoopThread("bomb-upstream")
    runner, upstream = thread.run(start_messages_upstream(answer), timeout=10)
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-c", "from tracekit.cli.main import cli; cli(prog_name='tracekit')", "record",
                   "--upstream", upstream, "--port", "0", "--out", str(Path(folder) / "rec")]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=folder,
                                   env=dict(os.environ))  # fmt: skip
        assert process.stdout is not None
        url = process.stdout.readline().strip().split("listening on ", 1)[1]
        watched = psutil.Process(process.pid)
        peak = [watched.memory_info().rss]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.01):
                try:
                    peak[0] = max(peak[0], watched.memory_info().rss)
                except psutil.Error:
                    return

        sampler = threading.Thread(target=sample)
        sampler.start()
        body = {"model": "x", "max_tokens": 8, "messages": [{"role": "user", "content": "bomb"}]}
        started = time.perf_counter()
        with httpx.Client(timeout=120) as client:
            first = client.post(url + "/v1/messages", json=body, headers={"anthropic-version": "2023-06-01"})
            took = time.perf_counter() - started
            body["messages"][0]["content"] = "hello"
            second = client.post(url + "/v1/messages", json=body, headers={"anthropic-version": "2023-06-01"})
        done.set()
        sampler.join()
        process.terminate()
        process.wait(timeout=30)
    thread.stop(runner.cleanup())
    print(f"bomb of {len(bomb) / 2**20:.1f} MB inflating to {args.size_mb} MB: client got {first.status_code} in "
          f"{took:.1f} s ({first.json()['error']['message'][:90]}...); next request {second.status_code}; recorder "
          f"peak RSS {peak[0] / 2**20:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
