"""Model latency of the traces a diff pairs, read from their trace files (the results JSON has no times).

``traces[].trace_file`` is relative to the folder of its results file (``base_dir`` / ``new_dir``); a trace
that cannot be read, or whose model calls carry no latency, has an unknown latency (None), never 0.

Example::

    latency = latency_reader(Path("old"), Path("new"))
    diff = diff_results(base, new, latency=latency)
"""

from __future__ import annotations

import os
from pathlib import Path

from tracekit.analyze.results_model import TraceResult
from tracekit.diff.pairs import LatencyReader
from tracekit.storage import is_url, join
from tracekit.trace import load_trace


def latency_reader(base_dir: str | Path | None, new_dir: str | Path | None) -> LatencyReader:
    """Reads a trace's summed model latency (ms); ``*_dir``: the folder each side's ``trace_file`` is
    relative to (None: the working directory)."""
    folders = {"base": base_dir, "new": new_dir}

    def read(trace: TraceResult, side: str) -> float | None:
        return model_latency_ms(trace.trace_file, folders.get(side))

    return read


def model_latency_ms(trace_file: str | None, folder: str | Path | None) -> float | None:
    """The sum of the model calls' ``latency_ms`` in a trace file (None: unreadable or no latency recorded)."""
    if not trace_file:
        return None
    where: str | Path = trace_file
    if not is_url(trace_file) and not os.path.isabs(trace_file):
        base = os.fspath(folder) if folder is not None else os.getcwd()
        where = join(base, trace_file) if is_url(base) else Path(base) / trace_file
    try:
        trace = load_trace(where, fast=True)
    except Exception:  # an unreadable trace file: its latency is unknown, the diff goes on
        return None
    latencies = [call.latency_ms for call in trace.kind("model_call") if call.latency_ms is not None]
    return round(sum(latencies), 3) if latencies else None
