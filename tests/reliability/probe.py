"""Latency probe, run as its own process while the load runs: pairs of identical small requests, one sent
straight to the upstream and one through the proxy (in alternating order), JSON and SSE alternating.

The added latency of a pair is (through the proxy) - (direct): both go through the same loaded upstream,
so what the difference measures is the proxy's hop and work under that load. For JSON the time is to
the last body byte; for SSE to the first body byte (the first event) and to the last.

Usage: python probe.py DIRECT_URL PROXY_URL STOP_FILE OUT_FILE [MAX_PAIRS]
Stops when STOP_FILE exists or after MAX_PAIRS pairs, then writes its measurements to OUT_FILE (JSON).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import httpx2
import orjson

PAUSE_SECONDS = 0.03
PROBE_SESSION = "probe"


async def measure(client: httpx2.AsyncClient, url: str, body: bytes, headers: dict[str, str]) -> tuple[float, float]:
    """(ms to the first body byte, ms to the last) of one POST."""
    started = time.perf_counter()
    first = None
    async with client.stream("POST", url, content=body, headers=headers) as response:
        async for chunk in response.aiter_raw():
            if first is None and chunk:
                first = time.perf_counter()
        if response.status_code != 200:
            raise RuntimeError(f"probe request to {url} got HTTP {response.status_code}")
    ended = time.perf_counter()
    return ((first or ended) - started) * 1000, (ended - started) * 1000


async def main(direct: str, proxied: str, stop_file: Path, out_file: Path, max_pairs: int) -> None:
    pairs = []
    errors = []
    async with httpx2.AsyncClient(timeout=30.0) as client:
        index = 0
        while index < max_pairs and not stop_file.exists():
            stream = index % 2 == 1
            body = orjson.dumps({"model": "probe", "max_tokens": 32, "stream": stream,
                                 "messages": [{"role": "user", "content": f"probe {index}"}]})  # fmt: skip
            order = [("direct", direct), ("proxied", proxied)]
            if index % 4 >= 2:
                order.reverse()
            timings = {}
            try:
                for route, base in order:
                    headers = {"content-type": "application/json", "x-load-turn": f"probe:{index}:{route}",
                               "x-tracekit-session": PROBE_SESSION, "x-api-key": "probe-key"}  # fmt: skip
                    timings[route] = await measure(client, base + "/v1/messages", body, headers)
            except (httpx2.HTTPError, RuntimeError) as exc:
                errors.append(repr(exc))
            else:
                pairs.append({"stream": stream, "direct": timings["direct"], "proxied": timings["proxied"]})
            index += 1
            await asyncio.sleep(PAUSE_SECONDS)
    out_file.write_bytes(orjson.dumps({"pairs": pairs, "errors": errors, "pid": os.getpid()}))


if __name__ == "__main__":
    direct_url, proxy_url, stop, out = sys.argv[1:5]
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else 100_000
    asyncio.run(main(direct_url, proxy_url, Path(stop), Path(out), limit))
