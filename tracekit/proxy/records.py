"""The trace records of one finished exchange: its model call, the error record of a failure, the
intercept records of its injections and faults. Pure functions of the exchange and its outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracekit.intercepts import Injection
from tracekit.proxy.exchange import Exchange, Outcome
from tracekit.proxy.raw_text import text_of
from tracekit.trace import ErrorRecord, Intercept, ModelCall, ToolResult


def model_call(exchange: Exchange, outcome: Outcome) -> ModelCall:
    """The model call of an exchange (its ``index`` is given by the trace builder)."""
    provider = exchange.provider
    received = exchange.received
    sent = exchange.turn.sent
    body = sent.body if isinstance(sent.body, dict) else None
    response = outcome.response or {}
    ended = received.t_end or exchange.t0
    escaped = list(outcome.escaped)
    request_raw = None
    if body is None:
        request_raw, was_escaped = text_of(sent.raw)
        if was_escaped:
            escaped.append("request_raw")
    sse = None
    if received.tee is not None:
        sse, was_escaped = received.tee.text()
        if was_escaped:
            escaped.append("sse")
    source = received.source
    return ModelCall(
        index=0,
        provider=provider.NAME,
        model=(provider.request_model(body) if body else None) or provider.response_model(response),
        stream=exchange.request.stream,
        status=received.status,
        request=body,
        request_raw=request_raw,
        request_key=sent.key,
        response=outcome.response,
        sse=sse,
        event_offsets_ms=received.tee.offsets_ms if received.tee is not None else None,
        usage=provider.response_usage(response),
        stop_reason=provider.response_stop_reason(response),
        latency_ms=round((ended - exchange.t0) * 1000, 3),
        ttft_ms=round((received.t_first - exchange.t0) * 1000, 3) if received.t_first else None,
        attempts=exchange.turn.attempt,
        partial=outcome.partial,
        error=outcome.error,
        t=exchange.t_wall,
        response_headers=received.headers or None,
        stitched=exchange.turn.how,
        fault=True if source == "fault" else None,
        replay_miss=True if source == "miss" else None,
        replayed=True if source == "recording" else None,
        websocket=True if exchange.websocket else None,
        transport=received.failure,
        request_parse_error=exchange.request.parse_error,
        response_raw=outcome.response_raw,
        response_parse_error=outcome.response_parse_error if outcome.response_raw is not None else None,
        escaped=escaped or None,
        **({"truncated": True} if received.tee is not None and received.tee.truncated else {}),
    )


def attempt_error(exchange: Exchange, outcome: Outcome, model_call: int, *, replayable: bool) -> ErrorRecord:
    """The error record of a failed exchange; a ``replayable`` one (an attempt the SDK retried) carries what
    replay needs to fail the same way again."""
    received = exchange.received
    source = "transport" if received.failure else ("client" if received.client_gone else "upstream")
    made_here = received.source in ("fault", "miss", "guard")
    if made_here:
        source = "proxy"
    error = outcome.error or {}
    message = str(error.get("message") or error.get("type") or "the exchange failed")
    if received.client_gone:
        message = "the client disconnected before the response ended"
    fields: dict[str, Any] = {}
    if replayable and not made_here:
        sse = escaped = None
        if received.tee is not None:
            sse, was_escaped = received.tee.text()
            escaped = ["sse"] if was_escaped else None
        fields = {
            "request_key": exchange.turn.sent.key,
            "stream": exchange.request.stream,
            "partial": outcome.partial,
            "response_headers": received.headers or None,
            "transport": received.failure,
            "sse": sse,
            "event_offsets_ms": received.tee.offsets_ms if received.tee is not None else None,
            "latency_ms": round(((received.t_end or exchange.t0) - exchange.t0) * 1000, 3),
            "escaped": escaped,
        }
    return ErrorRecord(
        source=source,
        message=message,
        status=received.status,
        body=outcome.response if outcome.response is not None else outcome.error,
        model_call=model_call,
        t=exchange.t_wall,
        attempt=exchange.turn.attempt,
        provider=exchange.provider.NAME,
        **fields,
    )


def underived(what: str, reason: str, model_call: int, t: float) -> ErrorRecord:
    """The error record of a request or reply whose conversation messages could not be derived."""
    return ErrorRecord(
        source="proxy",
        message=f"could not derive the conversation from the {what} ({reason}); the model call is recorded as sent",
        model_call=model_call,
        t=t,
    )


def injection_records(
    injections: Sequence[Injection], new_records: list[Any], model_call: int, seen: set[str], t: float
) -> list[Intercept]:
    """The intercept records of injections not recorded before (``seen`` holds the tool_use ids already done)."""
    calls = {r.tool_use_id: r.call_index for r in new_records if isinstance(r, ToolResult)}
    records = []
    for injection in injections:
        if injection.tool_use_id in seen:
            continue
        if injection.tool_use_id:
            seen.add(injection.tool_use_id)
        records.append(
            Intercept(
                mode=injection.mode,
                tool=injection.tool,
                tool_use_id=injection.tool_use_id,
                call_index=calls.get(injection.tool_use_id),
                original=injection.original,
                injected=injection.injected,
                is_error=injection.is_error,
                model_call=model_call,
                original_is_error=injection.original_is_error,
                t=t,
            )
        )
    return records
