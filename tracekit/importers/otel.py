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

from tracekit.importers.common import ImportedTrace, input_files, unique_ids
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
    """Read spans, map each with ``mapper``, group them into sessions and build one trace per session."""
    spans = read_spans(input_files(paths, SUFFIXES, problems), problems)
    return build_sessions(group_sessions([mapper(span) for span in spans]), source=source, origin=origin)


def build_sessions(sessions: list[Session], *, source: str, origin: str) -> list[ImportedTrace]:
    """The traces of ``sessions``: ids from tracekit's header, the conversation, or the first trace id."""
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
        trace = build_session(session, name, source=source, meta=meta)
        traces.append(ImportedTrace(stem, trace.records))
    return traces
