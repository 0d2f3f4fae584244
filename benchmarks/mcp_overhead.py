"""What ``tracekit mcp record`` adds to each ``tools/call`` on loopback, against a direct connection.

Usage::

    python3 benchmarks/mcp_overhead.py [--calls 400] [--rounds 3] [--out benchmarks/results/mcp_overhead.md]

The official ``mcp`` SDK's stdio client calls the test server's ``add`` tool (``tests/mcp/weather_server.py``,
an ``MCPServer``) ``--calls`` times per session, after 20 warm-up calls, in sessions that alternate between the
server started directly and the server started behind ``tracekit mcp record --out TMP -- ...`` (recording every
call to a trace file, flushed per record), ``--rounds`` sessions each. Each call is timed from ``call_tool`` to
its result (``time.perf_counter``). The target: the wrapper adds at most 1 ms to the median call.
The result is appended to ``--out`` as one Markdown section with the command and the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "mcp" / "weather_server.py"
WARM_UP = 20


async def session_times(command: list[str], calls: int) -> list[float]:
    """Milliseconds of each timed ``tools/call`` of one session."""
    params = StdioServerParameters(command=command[0], args=command[1:])
    times = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for number in range(WARM_UP + calls):
            started = time.perf_counter()
            result = await session.call_tool("add", {"a": number, "b": 1})
            elapsed = (time.perf_counter() - started) * 1000
            if result.is_error:
                raise SystemExit(f"add failed: {result.content}")
            if number >= WARM_UP:
                times.append(elapsed)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="timed calls per session")
    parser.add_argument("--rounds", type=int, default=3, help="sessions per side, alternating")
    parser.add_argument("--out", type=Path, help="Markdown file to append the result to")
    args = parser.parse_args()
    direct_cmd = [sys.executable, str(SERVER)]
    direct: list[float] = []
    wrapped: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tracekit-mcp-bench-") as scratch:
        wrapper = [sys.executable, "-m", "tracekit", "mcp", "record", "--out", scratch, "--", *direct_cmd]
        for _ in range(args.rounds):
            direct += anyio.run(session_times, direct_cmd, args.calls)
            wrapped += anyio.run(session_times, wrapper, args.calls)
        recorded = sum(1 for path in Path(scratch).glob("*.jsonl") for _ in path.open("rb"))
    rows = []
    for name, values in (("direct", direct), ("tracekit mcp record", wrapped)):
        quantiles = statistics.quantiles(values, n=100)
        rows.append((name, statistics.median(values), quantiles[89], quantiles[98]))
    overhead = rows[1][1] - rows[0][1]
    command = "python3 benchmarks/mcp_overhead.py " + " ".join(sys.argv[1:])
    lines = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"`{command.strip()}`: {args.rounds} sessions x {args.calls} `tools/call` per side ({WARM_UP} warm-up calls "
        f"each), {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{recorded} trace lines written.",
        "",
        "| path | median ms | p90 ms | p99 ms |",
        "|---|---|---|---|",
        *(f"| {name} | {median:.3f} | {p90:.3f} | {p99:.3f} |" for name, median, p90, p99 in rows),
        "",
        f"Median added per call by the wrapper: **{overhead:.3f} ms** (target: at most 1 ms).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        if not args.out.exists():
            args.out.write_text("# tracekit mcp record: overhead per tools/call\n\n" + __doc__.split("\n\n", 2)[2]
                                + "\n", encoding="utf-8")  # fmt: skip
        with args.out.open("a", encoding="utf-8") as file:
            file.write(text + "\n")


if __name__ == "__main__":
    main()
