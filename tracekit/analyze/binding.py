"""Binding a trace to its case, and what analysis knows about that pairing.

A trace is bound to the case named by ``--case`` or by its header's ``case_id``. The case's input is the
history: calls in it are context; checks and detectors judge only what the agent did after it.

The history is never taken on trust: ``bind_history`` compares the trace's opening messages with the
case's input (``input.messages`` plus the user message), message by message (role, text, tool calls and
their arguments, tool results). When they match, the first K messages are the history. When the trace
carries only the end of the input (an imported transcript that starts with the user's question), the
history is what it carries. Otherwise the history ends at the first message that differs, and the binding
says which one and how; a call the agent made is never silently taken as history.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tracekit.analyze import tokens
from tracekit.trace.canonical import canonical_json
from tracekit.trace.view import content_text

if TYPE_CHECKING:
    from tracekit.analyze.graph import CallGraph, CallNode
    from tracekit.cases import Case, Catalog
    from tracekit.trace import Trace


def history_length(case: Case) -> int:
    """K: the number of messages of the case's input (history plus the user message)."""
    return len(case.input.messages) + (1 if case.input.user is not None or case.input.images else 0)


def bind_case(trace: Trace, cases: Mapping[str, Case], case_id: str | None = None) -> tuple[Case | None, str | None]:
    """The case a trace runs (``case_id`` overrides the header), and a problem when it names an
    unknown case."""
    wanted = case_id or trace.header.case_id
    if wanted is None:
        return None, None
    case = cases.get(wanted)
    if case is None:
        return None, f"{trace.path or trace.trace_id}: case {wanted!r} is not in the case library"
    return case, None


@dataclass(frozen=True)
class HistoryBinding:
    """Where the case's input ends in a trace: ``messages`` is the history boundary (the first message the
    agent is judged from), ``problem`` says how the trace's opening departs from the case's input."""

    messages: int
    problem: str | None = None


def bind_history(trace: Trace, case: Case) -> HistoryBinding:
    """The history boundary of ``trace`` run as ``case``, from a comparison of its opening messages with the
    case's input (see the module docstring)."""
    expected = [_essence(message) for message in case_input_messages(case)]
    if not expected:
        return HistoryBinding(0)
    actual = _trace_messages(trace, len(expected))
    where = trace.path or trace.trace_id
    first = _first_difference(expected, actual)
    if first is None:
        return HistoryBinding(len(expected))
    # A transcript that carries only the end of the input (e.g. it starts with the user's question).
    for offset in range(1, len(expected)):
        tail = expected[offset:]
        if _first_difference(tail, actual[: len(tail)]) is None:
            return HistoryBinding(
                len(tail),
                f"{where}: the trace opens with message {offset} of case {case.id}'s input, not message 0: the "
                f"first {offset} input message(s) are missing; the history is the {len(tail)} message(s) it "
                f"carries, and every call after them is judged",
            )
    got = _describe(actual[first]) if first < len(actual) else "nothing (the trace is shorter)"
    return HistoryBinding(
        first,
        f"{where}: message {first} differs from case {case.id}'s input: expected {_describe(expected[first])}, "
        f"got {got}; the history ends before it, and every call from message {first} on is judged",
    )


def case_input_messages(case: Case) -> list[dict[str, Any]]:
    """The case's input as messages: its history, then the user message (text; images as image blocks)."""
    messages = list(case.input.messages)
    if case.input.user is not None or case.input.images:
        blocks: list[dict[str, Any]] = [{"type": "image"} for _ in case.input.images]
        if case.input.user is not None:
            blocks.append({"type": "text", "text": case.input.user})
        messages.append({"role": "user", "content": blocks})
    return messages


@dataclass(frozen=True)
class _Essence:
    role: str
    text: str
    calls: tuple[str, ...] = ()
    results: tuple[str, ...] = ()


_SPACE = re.compile(r"\s+")


def _essence(message: dict[str, Any]) -> _Essence:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    texts, calls, results = [], [], []
    for block in blocks:
        if not isinstance(block, dict):
            texts.append(str(block))
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind in ("tool_use", "server_tool_use"):
            calls.append(f"{block.get('name')} {canonical_json(block.get('input', {})).decode()}")
        elif kind == "tool_result":
            results.append(_normal(content_text(block.get("content"))))
    return _Essence(str(message.get("role")), _normal("".join(texts)), tuple(calls), tuple(results))


def _trace_messages(trace: Trace, count: int) -> list[_Essence]:
    """The essence of the trace's first ``count`` conversation messages, from its records."""
    parts: dict[int, dict[str, Any]] = {}
    for record in trace.records:
        index = getattr(record, "message_index", None)
        if index is None or index >= count:
            continue
        entry = parts.setdefault(index, {"role": "user", "texts": [], "calls": [], "results": []})
        kind = record.kind
        if kind == "assistant_message":
            entry["role"] = "assistant"
            entry["texts"].append("".join(str(b.get("text", "")) for b in record.content if b.get("type") == "text"))
        elif kind == "user_message":
            entry["texts"].append(content_text(record.content))
        elif kind == "tool_call":
            entry["calls"].append(f"{record.name} {canonical_json(record.input).decode()}")
        elif kind == "tool_result":
            entry["results"].append(_normal(content_text(record.content)))
    return [
        _Essence(entry["role"], _normal("".join(entry["texts"])), tuple(entry["calls"]), tuple(entry["results"]))
        for _, entry in sorted(parts.items())
    ]


def _first_difference(expected: list[_Essence], actual: list[_Essence]) -> int | None:
    for position, want in enumerate(expected):
        if position >= len(actual) or actual[position] != want:
            return position
    return None


def _describe(message: _Essence) -> str:
    parts = [message.role]
    if message.text:
        parts.append(repr(message.text if len(message.text) <= 60 else message.text[:59] + "…"))
    if message.calls:
        parts.append("calls " + "; ".join(message.calls)[:120])
    if message.results:
        parts.append(f"{len(message.results)} tool result(s)")
    return " ".join(parts)


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass
class CaseRun:
    """One trace seen as a run of one case: the graph, the history boundary, the catalog."""

    trace: Trace
    case: Case
    graph: CallGraph
    history_messages: int
    catalog: Catalog | None = None
    history_problem: str | None = None
    """How the trace's opening departs from the case's input (``bind_history``), when it does."""

    @cached_property
    def judged(self) -> list[CallNode]:
        """The calls after the history."""
        return self.graph.judged

    @cached_property
    def final_answer(self) -> str:
        """Text of the agent's last message after the history (empty when it never answered)."""
        message = tokens.final_answer_message(self.trace, self.history_messages)
        return message.text if message is not None else ""

    @cached_property
    def answer_tokens(self) -> tokens.TokenCount:
        """Output tokens of the final answer (provider usage, else tiktoken offline)."""
        return tokens.answer_tokens(self.trace, self.history_messages)
