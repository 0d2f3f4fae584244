"""The model latency of a diff's traces, read from their trace files (the results JSON holds no times).

``traces[].trace_file`` is relative to each results file's folder; a trace that cannot be read, or whose
model calls carry no latency, has an unknown latency (None), never 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tracekit.results.model import TraceResult
from tracekit.storage import is_url
from tracekit.trace import load_trace

__all__ = ["LatencyReader", "latency_reader", "model_latency_ms"]

LatencyReader = Callable[[TraceResult, str], "float | None"]
"""Model latency (ms) of a trace of one side (``"base"`` or ``"new"``); None when unknown."""


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
        # results in object storage name local trace files from the root (tracekit.analyze.sources)
        where = Path("/", trace_file) if is_url(base) else Path(base) / trace_file
    try:
        trace = load_trace(where, fast=True)
    except Exception:  # an unreadable trace file: its latency is unknown, the diff goes on
        return None
    latencies = [call.latency_ms for call in trace.kind("model_call") if call.latency_ms is not None]
    return round(sum(latencies), 3) if latencies else None
