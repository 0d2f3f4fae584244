"""Reading spans from the files OpenTelemetry tools write: OTLP JSON and flat span exports.

Shapes read (one file may hold any of them, whole or one per line):

- an OTLP ``ExportTraceServiceRequest`` in the OTLP/JSON encoding (``resourceSpans`` → ``scopeSpans`` →
  ``spans``; the collector's ``file`` exporter writes one per line, the OTLP/HTTP JSON body is one),
  including what ``google.protobuf.json_format`` makes of the protobuf (base64 ids, enum names,
  ``preserving_proto_field_name`` snake_case keys) and the older ``instrumentationLibrarySpans``;
- an OTLP ``ExportLogsServiceRequest`` (``resourceLogs``): log records that carry a span id are that span's
  events (the GenAI conventions up to 1.36 sent message events as logs);
- flat spans as Arize Phoenix exports them (``{"name", "context": {"trace_id", "span_id"}, "parent_id",
  "span_kind", "start_time", "attributes": {...}}``, alone, in a list, or under ``data``), with nested
  attributes flattened to dotted keys.

Facts from the OTLP specification (opentelemetry-proto ``docs/specification.md``, "JSON Protobuf
Encoding"): trace and span ids are hex strings, 64-bit integers may be strings, enums are integers, keys
are lowerCamelCase; receivers should also accept the proto field names.

Anything unreadable is reported as ``file:position: what`` in the caller's ``problems`` list and
skipped; the rest of the file is still read.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracekit.importers.common import DATA_ERRORS, describe, json_values

_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


@dataclass(slots=True)
class SpanEvent:
    """An event of a span (or a log record tied to it): name, time and attributes; ``body`` for logs."""

    name: str
    time_ns: int
    attributes: dict[str, Any]
    body: Any = None


@dataclass(slots=True)
class Span:
    """One span, decoded: hex ids, nanosecond times, attributes as plain Python values."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[SpanEvent] = field(default_factory=list)
    error: bool = False
    status_message: str | None = None
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None
    where: str = ""
    """Where the span was read, ``file:line`` or ``file: resourceSpans[0].scopeSpans[0].spans[3]``."""


#: A log record tied to a span: ``((trace_id, span_id), event)``; the caller attaches it to the last span read
#: with those ids (``otel.index_spans``).
LogEvent = tuple[tuple[str, str], SpanEvent]


def iter_spans(paths: list[Path], problems: list[str], logs: list[LogEvent]) -> Iterator[Span]:
    """The spans of ``paths`` in the order read, one JSON document at a time (a JSONL file is never held
    whole); the log records that carry a span id are appended to ``logs`` as they are read, for the caller
    to attach to their spans; unreadable parts go to ``problems``."""
    for path in paths:
        for where, value in json_values(path, problems):
            found: list[Span] = []
            try:
                _read_value(value, where, found, logs, problems)
            except DATA_ERRORS as exc:  # a field of a type no check expected: that document is skipped
                problems.append(f"{where}: {describe(exc)}; skipped")
                continue
            yield from found


def _read_value(value: Any, where: str, spans: list[Span], logs: list[Any], problems: list[str]) -> None:
    if isinstance(value, list):
        for number, item in enumerate(value):
            _read_value(item, f"{where}: [{number}]" if ": " not in where else f"{where}[{number}]", spans, logs,
                        problems)
        return
    if not isinstance(value, dict):
        problems.append(f"{where}: expected an OTLP JSON object or a span, got {type(value).__name__}")
        return
    resource_spans = _get(value, "resourceSpans")
    resource_logs = _get(value, "resourceLogs")
    if resource_spans is not None or resource_logs is not None:
        _read_otlp_spans(resource_spans or [], where, spans, problems)
        _read_otlp_logs(resource_logs or [], where, logs, problems)
    elif isinstance(value.get("data"), list):
        _read_value(value["data"], f"{where}: data", spans, logs, problems)
    elif "context" in value or "context.span_id" in value:
        span = _flat_span(value, where, problems)
        if span is not None:
            spans.append(span)
    else:
        problems.append(f"{where}: neither OTLP JSON (resourceSpans) nor a span (context.span_id); skipped")


# --------------------------------------------------------------------------- OTLP JSON


def _read_otlp_spans(resource_spans: Any, where: str, spans: list[Span], problems: list[str]) -> None:
    for r, resource_span in enumerate(_list(resource_spans)):
        if not isinstance(resource_span, dict):
            problems.append(f"{where}: resourceSpans[{r}]: expected an object, got {_json_type(resource_span)}; "
                            "skipped")
            continue
        resource = _attributes(_get(_dict(resource_span.get("resource")), "attributes"))
        scopes = _get(resource_span, "scopeSpans") or _get(resource_span, "instrumentationLibrarySpans") or []
        for s, scope_span in enumerate(_list(scopes)):
            if not isinstance(scope_span, dict):
                problems.append(f"{where}: resourceSpans[{r}].scopeSpans[{s}]: expected an object, got "
                                f"{_json_type(scope_span)}; skipped")
                continue
            scope = _dict(_get(scope_span, "scope") or _get(scope_span, "instrumentationLibrary"))
            for n, raw in enumerate(_list(scope_span.get("spans"))):
                position = f"{where}: resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                try:
                    span = _otlp_span(raw, position)
                except DATA_ERRORS as exc:
                    problems.append(f"{position}: {describe(exc)}; span skipped")
                    continue
                span.resource = resource
                span.scope = scope.get("name")
                spans.append(span)


def _otlp_span(raw: Any, where: str) -> Span:
    if not isinstance(raw, dict):
        raise TypeError(f"expected a span object, got {type(raw).__name__}")
    status = _dict(raw.get("status"))
    code = status.get("code")
    events = [
        SpanEvent(str(event.get("name") or ""), _int(_get(event, "timeUnixNano") or 0),
                  _attributes(event.get("attributes")))
        for event in _list(raw.get("events"))
    ]
    return Span(
        trace_id=_id(_get(raw, "traceId"), 32, "traceId"),
        span_id=_id(_get(raw, "spanId"), 16, "spanId"),
        parent_id=_id(_get(raw, "parentSpanId"), 16, "parentSpanId") if _get(raw, "parentSpanId") else None,
        name=str(raw.get("name") or ""),
        kind=_kind(raw.get("kind")),
        start_ns=_int(_get(raw, "startTimeUnixNano") or 0),
        end_ns=_int(_get(raw, "endTimeUnixNano") or 0),
        attributes=_attributes(raw.get("attributes")),
        events=events,
        error=code in (2, "STATUS_CODE_ERROR", "ERROR"),
        status_message=status.get("message") or None,
        where=where,
    )


def _read_otlp_logs(resource_logs: Any, where: str, logs: list[Any], problems: list[str]) -> None:
    for r, resource_log in enumerate(_list(resource_logs)):
        for s, scope_log in enumerate(_list(_get(resource_log, "scopeLogs"))):
            for n, record in enumerate(_list(_get(scope_log, "logRecords"))):
                if not isinstance(record, dict) or not _get(record, "spanId"):
                    continue  # a log record outside any span is not part of a trace
                try:
                    key = (_id(_get(record, "traceId"), 32, "traceId"), _id(_get(record, "spanId"), 16, "spanId"))
                    attributes = _attributes(record.get("attributes"))
                    name = _get(record, "eventName") or attributes.get("event.name") or ""
                    time_ns = _int(_get(record, "timeUnixNano") or _get(record, "observedTimeUnixNano") or 0)
                    body = _any_value(record["body"]) if isinstance(record.get("body"), dict) else None
                except DATA_ERRORS as exc:
                    problems.append(f"{where}: resourceLogs[{r}].scopeLogs[{s}].logRecords[{n}]: {describe(exc)}; "
                                    "skipped")
                    continue
                logs.append((key, SpanEvent(str(name), time_ns, attributes, body)))


def _attributes(values: Any) -> dict[str, Any]:
    """OTLP ``KeyValue`` list as a dict (a dict of plain values is taken as it is)."""
    if isinstance(values, dict):
        return values
    result: dict[str, Any] = {}
    for item in _list(values):
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            result[item["key"]] = _any_value(item.get("value"))
    return result


def _any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (kvlists as dicts, arrays as lists, bytes as base64 text)."""
    if not isinstance(value, dict) or not value:
        return value if not isinstance(value, dict) else None
    key, inner = next(iter(value.items()))
    key = _camel(key)
    if key == "stringValue":
        return inner
    if key == "intValue":
        return _int(inner)
    if key == "doubleValue":
        return _float(inner)
    if key == "boolValue":
        return bool(inner)
    if key == "arrayValue":
        return [_any_value(item) for item in _list(_dict(inner).get("values"))]
    if key == "kvlistValue":
        return _attributes(_dict(inner).get("values"))
    return inner  # bytesValue stays base64 text


def indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items of a flattened list attribute, each a dict of its own dotted keys.

    ``{"p.0.role": "user", "p.0.content": "hi", "p.1.role": ...}`` with prefix ``p`` gives
    ``[{"role": "user", "content": "hi"}, {"role": ...}]``; a list stored whole under ``p`` (as Phoenix
    exports nest it) gives its items flattened the same way.
    """
    whole = attributes.get(prefix)
    if isinstance(whole, list):
        return [_flatten(item) if isinstance(item, dict) else {"": item} for item in whole]
    items: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        number, _, rest = key[len(start):].partition(".")
        if number.isdigit():
            items.setdefault(int(number), {})[rest] = value
    return [items[number] for number in sorted(items)]


# --------------------------------------------------------------------------- flat spans (Phoenix)


def _flat_span(raw: dict[str, Any], where: str, problems: list[str]) -> Span | None:
    flat = _flatten(raw)
    try:
        attributes = {key[len("attributes."):]: value for key, value in flat.items() if key.startswith("attributes.")}
        if isinstance(raw.get("attributes"), dict) and not attributes:
            attributes = _flatten(raw["attributes"])
        events = []
        for event in _list(raw.get("events")):
            if isinstance(event, dict):
                events.append(SpanEvent(str(event.get("name") or ""), _time(event.get("timestamp")),
                                        _flatten(_dict(event.get("attributes")))))
        status = str(flat.get("status_code") or "")
        return Span(
            trace_id=_id(flat.get("context.trace_id"), 32, "context.trace_id"),
            span_id=_id(flat.get("context.span_id"), 16, "context.span_id"),
            parent_id=_id(flat["parent_id"], 16, "parent_id") if flat.get("parent_id") else None,
            name=str(flat.get("name") or ""),
            kind=str(flat.get("span_kind") or "unspecified").lower(),
            start_ns=_time(flat.get("start_time")),
            end_ns=_time(flat.get("end_time")),
            attributes=attributes,
            events=events,
            error=status.upper() in ("ERROR", "STATUS_CODE_ERROR", "2"),
            status_message=flat.get("status_message") or None,
            where=where,
        )
    except DATA_ERRORS as exc:
        problems.append(f"{where}: {describe(exc)}; span skipped")
        return None


def _flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects as dotted keys (``{"llm": {"model_name": m}}`` → ``{"llm.model_name": m}``); lists stay."""
    result: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and item:
            result.update(_flatten(item, f"{name}."))
        else:
            result[name] = item
    return result


def _time(value: Any) -> int:
    """A time as Unix nanoseconds: ISO 8601 text, or a number of nanoseconds."""
    if value is None or value == "":
        return 0
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp() * 1_000_000) * 1_000


# --------------------------------------------------------------------------- small decoders


def _id(value: Any, digits: int, name: str) -> str:
    """A trace or span id as lowercase hex: hex as the OTLP/JSON encoding has it, base64 as protobuf's
    generic JSON printer writes bytes, ``0x``-prefixed hex as Phoenix shows it."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name}: expected an id string, got {value!r}")
    text = value.removeprefix("0x").lower()
    if len(text) == digits and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == digits // 2:
        return raw.hex()
    if all(c in "0123456789abcdef" for c in text):
        return text.rjust(digits, "0")
    return value  # an id in a shape of its own (e.g. a UUID): kept, it still groups spans


def _kind(value: Any) -> str:
    if isinstance(value, int):
        return _KINDS.get(value, "unspecified")
    if isinstance(value, str):
        if value.isdigit():
            return _KINDS.get(int(value), "unspecified")
        return value.lower().removeprefix("span_kind_")
    return "unspecified"


def _int(value: Any) -> int:
    """A 64-bit integer (OTLP's ``int64`` / ``fixed64``), from a number or its decimal text."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"expected an integer, got {_json_type(value)}")
    number = int(value)  # ValueError for text that is no integer, OverflowError for an infinite float
    if not -(2**63) <= number < 2**64:
        raise ValueError(f"integer {str(value)[:30]} out of the 64-bit range")
    return number


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number"}  # fmt: skip
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _float(value: Any) -> float:
    """A double: a number, or the text the OTLP/JSON encoding uses (``"NaN"``, ``"Infinity"``, decimals)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"expected a number, got {_json_type(value)}")
    return float(value)


def _camel(key: str) -> str:
    if "_" not in key:
        return key
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def _get(value: Any, key: str) -> Any:
    """``value[key]`` under its lowerCamelCase or its proto (snake_case) name."""
    if not isinstance(value, dict):
        return None
    found = value.get(key)
    return found if found is not None else value.get(_snake(key))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
