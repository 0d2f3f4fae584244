"""The OpenAI Chat Completions API (``POST /v1/chat/completions``) to and from canonical form.

Canonical content is Anthropic-shaped, so this module translates:

- request: leading ``system`` / ``developer`` messages -> system; user content parts -> text and image
  blocks (``image_url`` data URLs -> base64 sources); assistant ``tool_calls`` -> ``tool_use`` blocks
  with parsed JSON arguments (unparseable -> the raw string plus ``_input_parse_error``);
  ``reasoning_content`` (OpenAI-compatible servers) -> thinking; consecutive ``tool`` messages -> one
  user message of ``tool_result`` blocks.
- response: ``choices[0].message`` -> one assistant message; everything else (ids, usage, other choices,
  unknown fields, the exact argument strings) stays in ``meta`` so the body can be rebuilt exactly.

Stream assembly follows the official SDK (openai-python ``ChatCompletionStreamState`` and
``accumulate_delta``): deltas merge by key, strings concatenate, list entries merge by their ``index``.
The assembled body drops that ``index`` from ``tool_calls`` since JSON responses do not carry it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import orjson
from typing_extensions import Unpack

from tracekit.providers.base import (
    NOT_CONTINUED,
    Continuation,
    Overrides,
    assemble,
    overridden,
    system_content,
)
from tracekit.providers.base import STREAM_CONTENT_TYPE as STREAM_CONTENT_TYPE
from tracekit.providers.base import for_route as for_route
from tracekit.providers.base import request_items as request_items
from tracekit.providers.base import request_model as request_model
from tracekit.providers.base import request_stream as request_stream
from tracekit.providers.base import response_id as response_id
from tracekit.providers.base import response_model as response_model
from tracekit.providers.base import stream_parser as stream_parser
from tracekit.providers.base import stream_splitter as stream_splitter
from tracekit.providers.base import with_request_items as with_request_items
from tracekit.providers.openai_items import SYSTEM_ROLES, ResultItems, part_block, tool_use_block
from tracekit.providers.openai_items import assistant_blocks as assistant_blocks
from tracekit.providers.openai_items import convert_messages as convert_messages
from tracekit.providers.openai_items import tool_result_block as tool_result_block
from tracekit.providers.openai_items import user_content as user_content
from tracekit.providers.openai_stream import OpenAIStreamAssembler, render_chunks
from tracekit.providers.sse import ServerSentEvent, encode_event, encode_json_event
from tracekit.trace.canonical import content_hash
from tracekit.trace.models import Content, Usage

NAME = "openai"
ROUTE = "/v1/chat/completions"
#: Paths only the OpenAI API has (``/v1/complete`` is Anthropic's legacy route, not one of these).
API_PATHS = ("/v1/chat/", "/v1/chat", "/v1/completions", "/v1/embeddings", "/v1/responses", "/v1/moderations",
             "/v1/images/", "/v1/audio/", "/v1/fine_tuning/", "/v1/assistants", "/v1/threads",
             "/v1/vector_stores")  # fmt: skip
#: OpenAI-compatible clients authenticate with a bearer token (asked after the anthropic SDK's headers).
CLIENT_HEADERS = ("authorization",)

#: Assistant message fields that the canonical content holds; the rest of the message stays in meta.
_DERIVED = ("content", "refusal", "reasoning_content", "tool_calls")
_HINTS = "_openai"
_ERROR_TYPES = {401: "invalid_request_error", 403: "permission_error", 404: "invalid_request_error",
                429: "rate_limit_exceeded"}


def request_conversation(body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
    """The request's messages as a canonical conversation ``(system, messages)``."""
    raw = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    leading = 0
    while leading < len(raw) and raw[leading].get("role") in SYSTEM_ROLES:
        leading += 1
    system = system_content([m.get("content") for m in raw[:leading]], part_block)
    return system, convert_messages(raw[leading:])


def request_continuation(body: dict[str, Any]) -> Continuation:
    """Chat completions keep no conversation on the server: every request carries the whole of it."""
    return NOT_CONTINUED


def item_tool_calls(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_calls`` of an assistant message, as canonical ``tool_use`` blocks."""
    if item.get("role") != "assistant":
        return []
    return [tool_use_block(call) for call in item.get("tool_calls") or [] if isinstance(call, dict)]


#: ``role: tool`` messages: their result is the ``content``, answering the call ``tool_call_id``.
_TOOL_MESSAGES = ResultItems("role", "tool", "tool_call_id", "content")
item_tool_results = _TOOL_MESSAGES.item_tool_results
with_tool_result = _TOOL_MESSAGES.with_tool_result


def response_to_canonical(body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Split a chat completion into the canonical assistant message (of ``choices[0]``) and ``meta``.

    An error body gives ``(None, body)``. ``meta`` is the body with the derived message fields
    (content, refusal, reasoning_content, tool_calls) taken out, plus hints under ``_openai`` (their
    key order and exact original values) so that ``canonical_to_response`` rebuilds the body exactly.
    """
    if response_error(body) is not None:
        return None, copy.deepcopy(body)
    meta = copy.deepcopy(body)
    choices = meta.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        meta[_HINTS] = {"no_choice": True}
        return {"role": "assistant", "content": []}, meta
    original = choices[0].get("message") or {}
    message = {"role": "assistant", "content": assistant_blocks(original)}
    choices[0]["message"] = {k: v for k, v in original.items() if k not in _DERIVED}
    meta[_HINTS] = {"keys": list(original), "original": {k: original[k] for k in _DERIVED if k in original}}
    return message, meta


def canonical_to_response(
    message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
) -> dict[str, Any]:
    """The chat completion body for a canonical assistant message (inverse of ``response_to_canonical``).

    Without ``meta`` a complete body is made up (deterministic id, ``finish_reason`` from the content).
    Keyword arguments override ``meta``; ``message=None`` returns the error body held in ``meta``.
    """
    model, usage, stop_reason = overridden(overrides)
    meta = copy.deepcopy(meta or {})
    hints = meta.pop(_HINTS, {})
    if message is None:
        if response_error(meta) is None:
            raise ValueError("canonical_to_response: no message and no error body in meta")
        return meta
    blocks = _canonical_blocks(message.get("content"))
    has_tools = any(b.get("type") == "tool_use" for b in blocks)
    body = meta
    if not hints:  # not the rest of a real body: fill in what a completion must have
        body = {"id": "chatcmpl-" + content_hash(blocks, 24), "object": "chat.completion", "created": 0,
                "model": model or "unknown", **meta}
        if not body.get("choices"):
            body["choices"] = [{"index": 0, "message": {"role": "assistant"}, "logprobs": None,
                                "finish_reason": "tool_calls" if has_tools else "stop"}]
    if not hints.get("no_choice"):
        choice = body["choices"][0]
        choice["message"] = _render_message(blocks, choice.get("message") or {"role": "assistant"}, hints)
        if stop_reason is not None:
            choice["finish_reason"] = stop_reason
    if model is not None:
        body["model"] = model
    if usage is not None:
        body["usage"] = _render_usage(usage)
    return body


def _render_message(blocks: list[dict[str, Any]], residue: dict[str, Any], hints: dict[str, Any]) -> dict[str, Any]:
    original = hints.get("original", {})
    texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    refusals = [b.get("text", "") for b in blocks if b.get("type") == "refusal"]
    thinking = [b.get("thinking", "") for b in blocks if b.get("type") == "thinking"]
    tool_blocks = [b for b in blocks if b.get("type") == "tool_use"]
    derived: dict[str, Any] = {
        "content": "".join(texts) if texts else None,
        "refusal": "".join(refusals) if refusals else None,
        "reasoning_content": "".join(thinking) if thinking else None,
        "tool_calls": _render_tool_calls(tool_blocks, original.get("tool_calls")) if tool_blocks else None,
    }
    for key, value in original.items():
        if derived[key] is None and not value:
            derived[key] = value  # an empty original ("", [], None) that no canonical block records
    keys = hints.get("keys") or ["role", "content", "refusal"]
    rendered = {}
    for key in keys:
        rendered[key] = derived[key] if key in _DERIVED else residue.get(key)
    for key, value in residue.items():
        rendered.setdefault(key, value)
    for key in _DERIVED:
        if key not in rendered and derived[key] is not None:
            rendered[key] = derived[key]
    return rendered


def _render_tool_calls(blocks: list[dict[str, Any]], original: Any) -> list[dict[str, Any]]:
    """``tool_calls`` for tool_use blocks, reusing an original entry verbatim when it means the same."""
    calls = []
    originals = original if isinstance(original, list) else []
    for position, block in enumerate(blocks):
        if position < len(originals) and tool_use_block(originals[position]) == _strip(block):
            calls.append(originals[position])
            continue
        value = block.get("input", {})
        arguments = value if block.get("_input_parse_error") else orjson.dumps(value).decode()
        calls.append({"id": block.get("id"), "type": "function",
                      "function": {"name": block.get("name", ""), "arguments": arguments}})
    return calls


def _strip(block: dict[str, Any]) -> dict[str, Any]:
    keep = ("type", "id", "name", "input", "_input_parse_error")
    return {key: block[key] for key in keep if key in block}


def _render_usage(usage: Usage) -> dict[str, Any]:
    cached = usage.cache_read_input_tokens
    prompt = (usage.input_tokens or 0) + (cached or 0)
    completion = usage.output_tokens or 0
    rendered: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                "total_tokens": prompt + completion}
    if cached is not None:
        rendered["prompt_tokens_details"] = {"cached_tokens": cached}
    return rendered


def response_message(body: dict[str, Any]) -> dict[str, Any] | None:
    """The canonical assistant message of ``choices[0]`` (None for an error body)."""
    return response_to_canonical(body)[0]


def reply_items(body: dict[str, Any]) -> list[Any]:
    """The assistant message of ``choices[0]``, as a later request repeats it."""
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return [message]
    return []


def response_usage(body: dict[str, Any]) -> Usage:
    """Usage with cached prompt tokens split out: ``input_tokens`` = prompt - cached, as Anthropic counts."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    prompt = usage.get("prompt_tokens")
    extra = {k: v for k, v in usage.items() if k not in ("prompt_tokens", "completion_tokens")}
    return Usage(
        input_tokens=prompt - (cached or 0) if isinstance(prompt, int) else None,
        output_tokens=usage.get("completion_tokens") if isinstance(usage.get("completion_tokens"), int) else None,
        cache_read_input_tokens=cached if isinstance(cached, int) else None,
        **extra,
    )


#: Chat Completions ``finish_reason`` values (OpenAI API reference, "The chat completion object") in the
#: Messages API's stop-reason terms.
_STOP_REASONS = {"tool_calls": "tool_use", "function_call": "tool_use", "stop": "end_turn", "length": "max_tokens",
                 "content_filter": "refusal"}


def with_note(body: dict[str, Any], note: str) -> dict[str, Any] | None:
    """The note as a user message after the ``tool`` messages."""
    messages = request_items(body)
    return None if messages is None else with_request_items(body, [*messages, {"role": "user", "content": note}])


def canonical_stop_reason(body: dict[str, Any]) -> str | None:
    """The first choice's ``finish_reason`` in canonical terms (``tool_calls`` -> ``tool_use``, ``stop`` ->
    ``end_turn``, ``length`` -> ``max_tokens``, ``content_filter`` -> ``refusal``; others as they are)."""
    reason = response_stop_reason(body)
    return _STOP_REASONS.get(reason, reason) if reason is not None else None


def response_stop_reason(body: dict[str, Any]) -> str | None:
    """``finish_reason`` of the first choice (``stop``, ``tool_calls``, ``length``, ``content_filter``)."""
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        reason = choices[0].get("finish_reason")
        return reason if isinstance(reason, str) else None
    return None


def response_error(body: dict[str, Any]) -> dict[str, Any] | None:
    """The ``error`` object of an error body (``{"error": {...}}``), else None."""
    error = body.get("error")
    if error and "choices" not in body:
        return error if isinstance(error, dict) else {"message": str(error), "type": "server_error"}
    return None


def error_body(status: int, message: str, type: str | None = None, code: str | None = None) -> dict[str, Any]:
    """An OpenAI error body for HTTP ``status``."""
    kind = type or _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def stream_assembler() -> OpenAIStreamAssembler:
    """A new incremental assembler for one chat completion stream."""
    return OpenAIStreamAssembler()


def assemble_stream(events: Iterable[ServerSentEvent]) -> dict[str, Any]:
    """The chat completion a whole stream adds up to (the error body if a chunk carried an error)."""
    return assemble(OpenAIStreamAssembler(), events)


def render_stream(body: dict[str, Any]) -> bytes:
    """A chat completion (or error body) as the SSE bytes the API would have streamed, ``[DONE]`` last."""
    if response_error(body) is not None:
        return encode_json_event(body) + encode_event("[DONE]")
    return b"".join(encode_json_event(chunk) for chunk in render_chunks(body)) + encode_event("[DONE]")


def stream_may_end(chunk: bytes) -> bool:
    """Whether the chunk may hold ``data: [DONE]``."""
    return b"[DONE]" in chunk


def error_event(error_type: str, message: str) -> bytes:
    """An error chunk followed by ``[DONE]``, as OpenAI-compatible servers end a stream that failed."""
    body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
    return encode_json_event(body) + encode_event("[DONE]")


def _canonical_blocks(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)]
