"""The rows of the four tables, from one ``traces[]`` entry of the results JSON (and its trace's times).

Rows are built from the results as written (parsed JSON, already through the redactor), so the tables say
exactly what results.json says; the only facts added come from the trace file itself (``Timings``): when
it started, how long it lasted, how long each tool call took. A trace that cannot be read leaves those
columns null. Columns are documented in docs/tables.md.

Example::

    timings = trace_timings(load_trace(path, fast=True))
    rows = entry_rows(entry, timings)          # {"traces": [...], "calls": [...], ...}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson

#: Findings that mean the agent went round in circles: the calls they name are ``in_loop``.
LOOP_KINDS = frozenset({"repeated_call", "retry_storm", "alternating_loop"})

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class Timings:
    """What the trace file adds to its results entry: its start, its length, each tool call's time."""

    started: datetime | None = None
    duration_ms: float | None = None
    call_ms: dict[int, float] = field(default_factory=dict)
    """Tool call index -> ms from the call's record to its result's (the tool's run, as the agent saw it)."""
    model_ms: dict[int, float] = field(default_factory=dict)
    """Tool call index -> latency of the model call that asked for it."""


def trace_timings(trace: Any) -> Timings:
    """The times of a loaded trace (``tracekit.trace.load_trace``); records without times give nulls."""
    times = [record.t for record in trace.records if getattr(record, "t", None) is not None]
    first = trace.header.t if trace.header.t is not None else (times[0] if times else None)
    started = datetime.fromtimestamp(first, tz=timezone.utc) if first is not None else None
    if started is None and trace.header.created:
        try:
            started = datetime.fromisoformat(trace.header.created)
        except ValueError:
            started = None
    duration = round((max(times) - first) * 1000, 3) if first is not None and times else None
    model_latency = {call.index: call.latency_ms for call in trace.kind("model_call")}
    call_ms: dict[int, float] = {}
    model_ms: dict[int, float] = {}
    for call in trace.calls():
        if call.result is not None and call.call.t is not None and call.result.t is not None:
            call_ms[call.index] = round((call.result.t - call.call.t) * 1000, 3)
        latency = model_latency.get(call.call.model_call)
        if latency is not None:
            model_ms[call.index] = latency
    return Timings(started, duration, call_ms, model_ms)


def partition_key(value: str | None) -> str:
    """A run name as a folder name (``run:ref/m`` -> ``run_ref_m``); the exact name stays in the ``run`` column.

    >>> partition_key("run:my-agent/model-x"), partition_key(None)
    ('run_my-agent_model-x', 'none')
    """
    return _UNSAFE.sub("_", value).strip("_") or "_" if value else "none"


def entry_rows(entry: dict[str, Any], timings: Timings | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows one ``traces[]`` entry (a dict of the results JSON) adds to each table."""
    timings = timings or Timings()
    verdict = entry.get("verdict") or {}
    case = verdict.get("case") or {}
    stats = entry.get("stats") or {}
    run = entry.get("run")
    date = timings.started.date().isoformat() if timings.started is not None else None
    keys = {"run_key": partition_key(run), "date": date or "none", "run": run, "trace_id": entry.get("trace_id"),
            "case_id": entry.get("case_id")}  # fmt: skip
    findings = entry.get("findings") or []
    calls = entry.get("tool_calls") or []
    names = {call.get("index"): call.get("name") for call in calls}
    looping = {index for finding in findings if finding.get("kind") in LOOP_KINDS for index in finding.get("calls", [])}
    scores = verdict.get("scores") or {}
    trace_row = {
        **keys,
        "session": entry.get("session"),
        "source": entry.get("source"),
        "trace_file": entry.get("trace_file"),
        "group": entry.get("group"),
        "repeat": entry.get("repeat"),
        "dimension": case.get("dimension"),
        "category": case.get("category"),
        "result": verdict.get("result"),
        "score_total": _number((scores.get("tool_use") or {}).get("total")),
        "llm_calls": stats.get("llm_calls"),
        "tool_calls": stats.get("tool_calls"),
        "tool_errors": stats.get("tool_errors"),
        "input_tokens": stats.get("input_tokens"),
        "output_tokens": stats.get("output_tokens"),
        "findings": len(findings),
        "problems": len(entry.get("problems") or []),
        "started_at": timings.started,
        "duration_ms": timings.duration_ms,
    }
    call_rows = [
        {
            **keys,
            "index": call.get("index"),
            "name": call.get("name"),
            "input": orjson.dumps(call.get("input"), option=orjson.OPT_SORT_KEYS).decode(),
            "is_error": call.get("is_error"),
            "history": call.get("history"),
            "in_loop": call.get("index") in looping,
            "latency_ms": timings.call_ms.get(call.get("index", -1)),
            "model_latency_ms": timings.model_ms.get(call.get("index", -1)),
        }
        for call in calls
    ]
    finding_rows = [
        {
            **keys,
            "kind": finding.get("kind"),
            "severity": finding.get("severity"),
            "calls": list(finding.get("calls") or []),
            "tools": [str(names.get(index)) for index in finding.get("calls") or []],
            "message": finding.get("message"),
        }
        for finding in findings
    ]
    check_rows = [
        {
            **keys,
            "verdict": verdict.get("result"),
            "check": check.get("check"),
            "judged": judged,
            "result": check.get("result"),
            "evidence": check.get("evidence"),
            "failure_kind": check.get("failure_kind"),
        }
        for judged, group in ((False, verdict.get("checks")), (True, verdict.get("judged_checks")))
        for check in group or []
    ]
    return {"traces": [trace_row], "calls": call_rows, "findings": finding_rows, "checks": check_rows}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
