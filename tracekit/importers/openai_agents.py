"""Import the OpenAI Agents SDK's traces (its exported trace JSON) as tracekit traces.

The SDK's tracing exports each trace and span with ``export()`` (openai/openai-agents-python,
``src/agents/tracing/spans.py``, ``traces.py``, ``span_data.py``) and its backend exporter sends them as
``{"data": [...]}``: a trace is ``{"object": "trace", "id", "workflow_name", "group_id", "metadata"}``, a
span ``{"object": "trace.span", "id", "trace_id", "parent_id", "started_at", "ended_at", "span_data",
"error"}``. Span data by ``type``:

- ``response`` (the default Responses model): ``response_id`` and ``usage`` only: the SDK's export leaves
  out the messages and the reply. ``tracekit.integrations.openai_agents.TracekitProcessor`` keeps them
  (it adds ``input`` and ``response``, read here with the Responses provider's conversion);
- ``generation`` (``OpenAIChatCompletionsModel`` and other chat models): ``input`` / ``output`` chat
  messages (a streamed run's ``output`` is the Responses-shaped response the SDK assembled), ``model``,
  ``usage``;
- ``function``: a tool call with ``name``, ``input`` (JSON arguments) and ``output``;
- ``agent`` and the SDK's ``task`` / ``turn`` custom spans hold the others; ``handoff``, ``guardrail``,
  ``mcp_tools``, ``transcription``, ``speech`` and other custom spans are not model or tool calls and
  are listed in the trace's ``meta.problems``.

One tracekit trace per SDK trace (``group_id``, the SDK's conversation id, is the ``session``), built by
``otel_sessions`` as the span importers build theirs, so it analyzes like the proxy's recording.
Accepted files: that ``{"data": [...]}`` body, a JSON list of the items, or JSONL of either; folders too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tracekit.importers.common import DATA_ERRORS, ImportedTrace, describe, input_files, json_values, unique_ids
from tracekit.importers.otel_sessions import ModelStep, Session, Step, ToolStep, build_session
from tracekit.providers import openai, openai_responses
from tracekit.trace import Usage, parse_json_arguments

SOURCE = "import:openai-agents"
SUFFIXES = (".json", ".jsonl")
_HOLDERS = ("agent", "task", "turn")


def import_openai_agents(paths: Iterable[str | Path], problems: list[str]) -> list[ImportedTrace]:
    """One trace per Agents SDK trace in ``paths``; unreadable parts go to ``problems``."""
    traces: dict[str, dict[str, Any]] = {}
    spans: dict[str, list[dict[str, Any]]] = {}
    for path in input_files(paths, SUFFIXES, problems):
        for where, item in _items(path, problems):
            kind = item.get("object")
            if kind == "trace" and isinstance(item.get("id"), str):
                traces.setdefault(item["id"], {**item, "_where": where})
            elif kind == "trace.span" and isinstance(item.get("trace_id"), str) and isinstance(
                item.get("span_data"), dict
            ):
                spans.setdefault(item["trace_id"], []).append({**item, "_where": where})
            else:
                problems.append(f"{where}: neither an Agents SDK trace nor a span (object, id, span_data); skipped")
    ids = list(dict.fromkeys([*traces, *spans]))
    imported = []
    for trace_id, stem in zip(ids, unique_ids(ids), strict=True):
        trace = traces.get(trace_id, {"id": trace_id})
        where = str(trace.get("_where") or (spans.get(trace_id) or [{}])[0].get("_where") or f"trace {trace_id}")
        try:
            records = agents_trace(trace, spans.get(trace_id, [])).records
        except DATA_ERRORS as exc:  # a field of a type no check expected: that trace is skipped
            problems.append(f"{where}: trace {trace_id[:80]} cannot be imported: {describe(exc)}; skipped")
            continue
        imported.append(ImportedTrace(stem, records, origin=where))
    return imported


def agents_trace(trace: dict[str, Any], spans: list[dict[str, Any]], source: str = SOURCE) -> ImportedTrace:
    """The canonical trace of one SDK trace and its spans (exported dicts, in any order)."""
    trace_id = str(trace.get("id"))
    group = trace.get("group_id")
    session = Session(group if isinstance(group, str) else None, [trace_id], [], missing_why="not in the SDK's export")
    if group is not None and not isinstance(group, str):
        session.problems.append(f"{trace.get('_where') or 'the trace'}: group_id: expected a string, got "
                                f"{type(group).__name__}; left out")
    unmapped: dict[str, list[str]] = {}
    for span in spans:
        data = span["span_data"]
        kind = str(data.get("type"))
        where = str(span.get("_where") or f"span {span.get('id')}")
        step = span_step(span, where)
        if step is not None:
            session.steps.append(step)
        elif kind == "agent":
            session.header.setdefault("agent", data.get("name"))
        elif not (kind in _HOLDERS or (kind == "custom" and data.get("name") in _HOLDERS)):
            unmapped.setdefault(f"{kind} {data.get('name') or ''}".strip(), []).append(where)
    session.unmapped = unmapped
    if any(isinstance(s, ModelStep) and s.input is None and s.extra.get("_exported_only") for s in session.steps):
        session.problems.append(
            "the SDK's exported response spans hold only the response id and usage: the messages, the model's "
            "replies and the final answer are not in the export; tool calls come from the function spans "
            "(record with tracekit.integrations.openai_agents.TracekitProcessor to keep everything)"
        )
    for step in session.steps:
        if isinstance(step, ModelStep):
            step.extra.pop("_exported_only", None)
    meta: dict[str, Any] = {"openai_agents": {"trace_id": trace_id, "workflow": trace.get("workflow_name")}}
    if trace.get("metadata"):
        meta["openai_agents"]["metadata"] = trace["metadata"]
    if session.header.get("agent"):
        meta["agent"] = session.header["agent"]
    return build_session(session, trace_id, source=source, meta=meta)


def span_step(span: dict[str, Any], where: str) -> Step | None:
    """The model or tool step of one exported span (None for other spans)."""
    data = span["span_data"]
    kind = data.get("type")
    start, end = _time(span.get("started_at")), _time(span.get("ended_at"))
    error = span.get("error")
    if kind == "response":
        step = ModelStep(where, start, end, provider=openai_responses.NAME)
        response = data.get("response")
        if isinstance(response, dict):
            body = {"input": data.get("input") or [], "instructions": response.get("instructions")}
            step.system, step.input = openai_responses.request_conversation(body)
            step.output = openai_responses.response_message(response)
            step.usage = openai_responses.response_usage(response)
            step.stop_reason = openai_responses.response_stop_reason(response)
            step.model = response.get("model")
        else:
            step.usage = openai_responses.response_usage({"usage": data.get("usage")})
            step.extra["_exported_only"] = True
        if data.get("response_id") or isinstance(response, dict):
            step.extra["response_id"] = data.get("response_id") or (response or {}).get("id")
    elif kind == "generation":
        step = ModelStep(where, start, end, provider=openai.NAME, model=data.get("model"))
        step.usage = _usage(data.get("usage"))
        if isinstance(data.get("input"), list):
            step.system, step.input = openai.request_conversation({"messages": data["input"]})
        outputs = [message for message in data.get("output") or [] if isinstance(message, dict)]
        if outputs and isinstance(outputs[0].get("output"), list):
            # A streamed chat completion: the SDK keeps the Responses-shaped response it assembled
            # (``agents/models/_trace.py``, ``populate_generation_span``), not the chat message.
            step.output = openai_responses.response_message(outputs[0])
        elif outputs:
            step.output = {"role": "assistant", "content": openai.assistant_blocks(outputs[0])}
    elif kind == "function":
        tool = ToolStep(where, start, end, str(data.get("name") or "tool"), is_error=error is not None)
        if data.get("input") is not None:
            raw = data["input"]
            tool.arguments = parse_json_arguments(raw)[0] if isinstance(raw, str) else raw
        if data.get("output") is not None or error is None:
            tool.result = "" if data.get("output") is None else str(data["output"])
        return tool
    else:
        return None
    if error is not None:
        step.error = error if isinstance(error, dict) else {"message": str(error)}
    return step


def _items(path: Path, problems: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    for where, value in json_values(path, problems):
        listed = value.get("data") if isinstance(value, dict) and "object" not in value else value
        if isinstance(listed, dict):
            yield where, listed
        elif isinstance(listed, list):
            for number, item in enumerate(listed):
                if isinstance(item, dict):
                    yield f"{where}: data[{number}]", item
                else:
                    problems.append(f"{where}: data[{number}]: expected an object")
        else:
            problems.append(f"{where}: expected {{\"data\": [...]}}, a list of traces and spans, or one of them")


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    return Usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"))


def _time(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1_000_000) * 1_000
