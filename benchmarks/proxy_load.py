"""The load mode of ``proxy_latency.py`` (``--concurrency N``): N client connections at once, each an agent
session that grows its conversation turn by turn, against each target in interleaved rounds.

The client is a minimal HTTP/1.1 client on asyncio streams (keep-alive, ``Content-Length`` and chunked
bodies), far cheaper per request than aiohttp's or http.client, so that at 64 connections the targets,
not the client, are what is measured. Each connection plays sessions of ``TURNS`` requests: turn ``k``
re-sends the conversation so far plus the upstream's reply and a new user message, as an agent does, so
the proxy stitches the requests into ``N`` growing sessions instead of one new trace per request.

A round sends ``per_connection`` requests on each of the N connections to one target; the targets take
their rounds in an order that rotates, ``rounds`` times, so that all see the same machine state. Per
target: requests per second over each round (median over the rounds), and the latency percentiles of every
request (JSON: the whole body; SSE: the first event and the whole stream).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import time
from collections.abc import Mapping
from typing import Any

#: Requests per agent session before the connection starts a new one.
TURNS = 8
REPLY_TEXT = "北京今天晴，最高气温 25 度。"


def session_body(session: int, turn: int, stream: bool, route: str) -> bytes:
    """Turn ``turn`` of session ``session``: the first turn of ``proxy_latency.request_body``'s shape, then
    the replies and a new question per turn (what the proxy stitches by continuity)."""
    first = f"会话 {session}：北京明天天气怎么样？" + "请详细说明。" * 20
    if route == "/v1/responses":
        items: list[dict[str, Any]] = [{"role": "user", "content": first}]
        for k in range(turn):
            items.append({"type": "message", "role": "assistant", "id": "msg_bench", "status": "completed",
                          "content": [{"type": "output_text", "text": REPLY_TEXT, "annotations": []}]})  # fmt: skip
            items.append({"role": "user", "content": f"第 {k + 1} 个问题：后天呢？"})
        body: dict[str, Any] = {"model": "gpt-bench", "instructions": "你是一个出行助手。" * 30, "input": items}
    else:
        messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
        for k in range(turn):
            messages.append({"role": "assistant", "content": [{"type": "text", "text": REPLY_TEXT}]})
            messages.append({"role": "user", "content": f"第 {k + 1} 个问题：后天呢？"})
        tools = [{"name": "maps_weather", "description": "天气", "input_schema": {"type": "object"}}]
        body = {"model": "claude-bench", "max_tokens": 512, "system": "你是一个出行助手。" * 30, "messages": messages,
                "tools": tools}  # fmt: skip
    if stream:
        body["stream"] = True
    return json.dumps(body, ensure_ascii=False).encode()


class Connection:
    """One keep-alive HTTP/1.1 connection (reopened when the server closes it)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, route: str, body: bytes) -> tuple[float, float]:
        """Send one request; seconds until the first SSE event (or the whole body) and until the end."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        started = time.perf_counter()
        self.writer.write(
            f"POST {route} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
            f"x-api-key: bench-key-not-secret\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip().lower()
        first = None
        if b"content-length" in headers:
            await self.reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding") == b"chunked":
            seen = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                chunk = (await self.reader.readexactly(size + 2))[:-2]
                if first is None:
                    seen += chunk
                    if b"\n\n" in seen:
                        first = time.perf_counter() - started
        else:
            await self.reader.read()
            headers[b"connection"] = b"close"
        ended = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"HTTP {status} from port {self.port}")
        if headers.get(b"connection") == b"close":
            await self.close()
        return (first if first is not None else ended), ended

    async def close(self) -> None:
        """Close the connection."""
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError):
                await self.writer.wait_closed()
            self.writer = self.reader = None


class Client:
    """One connection's agent: its sessions' turns, in order, over every round."""

    def __init__(self, number: int, port: int) -> None:
        self.number = number
        self.connection = Connection(port)
        self.session = number * 100_000
        self.turn = 0

    async def run(self, count: int, stream: bool, route: str, firsts: list[float], ends: list[float]) -> None:
        """Send ``count`` requests, one at a time, noting each one's latencies."""
        for _ in range(count):
            first, end = await self.connection.post(route, session_body(self.session, self.turn, stream, route))
            firsts.append(first * 1000)
            ends.append(end * 1000)
            self.turn += 1
            if self.turn == TURNS:
                self.session, self.turn = self.session + 1, 0


def cpu_seconds(pid: int | list[int] | None) -> float:
    """User + system CPU seconds of process ``pid`` (or of the processes of a list) so far (Linux ``/proc``; 0
    elsewhere or without one)."""
    if isinstance(pid, list):
        return sum(cpu_seconds(one) for one in pid)
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure_load(
    targets: dict[str, int],
    concurrency: int,
    per_connection: int,
    rounds: int,
    warmup: int,
    stream: bool,
    route: str,
    pids: Mapping[str, int | list[int]],
) -> dict[str, dict[str, Any]]:
    """Run the rounds (see the module docstring); per target its rate, latency percentiles (ms) and, for the
    targets whose process id (or ids) ``pids`` gives, those processes' CPU milliseconds per request."""
    clients = {name: [Client(i, port) for i in range(concurrency)] for name, port in targets.items()}
    names = list(targets)
    rates: dict[str, list[float]] = {name: [] for name in names}
    firsts: dict[str, list[float]] = {name: [] for name in names}
    ends: dict[str, list[float]] = {name: [] for name in names}
    cpu = dict.fromkeys(names, 0.0)
    try:
        for name in names:  # warm-up: connections opened, every process past its first requests
            await asyncio.gather(*(c.run(warmup, stream, route, [], []) for c in clients[name]))
        for number in range(rounds):
            shift = number % len(names)
            for name in names[shift:] + names[:shift]:
                started, cpu_before = time.perf_counter(), cpu_seconds(pids.get(name))
                await asyncio.gather(*(c.run(per_connection, stream, route, firsts[name], ends[name])
                                       for c in clients[name]))  # fmt: skip
                rates[name].append(concurrency * per_connection / (time.perf_counter() - started))
                cpu[name] += cpu_seconds(pids.get(name)) - cpu_before
    finally:
        for group in clients.values():
            for client in group:
                await client.connection.close()
    return {name: {"rate": statistics.median(rates[name]), "rates": rates[name],
                   "first_p50": percentile(firsts[name], 0.5), "first_p99": percentile(firsts[name], 0.99),
                   "end_p50": percentile(ends[name], 0.5), "end_p99": percentile(ends[name], 0.99),
                   "requests": len(ends[name]),
                   "cpu_ms": 1000 * cpu[name] / len(ends[name]) if pids.get(name) else None}
            for name in names}  # fmt: skip


def add_load_options(parser: argparse.ArgumentParser) -> None:
    """The options of a side-by-side load run: answers, route, connections, requests per round, rounds."""
    parser.add_argument("--stream", action="store_true", help="SSE answers instead of JSON.")
    parser.add_argument("--route", default="/v1/messages", help="/v1/messages or /v1/responses.")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--per-connection", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=6)


def run_load(
    ports: dict[str, int], pids: Mapping[str, int | list[int]], options: argparse.Namespace
) -> dict[str, dict[str, Any]]:
    """``measure_load`` of the targets with the options of ``add_load_options`` (two warm-up requests a
    connection)."""
    load = measure_load(ports, options.concurrency, options.per_connection, options.rounds, 2, options.stream,
                        options.route, pids)  # fmt: skip
    return asyncio.run(load)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def render_load(
    results: dict[str, dict[str, dict[str, Any]]],
    concurrency: int,
    per_connection: int,
    rounds: int,
    recorded: int,
    command: str,
    load: tuple[float, float],
    notes: list[str],
) -> str:
    """The Markdown report of a load run, with the issue 20 targets judged per kind of request."""
    lines = [
        f"# Proxy throughput at concurrency {concurrency}: `tracekit record` vs. a bare aiohttp forwarder",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs. Loopback only. {concurrency} client connections at "
        f"once, each an agent session of {TURNS} turns after which it starts another (the proxy stitched them into "
        f"{recorded} trace files); {rounds} rounds per target of {per_connection} requests per connection, the "
        "targets' order rotating each round. Rate: requests per second of each round (median, and the range over "
        "the rounds). Latency of every request of the rounds: JSON the whole body; SSE the first event and the whole "
        "stream; the targets are judged on the whole response. CPU ms/req: user + system CPU of the target's process "
        "(the upstream's for direct) over its rounds, per request (clock ticks of 10 ms, so +-0.01 ms here). "
        f"Load average (1 min) {load[0]:.2f} before and {load[1]:.2f} after.",
        "",
        *(f"{note}\n" for note in notes),
        "Latencies in milliseconds.",
        "",
    ]
    verdicts = []
    for kind, rows in results.items():
        sse = kind.endswith("SSE")
        first = "first event p50 | first event p99 | " if sse else ""
        lines += [f"## {kind}", "",
                  f"| target | req/s (median) | req/s range | {first}p50 | **p99** | CPU ms/req |",
                  "|---|---|---|---|---|---|---|---|" if sse else "|---|---|---|---|---|---|"]  # fmt: skip
        for name, r in rows.items():
            spread = f"{min(r['rates']):.0f}-{max(r['rates']):.0f}"
            first = f" {r['first_p50']:.2f} | {r['first_p99']:.2f} |" if sse else ""
            cpu = f"{r['cpu_ms']:.3f}" if r["cpu_ms"] is not None else "-"
            lines.append(f"| {name} | {r['rate']:.0f} | {spread} |{first} {r['end_p50']:.2f} | **{r['end_p99']:.2f}** "
                         f"| {cpu} |")  # fmt: skip
        forwarder = next((r for n, r in rows.items() if n.startswith("bare aiohttp")), None)
        record = rows.get("tracekit record")
        if forwarder is not None and record is not None:
            rate = record["rate"] / forwarder["rate"]
            p99 = record["end_p99"] / forwarder["end_p99"]
            ok = rate >= 0.9 and p99 <= 1.5
            extra = f", first event p99 {record['first_p99'] / forwarder['first_p99']:.2f}x" if sse else ""
            verdicts.append(f"- {kind}: rate {rate:.2f}x the forwarder's (target >= 0.9), p99 {p99:.2f}x "
                            f"(target <= 1.5){extra}: **{'met' if ok else 'missed'}**")  # fmt: skip
        lines.append("")
    lines += ["Targets (issue 20), `tracekit record` against the bare aiohttp forwarder in the same run:", "",
              *verdicts, ""]  # fmt: skip
    return "\n".join(lines)
