"""Hand-made traces for the analyze tests, built with ``TraceBuilder`` from canonical messages.

A transcript is written as the agent's steps after the case input::

    steps = [call("search_flights", {"origin": "北京"}, '{"total": 0}'), say("没有航班。")]
    trace = case_trace(case, steps)           # the case's input is the history, then the steps

``call`` is one assistant turn with one tool_use (``parallel`` puts several in one turn) and its
result; ``say`` is a text reply. Results are the strings given (the tests write them by hand, shaped
like the catalog's and the seeds' results). Nothing here talks to a model.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tracekit.cases import Case
from tracekit.trace import Header, ModelCall, Trace, TraceBuilder, Usage, write_trace

_ids = itertools.count(1)


@dataclass
class Call:
    """One tool_use and the result the agent got for it."""

    name: str
    input: Any
    result: str = "{}"
    is_error: bool = False


@dataclass
class Turn:
    """One assistant turn: optional text, tool calls (issued together), and their results."""

    text: str | None = None
    calls: list[Call] = field(default_factory=list)


def call(name: str, arguments: Any, result: Any = "{}", *, error: bool = False, text: str | None = None) -> Turn:
    """An assistant turn with one tool call and its result (a dict result is written as JSON)."""
    return Turn(text, [Call(name, arguments, _text(result), error)])


def parallel(*calls: Call, text: str | None = None) -> Turn:
    """An assistant turn with several tool calls issued together."""
    return Turn(text, list(calls))


def say(text: str) -> Turn:
    """A text reply of the agent."""
    return Turn(text)


def user(text: str) -> dict[str, Any]:
    """A user message (between agent turns)."""
    return {"role": "user", "content": text}


def messages_of(
    steps: Sequence[Turn | dict[str, Any]], history: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Canonical messages: the history, then each step (tool results follow their turn)."""
    messages = list(history or [])
    for step in steps:
        if isinstance(step, dict):
            messages.append(step)
            continue
        blocks: list[dict[str, Any]] = []
        if step.text is not None:
            blocks.append({"type": "text", "text": step.text})
        ids = []
        for item in step.calls:
            tool_id = f"toolu_t{next(_ids):04d}"
            ids.append(tool_id)
            blocks.append({"type": "tool_use", "id": tool_id, "name": item.name, "input": item.input})
        messages.append({"role": "assistant", "content": blocks if step.calls else (step.text or "")})
        if step.calls:
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool_id,
                            "content": item.result,
                            "is_error": item.is_error,
                        }
                        for tool_id, item in zip(ids, step.calls, strict=True)
                    ],
                }
            )
    return messages


def build_trace(
    messages: list[dict[str, Any]],
    *,
    trace_id: str = "t",
    case_id: str | None = None,
    group: str | None = None,
    system: str | None = None,
    answer_usage: int | None = None,
    repeat: int | None = None,
    source: str | None = None,
    model: str | None = None,
) -> Trace:
    """A trace of these messages. ``answer_usage`` records a model call with that many output tokens
    for the final answer (as the proxy would), so that token checks read provider usage. ``source`` and
    ``model`` name the run the trace belongs to, ``repeat`` its repeat in that run."""
    header = Header(trace_id=trace_id, case_id=case_id, group=group, repeat=repeat, source=source, model=model)
    builder = TraceBuilder(header)
    if answer_usage is not None and messages and messages[-1]["role"] == "assistant":
        builder.add_conversation(messages[:-1], system)
        model_call = ModelCall(index=0, provider="anthropic", usage=Usage(output_tokens=answer_usage))
        builder.add_model_call(model_call, messages[-1])
    else:
        builder.add_conversation(messages, system)
    header, *records = builder.records
    return Trace(header=header, records=records)


def case_history(case: Case) -> list[dict[str, Any]]:
    """The case's input as messages: its history, then its user message (images as text here)."""
    history = list(case.input.messages)
    if case.input.user is not None:
        history.append({"role": "user", "content": case.input.user})
    elif case.input.images:
        history.append({"role": "user", "content": "[image]"})
    return history


def case_trace(case: Case, steps: Sequence[Turn | dict[str, Any]], **options: Any) -> Trace:
    """A trace of ``case``: its input as the history, then the agent's ``steps``."""
    return build_trace(messages_of(steps, case_history(case)), case_id=case.id, **options)


def write(trace: Trace, path: Path) -> Path:
    """Write a trace file (header first)."""
    return write_trace(path, [trace.header, *trace.records])


def _text(result: Any) -> str:
    return result if isinstance(result, str) else orjson.dumps(result).decode()
