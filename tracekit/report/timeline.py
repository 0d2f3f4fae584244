"""The trace page's content: the conversation as a timeline of items, each tool call with its result
and the findings that name it, plus the call graph.

Built from the loaded trace when its file can be read; otherwise from the ``tool_calls`` of the
results JSON alone (arguments, no results), so a report never fails for a moved trace file.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracekit.analyze.graph import build_graph
from tracekit.providers import get_provider
from tracekit.report.content_blocks import Block, content_blocks, plain_text, result_text
from tracekit.report.env import clip, compact_json, pretty_json
from tracekit.report.runs import Finding, Run
from tracekit.report.svg import GraphEdge, GraphNode
from tracekit.results.model import ToolCallEntry
from tracekit.trace import (
    Call,
    Intercept,
    ModelCall,
    ToolCall,
    ToolResult,
    Trace,
    content_text,
)

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class CallView:
    """A tool call with its result, as the timeline shows it."""

    index: int
    name: str
    input: Any
    """The arguments as the agent sent them: parsed, or the raw text when they were not JSON."""
    tool_use_id: str | None = None
    has_result: bool = False
    result: str = ""
    is_error: bool = False
    history: bool = False
    injected: bool = False
    injection: str = ""
    """How the result was replaced (intercept mode and tool), when it was."""
    original: str = ""
    """What the agent's tool returned before the intercept replaced it, when recorded."""
    findings: list[Finding] = field(default_factory=list)
    severity: str | None = None
    turn: int | None = None
    tool_latency_ms: float | None = None
    """The tool server's own time for the call (``tracekit mcp record``), when the tool side was recorded."""
    tool_server: str | None = None
    """What the tool server returned, when the tool side was recorded and it differs from what the model saw."""
    tool_error: bool = False
    """Whether the tool server answered with an error (``isError`` or a JSON-RPC error)."""

    @property
    def arguments(self) -> str:
        """The arguments as indented JSON (raw text as it is)."""
        return self.input if isinstance(self.input, str) else pretty_json(self.input)

    @property
    def compact(self) -> str:
        """The arguments on one line, shortened."""
        return clip(self.input, 120) if isinstance(self.input, str) else compact_json(self.input, 120)


@dataclass
class Item:
    """One entry of the timeline."""

    kind: str
    """system | user | assistant | call | result | model | intercept | error | agent_run"""
    blocks: list[Block] = field(default_factory=list)
    call: CallView | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class TraceTotals:
    """Sums over the trace's model calls."""

    model_calls: int = 0
    cache_read_tokens: int = 0
    latency_ms: float | None = None
    """Summed over the model calls that report one (None when none does)."""
    ttft_ms: float | None = None
    """Time to first token of the first model call."""


@dataclass
class TraceView:
    """Everything the trace page and the case page need from one trace."""

    items: list[Item]
    calls: list[CallView]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    totals: TraceTotals
    final_answer: str
    header: dict[str, Any]
    loaded: bool
    """False when the trace file could not be read (the view comes from the results JSON)."""
    load_error: str | None = None
    problems: list[str] = field(default_factory=list)


def build_trace_view(run: Run, trace: Trace | None, load_error: str | None = None) -> TraceView:
    """The timeline, calls and graph of a run, from its loaded trace (or from the results alone)."""
    findings_by_call = _findings_by_call(run.findings)
    history = {call.index for call in run.tool_calls if call.history}
    if trace is None:
        calls = [_call_from_results(call, findings_by_call) for call in run.tool_calls]
        for call in calls:
            call.history = call.index in history
        nodes = [_node(call) for call in calls]
        edges = [GraphEdge("next", a.index, b.index) for a, b in itertools.pairwise(calls)]
        return TraceView(
            items=[Item("call", call=call) for call in calls],
            calls=calls,
            nodes=nodes,
            edges=edges,
            totals=TraceTotals(),
            final_answer="",
            header={},
            loaded=False,
            load_error=load_error,
        )
    paired = trace.calls()
    for pair in paired:
        pair.history = pair.index in history
    items, calls = _timeline(trace, paired, findings_by_call, history)
    nodes = [_node(call) for call in calls]
    return TraceView(
        items=items,
        calls=calls,
        nodes=nodes,
        edges=_edges(paired),
        totals=_totals(trace),
        final_answer=trace.final_answer(),
        header=trace.header.model_dump(mode="json", exclude_none=True, exclude={"kind"}),
        loaded=True,
        problems=[str(problem) for problem in trace.problems],
    )


def _timeline(
    trace: Trace, paired: list[Call], findings_by_call: Mapping[int, list[Finding]], history: set[int]
) -> tuple[list[Item], list[CallView]]:
    results = {pair.index: pair.result for pair in paired if pair.result is not None}
    interceptions: dict[int, list[Intercept]] = {}
    by_use_id: dict[str, int] = {}
    for record in trace.kind("tool_call"):
        if record.id:
            by_use_id.setdefault(record.id, record.index)
    for record in trace.kind("intercept"):
        index = record.call_index if record.call_index is not None else by_use_id.get(record.tool_use_id or "")
        if index is not None:
            interceptions.setdefault(index, []).append(record)
    served = {record.call_index: record for record in trace.kind("mcp_exchange")
              if record.method == "tools/call" and record.call_index is not None}  # fmt: skip
    items: list[Item] = []
    calls: list[CallView] = []
    shown_results: set[int] = set()
    for record in trace.records:  # every record, side calls included; told apart by kind
        kind = record.kind
        if kind == "system_message":
            items.append(Item("system", blocks=content_blocks(record.content)))
        elif kind == "user_message":
            items.append(Item("user", blocks=content_blocks(record.content), detail={"message": record.message_index}))
        elif kind == "assistant_message":
            blocks = [b for b in content_blocks(record.content) if b.type != "tool_use"]
            if blocks:
                items.append(
                    Item("assistant", blocks=blocks, detail={"message": record.message_index,
                                                              "stop_reason": record.stop_reason})
                )
        elif kind == "tool_call":
            result = results.get(record.index)
            view = _call_view(record, result, interceptions.get(record.index, []), findings_by_call)
            view.history = record.index in history
            if record.index in served:
                _tool_side(view, served[record.index])
            if result is not None:
                shown_results.add(id(result))
            calls.append(view)
            items.append(Item("call", call=view))
        elif kind == "tool_result":
            if id(record) not in shown_results:
                items.append(Item("result", blocks=[Block("text", result_text(record.content))],
                                  detail={"is_error": record.is_error, "name": record.name,
                                          "tool_use_id": record.tool_use_id}))
        elif kind == "model_call":
            items.append(Item("model", detail=_model_detail(record)))
        elif kind == "intercept":
            if record.call_index is None and (record.tool_use_id or "") not in by_use_id:
                items.append(Item("intercept", detail={"mode": record.mode, "tool": record.tool,
                                                       "injected": plain_text(record.injected)}))
        elif kind == "error":
            items.append(Item("error", detail={"source": record.source, "message": record.message,
                                               "status": record.status, "body": plain_text(record.body)}))
        elif kind == "guard":  # the live guard's events (record --guard)
            items.append(Item("guard", detail={"action": record.action, "rule": record.rule, "calls": record.calls,
                                               "message": record.message}))  # fmt: skip
        elif kind == "agent_run":
            items.append(Item("agent_run", detail={"command": record.command, "exit_status": record.exit_status,
                                                   "timed_out": record.timed_out, "stderr": record.stderr,
                                                   "duration_ms": record.duration_ms}))
    return items, calls


def _call_view(
    call: ToolCall, result: ToolResult | None, intercepts: list[Intercept], findings: Mapping[int, list[Finding]]
) -> CallView:
    flagged = findings.get(call.index, [])
    injection = "; ".join(
        intercept.mode + (f" on {intercept.tool}" if intercept.tool else "") for intercept in intercepts
    )
    original = "\n".join(plain_text(i.original) for i in intercepts if i.original is not None)
    return CallView(
        index=call.index,
        name=call.name,
        input=call.input,
        tool_use_id=call.id,
        has_result=result is not None,
        result=result_text(result.content) if result is not None else "",
        is_error=result.is_error if result is not None else False,
        injected=bool(intercepts) or (result.injected if result is not None else False),
        injection=injection,
        original=original,
        findings=flagged,
        severity=_worst(flagged),
        turn=call.message_index,
    )


def _tool_side(view: CallView, exchange: Any) -> None:
    """What the tool server did for the call (both sides of it: the model's view is ``view.result``)."""
    result = exchange.result if isinstance(exchange.result, dict) else {}
    view.tool_latency_ms = exchange.latency_ms
    view.tool_error = bool(result.get("isError")) or exchange.error is not None
    returned = result_text(result.get("content")) if result else plain_text(exchange.error)
    view.tool_server = returned if returned != view.result else None


def _call_from_results(call: ToolCallEntry, findings: Mapping[int, list[Finding]]) -> CallView:
    index = call.index
    flagged = findings.get(index, [])
    return CallView(
        index=index,
        name=call.name or "?",
        input=call.input,
        is_error=call.is_error,
        findings=flagged,
        severity=_worst(flagged),
    )


def _node(call: CallView) -> GraphNode:
    title = f"#{call.index} {call.name}"
    if call.is_error:
        title += " — error"
    if call.injected:
        title += " — injected result"
    if call.history:
        title += " — history (not judged)"
    for finding in call.findings:
        title += f"\n{finding.severity}: {finding.kind}"
    return GraphNode(
        index=call.index, tool=call.name, is_error=call.is_error, history=call.history, injected=call.injected,
        severity=call.severity, turn=call.turn, title=title,
    )


def _edges(calls: list[Call]) -> list[GraphEdge]:
    graph = build_graph(calls)
    edges = [GraphEdge("next", e.source, e.target) for e in graph.next_edges]
    edges += [
        GraphEdge("data", e.source, e.target, [f"{e.source_path or '(text)'} → {e.target_path or '(input)'}"])
        for e in graph.data_edges
    ]
    edges += [GraphEdge("same", e.source, e.target) for e in graph.same_edges]
    return edges


def _totals(trace: Trace) -> TraceTotals:
    model_calls = trace.of_kind(ModelCall)
    latencies = [record.latency_ms for record in model_calls if record.latency_ms is not None]
    return TraceTotals(
        model_calls=len(model_calls),
        cache_read_tokens=sum(record.usage.cache_read_input_tokens or 0 for record in model_calls),
        latency_ms=sum(latencies) if latencies else None,
        ttft_ms=next((record.ttft_ms for record in model_calls if record.ttft_ms is not None), None),
    )


def side_call_answer(record: ModelCall) -> str:
    """The text a side call (``ModelCall.side_call``) got back: its reply read by its provider ('' if none)."""
    if not isinstance(record.response, dict):
        return ""
    try:
        message = get_provider(record.provider).response_message(record.response)
    except Exception:  # an unknown provider or a body it cannot read: the call is still shown
        return ""
    return content_text(message.get("content")) if isinstance(message, dict) else ""


def _model_detail(record: ModelCall) -> dict[str, Any]:
    side = {"side_call": True, "answer": side_call_answer(record)} if getattr(record, "side_call", None) else {}
    return {
        **side,
        "index": record.index,
        "model": record.model,
        "provider": record.provider,
        "status": record.status,
        "stream": record.stream,
        "input_tokens": record.usage.input_tokens,
        "output_tokens": record.usage.output_tokens,
        "latency_ms": record.latency_ms,
        "ttft_ms": record.ttft_ms,
        "stop_reason": record.stop_reason,
        "attempts": record.attempts,
        "partial": record.partial,
        "error": plain_text(record.error) if record.error else "",
    }


def _findings_by_call(findings: Iterable[Finding]) -> dict[int, list[Finding]]:
    by_call: dict[int, list[Finding]] = {}
    for finding in findings:
        for index in finding.calls:
            by_call.setdefault(index, []).append(finding)
    return by_call


def _worst(findings: list[Finding]) -> str | None:
    if not findings:
        return None
    return min((finding.severity for finding in findings), key=lambda s: _SEVERITY_ORDER.get(s, 3))
