"""The analyze JSON (DESIGN.md "Contracts"): one entry per trace, plus a summary."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tracekit import __version__
from tracekit.trace import Trace, load_trace


def analyze_trace(trace: Trace) -> dict[str, Any]:
    """The ``traces[]`` entry of one trace."""
    header = trace.header
    return {
        "trace_id": header.trace_id,
        "session": header.session,
        "source": str(trace.path) if trace.path is not None else None,
        "meta": header.meta,
        "case_id": header.case_id,
        "group": header.group,
        "repeat": header.repeat,
        "stats": asdict(trace.stats()),
        "tool_calls": [
            {"index": call.index, "name": call.name, "input": call.input, "is_error": call.is_error,
             "history": call.history}
            for call in trace.calls()
        ],
        "findings": [],
        "verdict": None,
        "problems": [str(problem) for problem in trace.problems],
    }


def build_results(files: Iterable[Path]) -> dict[str, Any]:
    """Analyze trace files one at a time and gather the results document."""
    traces = [analyze_trace(load_trace(path)) for path in files]
    return {"tracekit": __version__, "traces": traces, "summary": summarize(traces)}


def summarize(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over all traces."""
    return {
        "traces": len(traces),
        "tool_calls": sum(t["stats"]["tool_calls"] for t in traces),
        "tool_errors": sum(t["stats"]["tool_errors"] for t in traces),
    }
