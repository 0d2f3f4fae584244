"""The OpenAI Responses API (``POST /v1/responses``) to and from canonical form: the provider functions.

- request: ``instructions`` and leading ``system`` / ``developer`` messages -> system; ``input`` (a string:
  one user message; or a list of items) -> messages, as ``openai_responses_items`` converts items;
  ``previous_response_id`` names the stored response a request continues (it sends only new items).
- response: ``output`` -> one assistant message; everything else (id, status, usage, incomplete_details,
  unknown fields) and the exact output items stay in ``meta``, so the body can be rebuilt exactly. A
  ``failed`` response is an error body, as an HTTP error is.

Stream assembly and rendering live in ``openai_responses_stream`` (as the SDK's ``ResponseStreamState``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from typing_extensions import Unpack

from tracekit.providers.base import STREAM_CONTENT_TYPE as STREAM_CONTENT_TYPE
from tracekit.providers.base import Continuation, Overrides, assemble, overridden
from tracekit.providers.base import for_route as for_route
from tracekit.providers.base import request_model as request_model
from tracekit.providers.base import request_stream as request_stream
from tracekit.providers.base import response_id as response_id
from tracekit.providers.base import response_model as response_model
from tracekit.providers.base import stream_parser as stream_parser
from tracekit.providers.base import stream_splitter as stream_splitter
from tracekit.providers.openai import error_body as error_body
from tracekit.providers.openai_items import ResultItems
from tracekit.providers.openai_responses_items import (
    convert_items,
    is_system,
    listed_items,
    output_blocks,
    render_output,
    same_blocks,
    system_content,
    tool_use_block,
)
from tracekit.providers.openai_responses_stream import ResponsesStreamAssembler, render_error_event, render_events
from tracekit.providers.sse import ServerSentEvent
from tracekit.trace.canonical import content_hash
from tracekit.trace.models import Content, Usage

NAME = "openai_responses"
ROUTE = "/v1/responses"
#: The Responses API's own paths (the rest of the OpenAI API is the ``openai`` provider's).
API_PATHS: tuple[str, ...] = ("/v1/responses",)
#: None of its own: the openai SDK's headers are the ``openai`` provider's, whose error shape is the same.
CLIENT_HEADERS: tuple[str, ...] = ()

_HINTS = "_openai_responses"
#: Incomplete reasons (``incomplete_details.reason``) a ``stop_reason`` override may name.
_INCOMPLETE_REASONS = ("max_output_tokens", "content_filter")


# -- requests ---------------------------------------------------------------------------------------------


def request_conversation(body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
    """The request's ``instructions`` and ``input`` as a canonical conversation ``(system, messages)``."""
    items = listed_items(request_items(body))
    leading = 0
    while leading < len(items) and is_system(items[leading]):
        leading += 1
    contents = [body["instructions"]] if isinstance(body.get("instructions"), (str, list)) else []
    contents += [item.get("content") for item in items[:leading]]
    return system_content(contents), convert_items(items[leading:])


def request_items(body: dict[str, Any]) -> list[Any] | None:
    """The request's ``input`` as a list of items (a string is one user message; None without an input)."""
    value = body.get("input")
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return value if isinstance(value, list) else None


def with_request_items(body: dict[str, Any], items: list[Any]) -> dict[str, Any]:
    """A copy of ``body`` whose ``input`` is ``items``."""
    return {**body, "input": items}


def request_continuation(body: dict[str, Any]) -> Continuation:
    """The server keeps every response unless the request says ``store: false``; ``previous_response_id``
    names the response a request continues, ``conversation`` the kept conversation it adds to (either way it
    sends only the new items)."""
    previous = body.get("previous_response_id")
    conversation = body.get("conversation")
    if isinstance(conversation, dict):  # {"id": "conv_..."} or the id itself
        conversation = conversation.get("id")
    return Continuation(
        body.get("store") is not False or isinstance(conversation, str),
        previous if isinstance(previous, str) and previous else None,
        conversation if isinstance(conversation, str) and conversation else None,
    )


# -- responses --------------------------------------------------------------------------------------------


def item_tool_calls(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``function_call`` item as a canonical ``tool_use`` block."""
    return [tool_use_block(item)] if item.get("type") == "function_call" else []


#: ``function_call_output`` items: their result is the ``output``, answering the call ``call_id``.
_CALL_OUTPUTS = ResultItems("type", "function_call_output", "call_id", "output")
item_tool_results = _CALL_OUTPUTS.item_tool_results
with_tool_result = _CALL_OUTPUTS.with_tool_result


def response_to_canonical(body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Split a response into the canonical assistant message (of its ``output``) and ``meta``.

    An error body (HTTP error, or a response whose ``status`` is ``failed``) gives ``(None, body)``.
    ``meta`` is the body without ``output``, plus the output items as sent under ``_openai_responses``
    so that ``canonical_to_response`` rebuilds the body exactly.
    """
    if response_error(body) is not None:
        return None, copy.deepcopy(body)
    meta = {key: copy.deepcopy(value) for key, value in body.items() if key != "output"}
    meta[_HINTS] = {"output": copy.deepcopy(body.get("output")), "keys": list(body)}
    return _assistant_message(body), meta


def _assistant_message(body: dict[str, Any]) -> dict[str, Any]:
    """The canonical assistant message of a body that is no error (of its ``output``)."""
    return {"role": "assistant", "content": output_blocks(listed_items(body.get("output")))}


def canonical_to_response(
    message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
) -> dict[str, Any]:
    """The Responses API body for a canonical assistant message (inverse of ``response_to_canonical``).

    Without ``meta`` a complete body is made up (deterministic ids, status ``completed``, zero usage).
    Keyword arguments override ``meta``: ``stop_reason`` is a status (``completed``, ``failed``) or an
    incomplete reason (``max_output_tokens``, ``content_filter``). ``message=None`` returns the error body
    held in ``meta``.
    """
    model, usage, stop_reason = overridden(overrides)
    meta = copy.deepcopy(meta or {})
    hints = meta.pop(_HINTS, None)
    if message is None:
        if response_error(meta) is None:
            raise ValueError("canonical_to_response: no message and no error body in meta")
        return meta
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else listed_items(content)
    if hints is None:  # not the rest of a real body: fill in what a response must have
        meta = {"id": "resp_" + content_hash(blocks, 24), "object": "response", "created_at": 0,
                "status": "completed", "error": None, "incomplete_details": None, "model": model or "unknown",
                "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "usage": _render_usage(Usage(input_tokens=0, output_tokens=0)), **meta}
        hints = {"keys": list(meta)}
    original = hints.get("output")
    if isinstance(original, list) and same_blocks(output_blocks(listed_items(original)), blocks):
        output: Any = original
    elif original is None and not blocks:
        output = original
    else:
        output = render_output(blocks)
    keys = hints.get("keys") or list(meta)
    body = {key: output if key == "output" else meta.get(key) for key in keys if key == "output" or key in meta}
    body.update({key: value for key, value in meta.items() if key not in body})
    if "output" not in body and output is not None:
        body["output"] = output
    if model is not None:
        body["model"] = model
    if stop_reason is not None:
        _set_status(body, stop_reason)
    if usage is not None:
        body["usage"] = _render_usage(usage)
    return body


def _set_status(body: dict[str, Any], stop_reason: str) -> None:
    if stop_reason in _INCOMPLETE_REASONS:
        body["status"] = "incomplete"
        body["incomplete_details"] = {"reason": stop_reason}
    else:
        body["status"] = stop_reason
        if "incomplete_details" in body:
            body["incomplete_details"] = None


def _render_usage(usage: Usage) -> dict[str, Any]:
    extra = usage.model_extra or {}
    cached = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    total_input = (usage.input_tokens or 0) + cached + written
    output = usage.output_tokens or 0
    reasoning = (extra.get("output_tokens_details") or {}).get("reasoning_tokens", 0)
    details = {"cache_write_tokens": written, "cached_tokens": cached}
    return {"input_tokens": total_input, "input_tokens_details": details, "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": reasoning}, "total_tokens": total_input + output}


def response_message(body: dict[str, Any]) -> dict[str, Any] | None:
    """The canonical assistant message of a response's output (None for an error body; the proxy asks this of
    every answer, so the rest of the body is not copied into a ``meta`` as ``response_to_canonical`` does)."""
    return None if response_error(body) is not None else _assistant_message(body)


def reply_items(body: dict[str, Any]) -> list[Any]:
    """The ``output`` items of a successful response: what the server adds to the conversation it keeps."""
    if response_error(body) is not None:
        return []
    output = body.get("output")
    return list(output) if isinstance(output, list) else []


def response_usage(body: dict[str, Any]) -> Usage:
    """Usage counted as Anthropic counts it: ``input_tokens`` = input - cached - cache written,
    ``cache_read_input_tokens`` = ``input_tokens_details.cached_tokens``, ``cache_creation_input_tokens`` =
    ``input_tokens_details.cache_write_tokens``; the details (``reasoning_tokens``) and ``total_tokens`` kept."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached, written = details.get("cached_tokens"), details.get("cache_write_tokens")
    cached = cached if isinstance(cached, int) else None
    written = written if isinstance(written, int) else None
    total_input = usage.get("input_tokens")
    output = usage.get("output_tokens")
    extra = {k: v for k, v in usage.items() if k not in ("input_tokens", "output_tokens")}
    return Usage(
        input_tokens=total_input - (cached or 0) - (written or 0) if isinstance(total_input, int) else None,
        output_tokens=output if isinstance(output, int) else None,
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=written,
        **extra,
    )


def response_stop_reason(body: dict[str, Any]) -> str | None:
    """Why the response ended: the incomplete reason (``max_output_tokens``, ``content_filter``) of an
    incomplete response, else its ``status`` (``completed``, ``failed``, ...)."""
    details = body.get("incomplete_details")
    if body.get("status") == "incomplete" and isinstance(details, dict) and isinstance(details.get("reason"), str):
        reason: str = details["reason"]
        return reason
    status = body.get("status")
    return status if isinstance(status, str) else None


def with_note(body: dict[str, Any], note: str) -> dict[str, Any] | None:
    """The note as a user message item after the ``function_call_output`` items (a string ``input`` becomes
    a list of the two messages)."""
    items = request_items(body)
    note_item = {"role": "user", "content": [{"type": "input_text", "text": note}]}
    return None if items is None else with_request_items(body, [*items, note_item])


def canonical_stop_reason(body: dict[str, Any]) -> str | None:
    """Why the response ended in canonical terms: ``max_tokens`` or ``refusal`` for an incomplete response
    (``max_output_tokens``, ``content_filter``), ``tool_use`` for a completed one that calls a function,
    ``end_turn`` for any other completed one; another status as it is (``failed``, ...)."""
    reason = response_stop_reason(body)
    if reason == "completed":
        calls = any(item.get("type") == "function_call" for item in listed_items(body.get("output")))
        return "tool_use" if calls else "end_turn"
    return {"max_output_tokens": "max_tokens", "content_filter": "refusal"}.get(reason or "", reason)


def response_error(body: dict[str, Any]) -> dict[str, Any] | None:
    """The error object of an error body (``{"error": {...}}``) or of a failed response, else None."""
    error = body.get("error")
    if not error:
        return None
    if body.get("object") == "response" and body.get("status") != "failed":
        return None
    return error if isinstance(error, dict) else {"message": str(error), "type": "server_error"}


def stream_assembler() -> ResponsesStreamAssembler:
    """A new incremental assembler for one Responses API stream."""
    return ResponsesStreamAssembler()


def assemble_stream(events: Iterable[ServerSentEvent]) -> dict[str, Any]:
    """The response a whole stream adds up to (the error body if it carried an ``error`` event)."""
    return assemble(ResponsesStreamAssembler(), events)


def render_stream(body: dict[str, Any]) -> bytes:
    """A response (or error body) as the SSE bytes the API would have streamed."""
    if response_error(body) is not None and body.get("object") != "response":
        return render_error_event(body)
    return render_events(body)


def stream_may_end(chunk: bytes) -> bool:
    """Whether the chunk may hold the final event (``response.completed`` / ``failed`` / ``incomplete``) or an
    ``error`` event."""
    return b"response.completed" in chunk or b"response.incomplete" in chunk or b"response.failed" in chunk or (
        b"event: error" in chunk)


def error_event(error_type: str, message: str) -> bytes:
    """The in-stream ``error`` event the live API sends (the error object nested under ``error``)."""
    return render_error_event(error_body(500, message, error_type))
