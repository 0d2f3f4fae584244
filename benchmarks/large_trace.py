"""Peak memory and time of ``tracekit analyze`` on one very large trace (issue 14: a 1M-line trace).

Usage::

    python3 benchmarks/large_trace.py [--lines 1000000] [--workdir DIR] [--repeats 2]

The trace is synthetic and written here: a header, then ``--lines`` - 1 records alternating a ``tool_call``
(one of seven tool names, a one-key input drawn from 50 values, so that the detectors find repeats) and its
``tool_result`` ("ok"), written with orjson as ``TraceWriter`` writes them. Each run is
``/usr/bin/time -v python -m tracekit analyze TRACE --json OUT --no-progress`` in a fresh process; the
figures are the largest maximum resident set size and the shortest wall time over ``--repeats`` runs.

To compare two versions of tracekit, run the script with ``PYTHONPATH`` pointing at each source tree: the
child processes inherit it.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TOOLS = ["search_flights", "maps_weather", "taobao_search", "beike_lookup_city_id", "weibo_hot", "get_detail", "book"]


def write_trace(path: Path, lines: int) -> int:
    """Write the synthetic trace; returns its size in bytes."""
    import orjson

    with open(path, "wb") as handle:
        handle.write(orjson.dumps({"kind": "header", "format": 1, "trace_id": "large", "source": "benchmark"}) + b"\n")
        written, index = 1, 0
        while written < lines:
            call = {"kind": "tool_call", "index": index, "name": TOOLS[index % 7], "input": {"q": index % 50}}
            handle.write(orjson.dumps({**call, "message_index": index}) + b"\n")
            written += 1
            if written < lines:
                result = {"kind": "tool_result", "call_index": index, "content": "ok", "message_index": index}
                handle.write(orjson.dumps(result) + b"\n")
                written += 1
            index += 1
    return path.stat().st_size


def measure(trace: Path, out: Path) -> tuple[float, float]:
    """``(peak RSS in MiB, wall seconds)`` of one analyze run under /usr/bin/time -v."""
    command = [sys.executable, "-m", "tracekit", "analyze", str(trace), "--json", str(out), "--no-progress"]
    return measure_command(command)


def measure_command(command: list[str]) -> tuple[float, float]:
    """``(peak RSS in MiB, wall seconds)`` of one run of ``command`` under /usr/bin/time -v (exit 0 or 1)."""
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=os.environ.copy())
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[2:5])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    assert rss and wall, done.stderr
    hours, minutes, seconds = (float(part) if part else 0.0 for part in wall.groups())
    return int(rss.group(1)) / 1024, hours * 3600 + minutes * 60 + seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        trace = Path(folder) / "large.jsonl"
        size = write_trace(trace, args.lines)
        runs = [measure(trace, Path(folder) / "results.json") for _ in range(args.repeats)]
    peak = max(rss for rss, _ in runs)
    wall = min(seconds for _, seconds in runs)
    ratio = peak * 2**20 / size
    print(f"{args.lines} lines, {size / 1e6:.1f} MB: peak RSS {peak:.0f} MiB ({ratio:.1f}x the file), ", end="")
    print(f"analyze {wall:.1f} s")


if __name__ == "__main__":
    main()
