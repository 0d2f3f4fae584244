"""Grouping mapped spans into sessions from a small index entry per span, the steps themselves on disk.

Grouping needs of each span its ids, times, role, conversation and header fields, never its content: a
``SpanEntry`` holds those (a few hundred bytes) and the position of the span's step in a ``Spill``. A step is
read back only to stitch (the first and last model call of a session) and when its session is built, one
session at a time, so memory grows with the spans' entries, not with what they carry.

The rules (``otel_sessions`` says why): steps that name a conversation (inherited from an ancestor span)
form one session across OTel traces; others are grouped by trace id; a group whose first model call re-sends
the whole conversation of an earlier group plus more continues that session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracekit.importers.otel_sessions import ModelStep, Session, Step
from tracekit.trace import message_fingerprint


@dataclass(slots=True)
class SpanEntry:
    """What grouping needs of one mapped span (``otel_sessions.MappedSpan``)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    role: str
    conversation_id: str | None
    header: dict[str, Any] | None
    problems: list[str] | None
    step: int
    """Where the span's step is in the spill; -1: the span has none."""
    model: bool
    """The step is a model call."""
    unmapped: tuple[str, str] | None = None
    """``(name, where)`` of a span that is neither a model call nor a tool call (roles unknown and unmapped)."""


@dataclass
class SessionPlan:
    """One session before it is built: its ``Session`` with no steps yet, and its steps as index entries,
    in the order they started."""

    session: Session
    entries: list[SpanEntry] = field(default_factory=list)
    had: list[str] | None = None
    """Fingerprints of the last model call's conversation and reply (stitching; None: not computed yet)."""


StepLoader = Callable[[SpanEntry], Step]


def group_sessions(entries: list[SpanEntry], load: StepLoader) -> list[SessionPlan]:
    """Sessions from the spans' entries: by conversation id (inherited down the span tree), else by trace id,
    then stitched where a later trace continues an earlier one's conversation. ``load`` reads a step back."""
    by_id: dict[str, dict[str, SpanEntry]] = {}
    per_trace: dict[str, set[str]] = {}
    exported: dict[str, str] = {}  # OTel trace id -> tracekit trace id (tracekit's export: one per trace)
    for entry in entries:
        by_id.setdefault(entry.trace_id, {})[entry.span_id] = entry
        if entry.conversation_id:
            per_trace.setdefault(entry.trace_id, set()).add(entry.conversation_id)
        if entry.header and entry.header.get("trace_id"):
            exported.setdefault(entry.trace_id, str(entry.header["trace_id"]))
    groups: dict[tuple[str, str], SessionPlan] = {}
    for entry in sorted(entries, key=lambda e: (e.start_ns, e.end_ns)):
        if entry.role == "ignored":
            continue
        conversation = _conversation(entry, by_id, per_trace)
        if entry.trace_id in exported:
            key = ("tracekit", exported[entry.trace_id])
        else:
            key = ("conversation", conversation) if conversation else ("trace", entry.trace_id)
        plan = groups.get(key)
        if plan is None:
            plan = groups[key] = SessionPlan(Session(conversation, [], []))
        session = plan.session
        if entry.trace_id not in session.trace_ids:
            session.trace_ids.append(entry.trace_id)
        for name, value in (entry.header or {}).items():
            session.header.setdefault(name, value)
        session.problems.extend(entry.problems or ())
        if entry.step >= 0:
            plan.entries.append(entry)
        elif entry.unmapped is not None:
            name, where = entry.unmapped
            session.unmapped.setdefault(name, []).append(where)
    plans = [plan for plan in groups.values() if plan.entries or plan.session.header.get("trace_id")]
    return _stitch(plans, load)


def _conversation(
    entry: SpanEntry, by_id: dict[str, dict[str, SpanEntry]], per_trace: dict[str, set[str]]
) -> str | None:
    current: SpanEntry | None = entry
    seen = 0
    while current is not None and seen < 1000:
        if current.conversation_id:
            return current.conversation_id
        parent = current.parent_id
        current = by_id[current.trace_id].get(parent) if parent else None
        seen += 1
    names = per_trace.get(entry.trace_id)
    return next(iter(names)) if names and len(names) == 1 else None


def _stitch(plans: list[SessionPlan], load: StepLoader) -> list[SessionPlan]:
    """Merge a trace-id session into the earlier one whose conversation its first model call extends."""
    kept: list[SessionPlan] = []
    for plan in sorted(plans, key=_first_start):
        session = plan.session
        first_entry = next((entry for entry in plan.entries if entry.model), None)
        first = load(first_entry) if first_entry is not None and session.conversation_id is None else None
        target = None
        if isinstance(first, ModelStep) and first.input:
            sent = [message_fingerprint(message) for message in first.input]
            for earlier in reversed(kept):
                if earlier.session.conversation_id is None and _extends(sent, earlier, load):
                    target = earlier
                    break
        if target is None:
            kept.append(plan)
            continue
        target.entries.extend(plan.entries)
        target.had = None  # its last model call may have changed
        into = target.session
        into.trace_ids.extend(t for t in session.trace_ids if t not in into.trace_ids)
        for name, value in session.header.items():
            into.header.setdefault(name, value)
        for name, places in session.unmapped.items():
            into.unmapped.setdefault(name, []).extend(places)
        into.problems.extend(session.problems)
    return kept


def _extends(sent: list[str], earlier: SessionPlan, load: StepLoader) -> bool:
    if earlier.had is None:
        earlier.had = _had(earlier, load)
    had = earlier.had
    return bool(had) and had[0] != _NONE and len(sent) > len(had) - 1 and sent[: len(had) - 1] == had[1:]


_NONE = "-"
"""``had``'s first item when the session has no model call with a conversation: it extends nothing."""


def _had(plan: SessionPlan, load: StepLoader) -> list[str]:
    """``["+", fingerprints...]`` of the last model call's conversation and reply, or ``[_NONE]``."""
    last_entry = next((entry for entry in reversed(plan.entries) if entry.model), None)
    last = load(last_entry) if last_entry is not None else None
    if not isinstance(last, ModelStep) or last.input is None:
        return [_NONE]
    had = ["+", *(message_fingerprint(m) for m in last.input)]
    if last.output is not None:
        had.append(message_fingerprint(last.output))
    return had


def _first_start(plan: SessionPlan) -> int:
    return min((entry.start_ns for entry in plan.entries), default=0)
