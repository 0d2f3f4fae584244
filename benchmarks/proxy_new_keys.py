"""A new key on every request (issue 27 C, item 3): ``tracekit record`` in front of the fake upstream, one
request per new session, each with a new ``Authorization: Bearer ...`` value, sent one after the other.

Reports how many requests were answered within the time budget, the median latency of the first and of the
last 100, and the CPU seconds the recorder used. Before the written-words index every new key rescrubbed
every file written so far, so latency grew with the number of requests; now it stays flat.

    python benchmarks/proxy_new_keys.py --requests 1500 --budget 240
    PYTHONPATH=/path/to/older/checkout python benchmarks/proxy_new_keys.py   # the same against older code
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import psutil

from tracekit.testing import FakeUpstream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1500)
    parser.add_argument("--budget", type=float, default=240.0, help="seconds before the run stops")
    args = parser.parse_args()
    latencies: list[float] = []
    with tempfile.TemporaryDirectory() as folder, FakeUpstream(lambda request: "好的。") as upstream:
        command = [sys.executable, "-c", "from tracekit.cli.main import cli; cli(prog_name='tracekit')", "record",
                   "--upstream", upstream.url, "--port", "0", "--out", str(Path(folder) / "rec")]  # fmt: skip
        # (run from the temporary folder: ``python -c`` puts the working directory first on the import path,
        # which would hide a PYTHONPATH checkout behind a source tree in the current folder)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   env=dict(os.environ), cwd=folder)  # fmt: skip
        assert process.stdout is not None
        url = process.stdout.readline().strip().split("listening on ", 1)[1]
        started = time.perf_counter()
        with httpx.Client(timeout=60) as client:
            for number in range(args.requests):
                if time.perf_counter() - started > args.budget:
                    break
                body = {"model": "claude-bench", "max_tokens": 16,
                        "messages": [{"role": "user", "content": f"第 {number} 个会话：你好"}]}  # fmt: skip
                headers = {"authorization": f"Bearer tk-bench-{uuid.uuid4().hex}", "anthropic-version": "2023-06-01"}
                sent = time.perf_counter()
                response = client.post(url + "/v1/messages", json=body, headers=headers)
                latencies.append((time.perf_counter() - sent) * 1000)
                assert response.status_code == 200, response.text
        elapsed = time.perf_counter() - started
        times = psutil.Process(process.pid).cpu_times()
        process.terminate()
        process.wait(timeout=60)
    first, last = latencies[:100], latencies[-100:]
    print(f"requests answered: {len(latencies)} of {args.requests} in {elapsed:.1f} s")
    print(f"median latency: first 100 {statistics.median(first):.1f} ms, last 100 {statistics.median(last):.1f} ms")
    print(f"recorder CPU: {times.user + times.system:.1f} s")


if __name__ == "__main__":
    main()
