"""Peak memory and time of the two large-input paths (issue 31 item 4): ``tracekit analyze`` on one very large
trace, and ``tracekit import otel`` on a file of many OpenTelemetry spans.

Usage (from the repository root)::

    python benchmarks/large_inputs.py trace [--lines 1000000] [--shape calls|turns] [--repeats 2]
    python benchmarks/large_inputs.py otel [--spans 100000] [--repeats 2]

Every run is the command line in a fresh process under ``/usr/bin/time -v``: its peak resident set size and
wall time, each run printed (``--repeats`` of them), with the load average before it. To measure another
version of tracekit, point ``PYTHONPATH`` at its source tree: the child processes inherit it.

Inputs, written here:

- ``trace --shape calls``: ``large_trace.write_trace`` (a header, then tool_call / tool_result records
  alternating, half a million calls in a million lines), the trace of issue 14.
- ``trace --shape turns``: what the proxy writes for a long agent session: each turn a ``model_call`` whose
  request and response bodies are kept (about 1 KB of JSON each, as the proxy keeps them), the assistant
  message, the tool call and its result (a 300-character body), so a quarter of the lines are calls.
- ``otel``: the example recordings (``recordings/flawed``, ``recordings/reference``) exported by
  ``tracekit export otel --with-content`` (GenAI conventions, hex ids), copied with fresh trace ids (and
  tracekit trace ids) until the file holds ``--spans`` spans, written as the collector's ``file`` exporter
  writes them: one OTLP ``ExportTraceServiceRequest`` a line, each a batch of the spans of whole traces
  (about 512 spans). This is ``import_speed.otel_lines``, written line by line instead of held in memory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from large_trace import measure_command, write_trace  # the calls shape: the benchmark of issue 14

ROOT = Path(__file__).resolve().parents[1]
BATCH_SPANS = 512


def write_turns_trace(path: Path, lines: int) -> int:
    """A proxy-shaped trace of ``lines`` lines (see the module docstring); returns its size in bytes."""
    filler = "天气 weather report " * 12
    with open(path, "wb") as handle:
        handle.write(orjson.dumps({"kind": "header", "format": 1, "trace_id": "turns", "source": "proxy"}) + b"\n")
        written, turn = 1, 0
        while written < lines:
            name = f"tool_{turn % 7}"
            message = 2 * turn + 1
            request = {"model": "m", "messages": [{"role": "user", "content": f"{filler} {turn}"}] * 3,
                       "tools": [{"name": f"tool_{n}", "input_schema": {"type": "object"}} for n in range(7)]}
            response = {"id": f"msg_{turn}", "content": [{"type": "tool_use", "id": f"c{turn}", "name": name,
                                                          "input": {"q": turn % 50}}], "stop_reason": "tool_use"}
            records = [
                {"kind": "model_call", "index": turn, "provider": "anthropic", "model": "m", "request": request,
                 "response": response, "usage": {"input_tokens": 100, "output_tokens": 20}, "latency_ms": 12.5},
                {"kind": "assistant_message", "message_index": message, "content": response["content"],
                 "model_call": turn},
                {"kind": "tool_call", "index": turn, "message_index": message, "name": name, "input": {"q": turn % 50},
                 "id": f"c{turn}", "model_call": turn},
                {"kind": "tool_result", "call_index": turn, "message_index": message + 1, "id": f"c{turn}",
                 "content": f"{filler} result {turn}"},
            ]
            for record in records[: lines - written]:
                handle.write(orjson.dumps(record) + b"\n")
            written += len(records)
            turn += 1
    return path.stat().st_size


def write_otel_spans(path: Path, spans_wanted: int) -> tuple[int, int]:
    """The OTLP JSON lines file (see the module docstring); returns ``(spans, traces)``."""
    from tracekit.export.otel import otlp_document, trace_spans
    from tracekit.trace import load_trace, trace_files

    traces = [load_trace(p) for p in trace_files([ROOT / "recordings" / "flawed", ROOT / "recordings" / "reference"])]
    per_trace = [orjson.dumps(trace_spans(trace, with_content=True)) for trace in traces]
    skeleton = otlp_document([])
    written = copies = 0
    batch: list[bytes] = []
    with open(path, "wb") as handle:
        while written < spans_wanted:
            for number, spans in enumerate(per_trace):
                copy = copies * len(per_trace) + number
                # Fresh ids: the OTel trace id's first 8 hex digits and the tracekit trace id's suffix.
                for span in orjson.loads(spans):
                    span["traceId"] = f"{copy:08x}" + span["traceId"][8:]
                    for attribute in span["attributes"]:
                        if attribute["key"] == "tracekit.trace_id":
                            attribute["value"]["stringValue"] += f"#{copy}"
                    batch.append(orjson.dumps(span))
                    written += 1
                if len(batch) >= BATCH_SPANS or written >= spans_wanted:
                    _write_batch(handle, skeleton, batch)
                    batch = []
                if written >= spans_wanted:
                    break
            copies += 1
        if batch:
            _write_batch(handle, skeleton, batch)
    return written, copy + 1


def _write_batch(handle: object, skeleton: dict[str, object], spans: list[bytes]) -> None:
    document = orjson.dumps(skeleton)
    marker = b'"spans":[]'
    assert marker in document, document
    line = document.replace(marker, b'"spans":[' + b",".join(spans) + b"]", 1)
    handle.write(line + b"\n")  # type: ignore[attr-defined]


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["trace", "otel"])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--shape", choices=["calls", "turns"], default="calls")
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--input", type=Path, help="otel: the spans file to read, written there first if missing")
    args = parser.parse_args()
    tracekit = [sys.executable, "-m", "tracekit"]
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        work = Path(folder)
        if args.what == "trace":
            trace = work / "large.jsonl"
            size = (write_trace if args.shape == "calls" else write_turns_trace)(trace, args.lines)
            print(f"trace ({args.shape}): {args.lines} lines, {size / 1e6:.1f} MB")
            command = [*tracekit, "analyze", str(trace), "--json", str(work / "results.json"), "--no-progress"]
        else:
            spans_file = args.input or work / "spans.jsonl"
            if not spans_file.exists():
                spans, traces = write_otel_spans(spans_file, args.spans)
                print(f"otel: {spans} spans of {traces} traces written")
            print(f"otel: {spans_file.stat().st_size / 1e6:.1f} MB of spans")
            command = [*tracekit, "import", "otel", str(spans_file), "--out", str(work / "out")]
        for run in range(args.repeats):
            before = load()
            shutil.rmtree(work / "out", ignore_errors=True)
            peak, wall = measure_command(command)
            print(f"run {run + 1}: peak RSS {peak:.0f} MiB, {wall:.1f} s (load before: {before})", flush=True)


if __name__ == "__main__":
    main()
