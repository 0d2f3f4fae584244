"""Turning what the proxy wrote for one job into the job's trace in the run folder.

The proxy writes each session's trace into the job's scratch folder. When the job is over, its trace is
bound (header fields ``case_id``, ``group``, ``repeat``, ``source``, ``meta``), closed with an
``agent_run`` record, written to a hidden temporary name in the run folder and renamed into place, so
an interrupted run leaves complete traces only. A job that sent no model request at all (an external
agent that failed to start) still gets a trace: a header and its ``agent_run`` record.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tracekit.runner.jobs import EXTRA_SESSION_MARK, Job
from tracekit.trace import AgentRun, Header, TraceWriter


def finalize_job(
    job: Job,
    session_files: list[Path],
    out_dir: Path,
    header: Mapping[str, Any],
    closing: AgentRun,
    *,
    trace_id: str,
    drop_request_bodies: bool = False,
) -> Path:
    """Write the job's trace (and any extra sessions) into ``out_dir``; returns the job's trace path.

    ``session_files`` are the proxy's trace files of the job; the one whose session is the job's name comes
    first, the others are kept as ``<job>~2.jsonl``, ... with ``meta.extra_session`` set.
    ``drop_request_bodies`` leaves out each model call's ``request`` body (its ``request_key``, which replay
    matches on, stays) and says so in ``meta.request_bodies``: for example traces committed to a repository,
    where every request re-sending the whole conversation and tool list would dominate the size.
    """
    if drop_request_bodies:
        header = {**header, "meta": {**(header.get("meta") or {}), "request_bodies": "dropped (request_key kept)"}}
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = sorted(session_files, key=lambda path: (_session_of(path) != job.name, path.name))
    main = out_dir / job.file_name
    if not ordered:
        _write_atomically(main, [{**Header(trace_id=trace_id).model_dump(mode="json", exclude_none=True),
                                  **_header_fields(header)}], closing)
        return main
    # Extra sessions are written before the main trace: its rename is what marks the job complete.
    for number, source in enumerate(ordered[1:], start=2):
        extra = {**header, "meta": {**(header.get("meta") or {}), "extra_session": True}}
        target = out_dir / f"{job.name}{EXTRA_SESSION_MARK}{number}.jsonl"
        records = _bound(source, extra, f"{trace_id}{EXTRA_SESSION_MARK}{number}")
        _write_atomically(target, _without_requests(records) if drop_request_bodies else records, closing)
    records = _bound(ordered[0], header, trace_id)
    _write_atomically(main, _without_requests(records) if drop_request_bodies else records, closing)
    return main


def _bound(source: Path, header: Mapping[str, Any], trace_id: str) -> list[dict[str, Any]]:
    lines = _read_records(source)
    fields = _header_fields(header)
    fields["trace_id"] = trace_id
    lines[0] = {**lines[0], **fields, "meta": {**lines[0].get("meta", {}), **fields.get("meta", {})}}
    return lines


def _without_requests(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in record.items() if key not in ("request", "request_raw")}
            if record.get("kind") == "model_call" else record for record in records]


def _header_fields(header: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in header.items() if value is not None}


def _read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a proxy trace file as dicts (header first); torn lines are dropped."""
    records: list[dict[str, Any]] = []
    for line in path.read_bytes().splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            records.append(value)
    if not records or records[0].get("kind") != "header":
        records.insert(0, Header(trace_id=path.stem).model_dump(mode="json", exclude_none=True))
    return records


def _session_of(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            first = orjson.loads(handle.readline())
    except (OSError, orjson.JSONDecodeError):
        return None
    return first.get("session") if isinstance(first, dict) else None


def _write_atomically(target: Path, records: list[dict[str, Any]], closing: AgentRun) -> None:
    temporary = target.with_name(f".{target.name}.part")
    if temporary.exists():
        temporary.unlink()
    with TraceWriter(temporary) as writer:
        for record in records:
            writer.write(record)
        writer.write(closing)
    os.replace(temporary, target)


def remove_partial(out_dir: Path) -> int:
    """Delete temporary files an interrupted run left in ``out_dir``; returns how many."""
    removed = 0
    for path in out_dir.glob(".*.jsonl.part"):
        path.unlink(missing_ok=True)
        removed += 1
    return removed
