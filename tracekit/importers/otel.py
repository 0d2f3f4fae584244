"""Import OpenTelemetry GenAI traces (OTLP JSON) as tracekit traces.

``import_otel(paths, problems)`` reads OTLP JSON files (``.json`` / ``.jsonl``, folders too; see
``otel_otlp``), maps each span by the GenAI semantic conventions (``otel_genai``), groups the spans
into sessions and builds one canonical trace per session (``otel_sessions``). A trace that tracekit's
own ``export otel --with-content`` wrote comes back with the same header, calls, results and usage.

Example::

    problems: list[str] = []
    traces = import_otel(["spans.jsonl"], problems)
    write_traces(traces, "traces/")
    for problem in problems:   # "spans.jsonl:12: not valid JSON: ..." (the rest was imported)
        print(problem)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tracekit.importers.common import DATA_ERRORS, ImportedTrace, describe, input_files, unique_ids
from tracekit.importers.otel_genai import map_span
from tracekit.importers.otel_otlp import Span, read_spans
from tracekit.importers.otel_sessions import MappedSpan, Session, build_session, group_sessions

SOURCE = "import:otel"
SUFFIXES = (".json", ".jsonl", ".ndjson")


def import_otel(paths: Iterable[str | Path], problems: list[str]) -> list[ImportedTrace]:
    """One trace per GenAI session in the OTLP JSON files of ``paths``; unreadable parts go to ``problems``."""
    return import_spans(paths, problems, map_span, source=SOURCE, origin="otel")


def import_spans(
    paths: Iterable[str | Path],
    problems: list[str],
    mapper: Callable[[Span], MappedSpan],
    *,
    source: str,
    origin: str,
) -> list[ImportedTrace]:
    """Read spans, map each with ``mapper``, group them into sessions and build one trace per session.

    A span the mapper cannot read (a field of a type no check expected) is named in ``problems`` and left
    out; so is a session whose trace cannot be built."""
    mapped = []
    for span in read_spans(input_files(paths, SUFFIXES, problems), problems):
        try:
            mapped.append(mapper(span))
        except DATA_ERRORS as exc:
            problems.append(f"{span.where}: {describe(exc)}; span skipped")
    return build_sessions(group_sessions(mapped), source=source, origin=origin, problems=problems)


def build_sessions(
    sessions: list[Session], *, source: str, origin: str, problems: list[str] | None = None
) -> list[ImportedTrace]:
    """The traces of ``sessions``: ids from tracekit's header, the conversation, or the first trace id.

    With a ``problems`` list, a session whose trace cannot be built is named there (by where its first span
    was read) and the others are still built."""
    names = [str(s.header.get("trace_id") or s.conversation_id or f"{origin}-{s.trace_ids[0]}") for s in sessions]
    traces = []
    for session, name, stem in zip(sessions, names, unique_ids(names), strict=True):
        meta: dict[str, Any]
        if isinstance(session.header.get("meta"), dict):
            meta = session.header["meta"]
        else:
            meta = {origin: {"trace_ids": session.trace_ids}}
            agent = session.header.get("agent") or session.header.get("agent_span")
            if agent:
                meta["agent"] = agent
        first = session.steps[0].where if session.steps else f"{origin} trace {session.trace_ids[0]}"
        try:
            trace = build_session(session, name, source=source, meta=meta)
        except DATA_ERRORS as exc:
            if problems is None:
                raise
            problems.append(f"{first}: the session {name[:80]} cannot be built: {describe(exc)}; skipped")
            continue
        traces.append(ImportedTrace(stem, trace.records, origin=first))
    return traces
