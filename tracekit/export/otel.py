"""Traces as OpenTelemetry spans in OTLP JSON, following the GenAI semantic conventions.

Pinned to **OpenTelemetry semantic conventions v1.41.0** (the last release whose GenAI conventions
live in open-telemetry/semantic-conventions; files docs/gen-ai/gen-ai-spans.md and
gen-ai-agent-spans.md). From there:

- one ``invoke_agent {gen_ai.agent.name}`` span per trace (kind INTERNAL), the parent of
- one ``chat {gen_ai.request.model}`` span per model call (kind CLIENT) with ``gen_ai.operation.name``,
  ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.response.model``,
  ``gen_ai.response.finish_reasons``, ``gen_ai.usage.input_tokens`` / ``output_tokens``,
  ``gen_ai.conversation.id``, ``error.type`` on failure;
- one ``execute_tool {gen_ai.tool.name}`` span per tool call (kind INTERNAL) with ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.type`` = ``function``, ``error.type`` when the tool failed.

Content is opt-in, as the conventions require: only with ``with_content`` are
``gen_ai.system_instructions``, ``gen_ai.input.messages``, ``gen_ai.output.messages`` (the
role/parts shape of gen-ai-input-messages.json) and ``gen_ai.tool.call.arguments`` /
``gen_ai.tool.call.result`` added, as JSON strings (structured attributes on spans are not yet
supported everywhere, which the conventions allow for). Fields the conventions do not name carry a
``tracekit.`` prefix; the agent span carries the trace header's (``tracekit.trace_id``, ``session``,
``source``, ``meta`` as JSON, ``case_id``, ``group``, ``repeat``), so that ``tracekit import otel`` gives
the same trace back.

The document is an OTLP ``ExportTraceServiceRequest`` in the OTLP/JSON encoding: hex trace and span
ids, lowerCamelCase keys, integers as decimal strings, enums as numbers. Ids are hashes of the trace
id, so exporting the same trace twice gives the same spans.

Timing: a model call starts at its record's ``t`` (the proxy's wall time when the request arrived) and
lasts ``latency_ms``; a tool call runs from the end of the model call that issued it to the time of the
record carrying its result (when the agent sent it back).

Numbers that are not finite (``Infinity``, ``NaN`` in a latency or a time of a damaged or hostile trace)
have no place in OTLP's integer times and make no sense as a measure: they are left out (a time then
follows the record before, a latency counts as zero) and each is named in the caller's ``notes``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracekit import __version__
from tracekit.export.otel_messages import output_message, parts, tool_response
from tracekit.trace import (
    AssistantMessage,
    ModelCall,
    SystemMessage,
    ToolCall,
    ToolResult,
    Trace,
    UserMessage,
    content_text,
)

SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

# tracekit's provider names that are an API of a provider the conventions name: the Responses API is
# OpenAI's, Converse and InvokeModel are Amazon Bedrock's, the Gemini API is gcp.gemini, OpenAI's formats on
# Azure are azure.ai.openai ("gen_ai.provider.name" well-known values, semantic conventions 1.41: openai,
# anthropic, aws.bedrock, gcp.gemini, azure.ai.openai, ...).
_SEMCONV_PROVIDER = {"openai_responses": "openai", "bedrock_converse": "aws.bedrock", "bedrock_invoke": "aws.bedrock",
                     "gemini": "gcp.gemini", "azure_openai": "azure.ai.openai",
                     "azure_openai_responses": "azure.ai.openai"}  # fmt: skip

SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_UNSET = 0
STATUS_ERROR = 2


@dataclass
class _Span:
    name: str
    kind: int
    start: int
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def _operation_span(
    operation: str, target: str | None, kind: int, start: int, end: int, attributes: dict[str, Any]
) -> _Span:
    """A GenAI span as the conventions name it: ``{gen_ai.operation.name} {target}`` (the operation alone
    when there is no target), with ``gen_ai.operation.name`` the first of its attributes."""
    return _Span(
        name=f"{operation} {target}" if target is not None else operation,
        kind=kind,
        start=start,
        end=end,
        attributes={"gen_ai.operation.name": operation, **attributes},
    )


def otlp_document(
    traces: Iterable[Trace], *, with_content: bool = False, notes: list[str] | None = None
) -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` holding the spans of every trace; non-finite numbers left
    out are named in ``notes``."""
    spans = [span for trace in traces for span in trace_spans(trace, with_content=with_content, notes=notes)]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes({"service.name": "tracekit",
                                                        "telemetry.sdk.name": "tracekit",
                                                        "telemetry.sdk.version": __version__})},
                "scopeSpans": [
                    {
                        "scope": {"name": "tracekit.export.otel", "version": __version__},
                        "spans": spans,
                        "schemaUrl": SCHEMA_URL,
                    }
                ],
                "schemaUrl": SCHEMA_URL,
            }
        ]
    }


def trace_spans(trace: Trace, *, with_content: bool = False, notes: list[str] | None = None) -> list[dict[str, Any]]:
    """The OTLP/JSON spans of one trace: the agent span first, then model calls and tool calls in order;
    non-finite numbers are left out and named in ``notes``."""
    header = trace.header
    if notes is not None:
        notes.extend(_non_finite(trace))
    times = _record_times(trace)
    trace_hex = _hex(f"trace:{header.trace_id}", 32)
    root_id = _hex(f"span:{header.trace_id}:agent", 16)
    conversation_id = header.session or header.trace_id
    provider = _provider_name(header.provider)
    agent_name = str(header.meta.get("agent") or header.source or "agent")
    model_calls = [record for record in trace.records if isinstance(record, ModelCall)]
    children: list[_Span] = []
    if model_calls:
        children += _chat_spans(trace, times, conversation_id, with_content)
    else:
        children += _imported_chat_spans(trace, times, conversation_id, provider, with_content)
    model_ends = {int(span.attributes["tracekit.model_call"]): span.end for span in children
                  if span.attributes.get("tracekit.model_call") is not None}
    children += _tool_spans(trace, times, model_ends, with_content)

    start = min([times[0], *(span.start for span in children)]) if times else 0
    end = max([times[-1], *(span.end for span in children)]) if times else 0
    stats = trace.stats()
    root = _operation_span(
        "invoke_agent",
        agent_name,
        SPAN_KIND_INTERNAL,
        start,
        end,
        {
            "gen_ai.provider.name": provider,
            "gen_ai.agent.name": agent_name,
            "gen_ai.conversation.id": conversation_id,
            "gen_ai.request.model": header.model,
            "gen_ai.usage.input_tokens": stats.input_tokens,
            "gen_ai.usage.output_tokens": stats.output_tokens,
            "tracekit.trace_id": header.trace_id,
            "tracekit.session": header.session,
            "tracekit.source": header.source,
            "tracekit.meta": _json(header.meta) if header.meta else None,
            "tracekit.case_id": header.case_id,
            "tracekit.group": header.group,
            "tracekit.repeat": header.repeat,
            "tracekit.tool_calls": stats.tool_calls,
            "tracekit.tool_errors": stats.tool_errors,
        },
    )
    spans = [_encode(root, trace_hex, root_id, None)]
    for number, span in enumerate(children):
        spans.append(_encode(span, trace_hex, _hex(f"span:{header.trace_id}:{number}", 16), root_id))
    return spans


def _finite(value: float | None) -> float | None:
    """``value`` when it is a finite number, else None."""
    return value if value is not None and math.isfinite(value) else None


def _non_finite(trace: Trace) -> list[str]:
    """``file: line N: field: inf left out`` for every non-finite number field of the trace's records."""
    notes = []
    where = str(trace.path) if trace.path else trace.header.trace_id
    for line, record in enumerate([trace.header, *trace.records], start=1):
        for name, value in record:
            if isinstance(value, float) and not math.isfinite(value):
                notes.append(f"{where}: record {line}: {record.kind}.{name}: {value} is not a finite number; "
                             "left out of the OTLP document")
    return notes


# --------------------------------------------------------------------------- spans


def _chat_spans(trace: Trace, times: list[int], conversation_id: str, with_content: bool) -> list[_Span]:
    spans = []
    conversation: list[dict[str, Any]] = []
    system: list[dict[str, Any]] = []
    pending: _Span | None = None
    for position, record in enumerate(trace.records):
        if isinstance(record, ModelCall):
            start = times[position + 1]
            end = start + int((_finite(record.latency_ms) or 0) * 1_000_000)
            model = record.model or trace.header.model
            span = _operation_span(
                "chat",
                model or None,
                SPAN_KIND_CLIENT,
                start,
                end,
                {
                    "gen_ai.provider.name": _provider_name(record.provider),
                    "gen_ai.request.model": model,
                    "gen_ai.response.model": (record.response or {}).get("model") or record.model,
                    "gen_ai.response.id": (record.response or {}).get("id"),
                    "gen_ai.response.finish_reasons": [record.stop_reason] if record.stop_reason else None,
                    "gen_ai.usage.input_tokens": record.usage.input_tokens,
                    "gen_ai.usage.output_tokens": record.usage.output_tokens,
                    "gen_ai.conversation.id": conversation_id,
                    "tracekit.model_call": record.index,
                    "tracekit.usage.cache_read_input_tokens": record.usage.cache_read_input_tokens,
                    "tracekit.usage.cache_creation_input_tokens": record.usage.cache_creation_input_tokens,
                    "tracekit.ttft_ms": record.ttft_ms,
                    "tracekit.attempts": record.attempts if record.attempts != 1 else None,
                    "tracekit.partial": record.partial or None,
                    "http.response.status_code": record.status,
                },
            )
            if record.error is not None or (record.status is not None and record.status >= 400):
                span.error = str(record.status) if record.status else "_OTHER"
            if with_content:
                if system:
                    span.attributes["gen_ai.system_instructions"] = _json(system)
                span.attributes["gen_ai.input.messages"] = _json(conversation)
            spans.append(span)
            pending = span
        elif isinstance(record, SystemMessage):
            system = parts(record.content)
        elif isinstance(record, UserMessage):
            conversation.append({"role": "user", "parts": parts(record.content)})
        elif isinstance(record, ToolResult):
            conversation.append({"role": "tool", "parts": [tool_response(record)]})
        elif isinstance(record, AssistantMessage):
            message = output_message(record)
            conversation.append({"role": "assistant", "parts": message["parts"]})
            if pending is not None and record.model_call is not None and with_content:
                pending.attributes["gen_ai.output.messages"] = _json([message])
            pending = None
    return spans


def _imported_chat_spans(
    trace: Trace, times: list[int], conversation_id: str, provider: str, with_content: bool
) -> list[_Span]:
    """Traces without model calls (imported transcripts): one chat span per assistant message."""
    spans = []
    model = trace.header.model
    for position, record in enumerate(trace.records):
        if isinstance(record, AssistantMessage):
            moment = times[position + 1]
            span = _operation_span(
                "chat",
                model or None,
                SPAN_KIND_CLIENT,
                moment,
                moment,
                {
                    "gen_ai.provider.name": provider,
                    "gen_ai.request.model": model,
                    "gen_ai.response.finish_reasons": [record.stop_reason] if record.stop_reason else None,
                    "gen_ai.conversation.id": conversation_id,
                },
            )
            if with_content:
                span.attributes["gen_ai.output.messages"] = _json([output_message(record)])
            spans.append(span)
    return spans


def _tool_spans(trace: Trace, times: list[int], model_ends: dict[int, int], with_content: bool) -> list[_Span]:
    result_position: dict[int, int] = {}
    for position, record in enumerate(trace.records):
        if isinstance(record, ToolResult) and record.call_index is not None:
            result_position.setdefault(record.call_index, position)
    spans = []
    for position, record in enumerate(trace.records):
        if not isinstance(record, ToolCall):
            continue
        start = times[position + 1]
        if record.model_call is not None and record.model_call in model_ends:
            start = max(start, model_ends[record.model_call])
        answered = result_position.get(record.index)
        result = trace.records[answered] if answered is not None else None
        end = max(start, times[answered + 1]) if answered is not None else start
        span = _operation_span(
            "execute_tool",
            record.name,
            SPAN_KIND_INTERNAL,
            start,
            end,
            {
                "gen_ai.tool.name": record.name,
                "gen_ai.tool.call.id": record.id,
                "gen_ai.tool.type": "function",
                "tracekit.tool.call.index": record.index,
                "tracekit.tool.injected": (result.injected or None) if isinstance(result, ToolResult) else None,
            },
        )
        if isinstance(result, ToolResult) and result.is_error:
            span.error = "tool_error"
        if with_content:
            span.attributes["gen_ai.tool.call.arguments"] = _json(record.input)
            if isinstance(result, ToolResult):
                span.attributes["gen_ai.tool.call.result"] = content_text(result.content)
        spans.append(span)
    return spans


# --------------------------------------------------------------------------- encoding


def _provider_name(provider: str | None) -> str:
    return _SEMCONV_PROVIDER.get(provider or "", provider or "_OTHER")


def _record_times(trace: Trace) -> list[int]:
    """Unix nanoseconds of the header and each record; records without a time follow the one before
    by a microsecond (from the header's ``created`` time, or the epoch), so spans stay ordered."""
    base = _parse_iso(trace.header.created) if trace.header.created else None
    first = next((r.t for r in trace.records if _finite(r.t) is not None), None)
    current = int((_finite(trace.header.t) or first or base or 0.0) * 1_000_000_000)
    times = [current]
    for record in trace.records:
        t = _finite(record.t)
        current = int(t * 1_000_000_000) if t is not None else current + 1_000
        times.append(current)
    return times


def _parse_iso(text: str) -> float | None:
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.timestamp()


def _encode(span: _Span, trace_hex: str, span_id: str, parent: str | None) -> dict[str, Any]:
    encoded: dict[str, Any] = {"traceId": trace_hex, "spanId": span_id}
    if parent is not None:
        encoded["parentSpanId"] = parent
    attributes = dict(span.attributes)
    if span.error is not None:
        attributes["error.type"] = span.error
    encoded.update(
        name=span.name,
        kind=span.kind,
        startTimeUnixNano=str(span.start),
        endTimeUnixNano=str(max(span.end, span.start)),
        attributes=_attributes(attributes),
        status={"code": STATUS_ERROR, "message": span.error} if span.error is not None else {"code": STATUS_UNSET},
    )
    return encoded


def _attributes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _any_value(value)} for key, value in values.items()
            if value is not None and not (isinstance(value, float) and not math.isfinite(value))]


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_any_value(item) for item in value if item is not None]}}
    return {"stringValue": value if isinstance(value, str) else _json(value)}


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def _hex(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]
