"""From mapped spans to canonical traces: model and tool steps, grouped into sessions, built in order.

The OpenTelemetry importers (GenAI conventions, OpenInference) turn each span into a ``ModelStep`` (one
model call: what it was sent, what it answered, usage, timing), a ``ToolStep`` (one tool execution), a
container (an agent span whose attributes describe the session) or nothing. This module does the rest,
the same way for both:

- **Sessions** (``otel_grouping``). Steps that name a conversation (``gen_ai.conversation.id``,
  OpenInference ``session.id``, inherited from an ancestor span) form one session across OTel traces.
  Others are grouped by their trace id, and a group whose first model call re-sends the whole
  conversation of an earlier group plus more continues that session, which is how the proxy stitches an
  agent that sends each model call in a trace of its own (the official OpenAI instrumentation does).
- **Records.** Each model step adds its input conversation and its reply to a ``TraceBuilder``, exactly
  as the proxy adds each request and response, so tool calls and results are derived once. Without
  captured content, the conversation is carried over from step to step and completed from the tool
  steps (name, call id, arguments and result when the producer recorded them), and the trace's
  ``meta.problems`` says what was missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracekit.importers.common import ImportedTrace, new_header
from tracekit.importers.otel_otlp import Span
from tracekit.trace import Content, ModelCall, TraceBuilder, Usage


class _Missing:
    """The type of ``MISSING``: one object, the same after a pickle round trip (steps wait on disk)."""

    def __reduce__(self) -> str:
        return "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""A value the producer did not record (content capture off), as opposed to an empty one."""


@dataclass
class _Timed:
    """Where a step's span was read and when it ran."""

    where: str
    start_ns: int
    end_ns: int


@dataclass
class ModelStep(_Timed):
    """One model call read from a span."""

    provider: str | None = None
    model: str | None = None
    usage: Usage = field(default_factory=Usage)
    system: Content | None = None
    input: list[dict[str, Any]] | None = None
    """The canonical conversation sent (None: not captured)."""
    stop_reason: str | None = None
    output: dict[str, Any] | None = None
    """The canonical assistant reply (None: not captured, or the call failed)."""
    error: dict[str, Any] | None = None
    status: int | None = None
    response: dict[str, Any] | None = None
    """Response fields worth keeping (``id``, ``model``) in no provider's exact shape."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further ``ModelCall`` fields the span carried (``ttft_ms``, ``attempts``, ``partial``)."""


@dataclass
class ToolStep(_Timed):
    """One tool execution read from a span."""

    name: str
    call_id: str | None = None
    arguments: Any = MISSING
    result: Any = MISSING
    is_error: bool = False
    injected: bool = False


Step = ModelStep | ToolStep


@dataclass
class MappedSpan:
    """What a mapper made of one span: a step, or ``role`` ``container`` / ``ignored`` with ``header`` fields."""

    span: Span
    step: Step | None = None
    role: str = "ignored"
    conversation_id: str | None = None
    header: dict[str, Any] = field(default_factory=dict)
    """Session fields a container span carries (``trace_id``, ``case_id``, ``agent``, ...)."""
    problems: list[str] = field(default_factory=list)
    """What could not be read or mapped in this span (it goes to its trace's ``meta.problems``)."""


@dataclass
class Session:
    """The steps of one agent session, in the order they started."""

    conversation_id: str | None
    trace_ids: list[str]
    steps: list[Step]
    header: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    unmapped: dict[str, list[str]] = field(default_factory=dict)
    """Spans that are neither model calls nor tool calls (embeddings, unknown kinds): name -> where."""
    missing_why: str = "content capture off?"
    """Why content may be missing, for the notes that say it is."""

    @property
    def model_steps(self) -> list[ModelStep]:
        return [step for step in self.steps if isinstance(step, ModelStep)]


def joined_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with consecutive assistant messages joined into one turn, and consecutive user messages
    that hold only tool results too.

    The Responses API sends a turn as separate items (a ``message``, then each ``function_call``; each
    ``function_call_output``), and instrumentations write each item as a message of its own, while the
    reply they record is one message; the proxy's Responses provider groups the items into turns, and so
    does this, so a re-sent reply reads as the reply it was."""
    joined: list[dict[str, Any]] = []
    for message in messages:
        previous = joined[-1] if joined else None
        if previous is not None and previous.get("role") == message.get("role") and (
            message.get("role") == "assistant" or (_only_results(previous) and _only_results(message))
        ):
            content = _as_blocks(previous.get("content")) + _as_blocks(message.get("content"))
            joined[-1] = {**previous, "content": content}
        else:
            joined.append(message)
    return joined


def _only_results(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (message.get("role") == "user" and isinstance(content, list) and bool(content)
            and all(isinstance(block, dict) and block.get("type") == "tool_result" for block in content))


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if isinstance(content, str) and content else []


# --------------------------------------------------------------------------- building records


def build_session(
    session: Session,
    trace_id: str,
    *,
    source: str,
    meta: dict[str, Any],
) -> ImportedTrace:
    """The records of one session: each model step's conversation and reply added as the proxy adds a
    request and its response; tool steps fill in what the conversation lacks."""
    steps = sorted(session.steps, key=lambda step: (step.start_ns, step.end_ns))
    header_fields = session.header
    models = [step for step in steps if isinstance(step, ModelStep)]
    header = new_header(
        trace_id,
        header_fields.get("source") or source,
        provider=header_fields.get("provider") or next((m.provider for m in models if m.provider), None),
        model=header_fields.get("model") or next((m.model for m in models if m.model), None),
        session=header_fields.get("session", session.conversation_id),
        case_id=header_fields.get("case_id"),
        group=header_fields.get("group"),
        repeat=header_fields.get("repeat"),
        meta=dict(meta),
    )
    builder = TraceBuilder(header)
    tools = {step.call_id: step for step in steps if isinstance(step, ToolStep) and step.call_id}
    problems = list(session.problems)
    for name, places in session.unmapped.items():
        times = f"{len(places)} spans" if len(places) > 1 else "span"
        problems.append(f"{places[0]}: {times} {name!r}: not a model call or a tool call; not mapped")
    conversation: list[dict[str, Any]] = []
    system: Content | None = None
    after: list[ToolStep] = []  # tool steps since the last model step
    for position, step in enumerate(steps):
        if isinstance(step, ToolStep):
            after.append(step)
            continue
        moment = step.start_ns / 1e9 if step.start_ns else None
        if step.input is not None:
            sent = [_mark_errors(message, tools) for message in step.input]
        else:
            sent = conversation + _tool_turns(after, conversation, problems, session.missing_why)
            problems.append(f"{step.where}: the messages sent were not recorded ({session.missing_why}); "
                            "the conversation is carried over from the earlier calls and tool spans")
        if step.system is not None:
            system = step.system
        builder.add_conversation(sent, system, injected=_injected(tools), timestamp=moment)
        reply = step.output
        if reply is None and step.error is None:
            issued = _tools_until_next_model(steps, position)
            reply = {"role": "assistant", "content": [_tool_use(tool) for tool in issued]}
            problems.append(f"{step.where}: the reply was not recorded ({session.missing_why})"
                            + ("; its tool calls are taken from the tool spans" if issued else ""))
        call = ModelCall(
            index=0,
            provider=step.provider or header.provider or "unknown",
            model=step.model,
            status=step.status,
            response=step.response,
            usage=step.usage,
            stop_reason=step.stop_reason,
            latency_ms=(step.end_ns - step.start_ns) / 1e6 if step.end_ns >= step.start_ns > 0 else None,
            error=step.error,
            t=moment,
            **step.extra,
        )
        builder.add_model_call(call, reply)
        conversation = sent + ([reply] if reply is not None else [])
        after = []
    if after:
        unanswered = _tool_turns(after, conversation, problems, session.missing_why)
        if unanswered:
            end = max(tool.end_ns for tool in after)
            builder.add_conversation(conversation + unanswered, system, injected=_injected(tools),
                                     timestamp=end / 1e9 if end else None)
    if not any(step.start_ns for step in steps):
        for record in builder.records[1:]:
            record.t = None
    if problems:
        header.meta["problems"] = problems
    return ImportedTrace(trace_id, builder.records)


def _tools_until_next_model(steps: list[Step], position: int) -> list[ToolStep]:
    issued = []
    for step in steps[position + 1:]:
        if isinstance(step, ModelStep):
            break
        issued.append(step)
    return issued


def _tool_use(tool: ToolStep) -> dict[str, Any]:
    arguments = tool.arguments if tool.arguments is not MISSING else {}
    return {"type": "tool_use", "id": tool.call_id, "name": tool.name, "input": arguments}


def _tool_turns(
    tools: list[ToolStep], conversation: list[dict[str, Any]], problems: list[str], why: str
) -> list[dict[str, Any]]:
    """The turns that tool spans add to ``conversation``: an assistant turn issuing the calls it does not
    hold yet (a tool span with no model call before it), then one user turn of the results not in it."""
    calls = [block for block in _blocks(conversation, "assistant") if block.get("type") == "tool_use"]
    issued = {block.get("id") or block.get("name") for block in calls}
    results_in = [block for block in _blocks(conversation, "user") if block.get("type") == "tool_result"]
    answered = {block.get("tool_use_id") for block in results_in}
    turns = []
    new_calls = [_tool_use(tool) for tool in tools if (tool.call_id or tool.name) not in issued]
    if new_calls:
        turns.append({"role": "assistant", "content": new_calls})
    results = []
    for tool in tools:
        if tool.call_id is not None and tool.call_id in answered:
            continue
        if tool.result is MISSING:
            problems.append(f"{tool.where}: the result of {tool.name} was not recorded ({why})")
        results.append({"type": "tool_result", "tool_use_id": tool.call_id,
                        "content": "" if tool.result is MISSING else tool.result, "is_error": tool.is_error})
    if results:
        turns.append({"role": "user", "content": results})
    return turns


def _blocks(conversation: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for message in conversation:
        content = message.get("content")
        if message.get("role") == role and isinstance(content, list):
            blocks.extend(block for block in content if isinstance(block, dict))
    return blocks


def _mark_errors(message: dict[str, Any], tools: dict[str, ToolStep]) -> dict[str, Any]:
    """A tool result whose tool span failed is an error result (GenAI message parts carry no error flag)."""
    content = message.get("content")
    if not tools or not isinstance(content, list):
        return message
    blocks = []
    for block in content:
        tool = tools.get(block.get("tool_use_id")) if block.get("type") == "tool_result" else None
        if tool is not None and tool.is_error and not block.get("is_error"):
            block = {**block, "is_error": True}
        blocks.append(block)
    return {**message, "content": blocks}


def _injected(tools: dict[str, ToolStep]) -> list[str]:
    return [tool_id for tool_id, tool in tools.items() if tool.injected]
