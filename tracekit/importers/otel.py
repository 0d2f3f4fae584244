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

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from tracekit.importers.common import DATA_ERRORS, ImportedTrace, describe, input_files, unique_ids
from tracekit.importers.otel_genai import map_span
from tracekit.importers.otel_grouping import SessionPlan, SpanEntry, group_sessions
from tracekit.importers.otel_otlp import LogEvent, Span, SpanEvent, iter_spans
from tracekit.importers.otel_sessions import MappedSpan, ModelStep, Step, build_session, joined_turns
from tracekit.importers.spill import Spill

SOURCE = "import:otel"
SUFFIXES = (".json", ".jsonl", ".ndjson")


def import_otel(paths: Iterable[str | Path], problems: list[str]) -> list[ImportedTrace]:
    """One trace per GenAI session in the OTLP JSON files of ``paths``; unreadable parts go to ``problems``."""
    return list(stream_otel(paths, problems))


def stream_otel(paths: Iterable[str | Path], problems: list[str]) -> Iterator[ImportedTrace]:
    """``import_otel`` one trace at a time, in the same order, each built when asked for (memory holds a small
    entry per span and one session, whatever the files' size)."""
    return stream_spans(paths, problems, map_span, source=SOURCE, origin="otel")


def stream_spans(
    paths: Iterable[str | Path],
    problems: list[str],
    mapper: Callable[[Span], MappedSpan],
    *,
    source: str,
    origin: str,
) -> Iterator[ImportedTrace]:
    """Read spans, map each with ``mapper``, group them into sessions and build one trace per session, one at a
    time. A span the mapper cannot read (a field of a type no check expected) is named in ``problems`` and
    left out; so is a session whose trace cannot be built.

    The files are read once (twice when they hold log records, which
    may come after their spans), each span's step kept in a temporary file; the sessions are grouped from a
    small entry per span (``otel_grouping``) and built one at a time."""
    files = input_files(paths, SUFFIXES, problems)
    with closing(Spill()) as steps:
        entries = index_spans(files, problems, mapper, steps)
        sessions = group_sessions(entries, lambda entry: _step(steps, entry))
        del entries  # the sessions hold the entries of their steps
        yield from build_sessions(sessions, steps, source=source, origin=origin, problems=problems)


def build_sessions(
    sessions: list[SessionPlan], steps: Spill, *, source: str, origin: str, problems: list[str] | None = None
) -> Iterator[ImportedTrace]:
    """The traces of ``sessions``: ids from tracekit's header, the conversation, or the first trace id; each
    session's steps read back from ``steps`` when it is built, and the plan let go (``sessions`` is emptied).

    With a ``problems`` list, a session whose trace cannot be built is named there (by where its first span
    was read) and the others are still built."""
    names = [str(s.header.get("trace_id") or s.conversation_id or f"{origin}-{s.trace_ids[0]}")
             for s in (plan.session for plan in sessions)]  # fmt: skip
    pending = deque(sessions)
    sessions.clear()  # each plan is let go once its trace is built
    for name, stem in zip(names, unique_ids(names), strict=True):
        plan = pending.popleft()
        session = plan.session
        session.steps = [_step(steps, entry) for entry in plan.entries]
        del plan
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
        yield ImportedTrace(stem, trace.records, origin=first)


def index_spans(
    files: list[Path], problems: list[str], mapper: Callable[[Span], MappedSpan], steps: Spill
) -> list[SpanEntry]:
    """Read and map every span of ``files``: its step goes to ``steps``, its ``SpanEntry`` is returned. The
    problems come in the order reading every span and then mapping each gave them before: reading first,
    mapping after.

    A log record becomes an event of a span (the last read with its ids) that may come before or after it,
    and mapping needs the events: files that hold log records are read again, every span kept in a second
    temporary file until every log record is known."""
    first_problem = len(problems)
    mapping_problems: list[str] = []
    entries: list[SpanEntry] = []
    logs: list[LogEvent] = []
    for span in iter_spans(files, problems, logs):
        if logs:
            break
        _add(entries, steps, span, mapper, mapping_problems)
    if not logs:
        problems.extend(mapping_problems)
        return entries
    del problems[first_problem:]
    entries, mapping_problems, logs = [], [], []
    steps.clear()
    with closing(Spill()) as spans:
        last: dict[tuple[str, str], int] = {}  # (trace id, span id) -> the number of the last span read with them
        for number, span in enumerate(iter_spans(files, problems, logs)):
            last[(span.trace_id, span.span_id)] = number
            spans.add(span)
        events: dict[int, list[SpanEvent]] = {}
        for key, event in logs:
            if key in last:
                events.setdefault(last[key], []).append(event)
        del last, logs
        for number, span in enumerate(spans):
            span.events.extend(events.get(number, ()))
            _add(entries, steps, span, mapper, mapping_problems)
    problems.extend(mapping_problems)
    return entries


def _add(
    entries: list[SpanEntry], steps: Spill, span: Span, mapper: Callable[[Span], MappedSpan], problems: list[str]
) -> None:
    """Map ``span``; its step to ``steps``, its entry to ``entries`` (a span the mapper cannot read: a problem)."""
    try:
        mapped = mapper(span)
    except DATA_ERRORS as exc:
        problems.append(f"{span.where}: {describe(exc)}; span skipped")
        return
    step = mapped.step
    entries.append(SpanEntry(
        span.trace_id, span.span_id, span.parent_id, span.start_ns, span.end_ns, mapped.role, mapped.conversation_id,
        mapped.header or None, mapped.problems or None, steps.add(step) if step is not None else -1,
        isinstance(step, ModelStep),
        (span.name, span.where) if step is None and mapped.role in ("unknown", "unmapped") else None,
    ))  # fmt: skip


def _step(steps: Spill, entry: SpanEntry) -> Step:
    """The step of ``entry`` read back, a model call's turns joined (``joined_turns``)."""
    step: Step = steps.load(entry.step)
    if isinstance(step, ModelStep) and step.input:
        step.input = joined_turns(step.input)
    return step
