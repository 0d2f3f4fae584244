"""The OpenAI Responses API (``POST /v1/responses``) to and from canonical form.

Canonical content is Anthropic-shaped, so this module translates:

- request: ``instructions`` and leading ``system`` / ``developer`` messages -> system; ``input`` (a string:
  one user message; or a list of items) -> messages. Consecutive assistant-side items (``message`` of
  role assistant, ``function_call``, ``reasoning``, built-in tool calls such as ``web_search_call``) make
  one assistant message, as one response's ``output`` does; consecutive ``function_call_output`` items
  make one user message of ``tool_result`` blocks. ``input_text`` / ``output_text`` -> text,
  ``input_image`` -> image, ``refusal`` -> refusal, ``function_call`` -> ``tool_use`` whose id is the
  ``call_id`` (its arguments parsed; unparseable -> the raw string plus ``_input_parse_error``),
  ``reasoning`` -> thinking (its summary text; the whole item, encrypted content included, kept under
  ``reasoning_item``). Any other item or part is kept as it is.
- response: ``output`` -> one assistant message; everything else (id, status, usage, incomplete_details,
  unknown fields) and the exact output items stay in ``meta``, so the body can be rebuilt exactly.

Stream assembly and rendering live in ``openai_responses_stream`` (as the SDK's ``ResponseStreamState``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import orjson

from tracekit.providers.base import assemble
from tracekit.providers.base import request_model as request_model
from tracekit.providers.base import request_stream as request_stream
from tracekit.providers.base import response_model as response_model
from tracekit.providers.openai import _image_source
from tracekit.providers.openai import error_body as error_body
from tracekit.providers.openai_responses_stream import ResponsesStreamAssembler, render_error_event, render_events
from tracekit.providers.sse import ServerSentEvent
from tracekit.trace.canonical import content_hash, parse_json_arguments
from tracekit.trace.models import Content, Usage

NAME = "openai_responses"
ROUTE = "/v1/responses"

_HINTS = "_openai_responses"
_SYSTEM_ROLES = ("system", "developer")
#: Item types an assistant turn is made of (besides role-assistant messages and built-in ``*_call`` items).
_ASSISTANT_ITEMS = ("function_call", "reasoning", "custom_tool_call")
#: Canonical blocks the ``output_text`` / ``refusal`` parts of one message item become.
_MESSAGE_BLOCKS = ("text", "refusal")
#: Incomplete reasons (``incomplete_details.reason``) a ``stop_reason`` override may name.
_INCOMPLETE_REASONS = ("max_output_tokens", "content_filter")


# -- requests ---------------------------------------------------------------------------------------------


def request_conversation(body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
    """The request's ``instructions`` and ``input`` as a canonical conversation ``(system, messages)``."""
    items = request_items(body)
    leading = 0
    while leading < len(items) and _is_system(items[leading]):
        leading += 1
    contents = [body["instructions"]] if isinstance(body.get("instructions"), (str, list)) else []
    contents += [item.get("content") for item in items[:leading]]
    return _system_content(contents), convert_items(items[leading:])


def request_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's ``input`` as a list of items (a string is one user message)."""
    value = body.get("input")
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)]
    return []


def convert_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses input (or output) items as canonical messages (see the module docstring for grouping)."""
    result: list[dict[str, Any]] = []

    def group(role: str, marker: str) -> list[dict[str, Any]]:
        previous = result[-1] if result else None
        if previous is None or not previous.get(marker):
            previous = {"role": role, "content": [], marker: True}
            result.append(previous)
        content: list[dict[str, Any]] = previous["content"]
        return content

    for item in items:
        kind = _item_type(item)
        role = item.get("role")
        if kind == "message" and role == "assistant":
            group("assistant", "_turn").extend(message_blocks(item.get("content")))
        elif kind == "message" and role in _SYSTEM_ROLES:
            result.append({"role": "system", "content": _system_content([item.get("content")]) or ""})
        elif kind == "message":
            result.append({"role": "user", "content": user_content(item.get("content"))})
        elif kind == "function_call":
            group("assistant", "_turn").append(tool_use_block(item))
        elif kind == "reasoning":
            group("assistant", "_turn").append(thinking_block(item))
        elif kind == "function_call_output":
            group("user", "_results").append(tool_result_block(item))
        elif kind in _ASSISTANT_ITEMS or kind.endswith("_call"):
            group("assistant", "_turn").append(copy.deepcopy(item))
        elif kind.endswith("_output"):
            group("user", "_results").append(copy.deepcopy(item))
        else:
            result.append({"role": "user", "content": [copy.deepcopy(item)]})
    for message in result:
        message.pop("_turn", None)
        message.pop("_results", None)
    return result


def message_blocks(content: Any) -> list[dict[str, Any]]:
    """An assistant message item's content as canonical blocks (empty text makes no block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks = [_part_block(part) for part in content if isinstance(part, dict)] if isinstance(content, list) else []
    return [b for b in blocks if not (b.get("type") in _MESSAGE_BLOCKS and b.get("text") == "")]


def user_content(content: Any) -> Content:
    """User message content: a string stays a string, parts become canonical blocks."""
    if isinstance(content, list):
        return [_part_block(part) for part in content if isinstance(part, dict)]
    return "" if content is None else str(content)


def tool_use_block(item: dict[str, Any]) -> dict[str, Any]:
    """A ``function_call`` item as a canonical ``tool_use`` block (id = ``call_id``, arguments parsed)."""
    arguments = item.get("arguments")
    block: dict[str, Any] = {"type": "tool_use", "id": item.get("call_id"), "name": item.get("name", "")}
    if isinstance(arguments, str):
        value, ok = parse_json_arguments(arguments)
        block["input"] = value
        if not ok:
            block["_input_parse_error"] = True
    else:
        block["input"] = arguments if arguments is not None else {}
    return block


def tool_result_block(item: dict[str, Any]) -> dict[str, Any]:
    """A ``function_call_output`` item as a canonical ``tool_result`` block (the wire has no is_error)."""
    output = item.get("output")
    content: Content
    if isinstance(output, list):
        content = [_part_block(part) for part in output if isinstance(part, dict)]
    else:
        content = "" if output is None else output if isinstance(output, str) else orjson.dumps(output).decode()
    return {"type": "tool_result", "tool_use_id": item.get("call_id"), "content": content}


def thinking_block(item: dict[str, Any]) -> dict[str, Any]:
    """A ``reasoning`` item as a canonical thinking block: its summary texts (or, without a summary, its
    ``reasoning_text`` content) joined by blank lines; the item itself kept whole under ``reasoning_item``."""
    return {"type": "thinking", "thinking": reasoning_text(item), "reasoning_item": copy.deepcopy(item)}


def reasoning_text(item: dict[str, Any]) -> str:
    """The readable text of a reasoning item."""
    for key in ("summary", "content"):
        parts = item.get(key)
        texts = [str(p.get("text") or "") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        if texts:
            return "\n\n".join(texts)
    return ""


# -- responses --------------------------------------------------------------------------------------------


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
    return {"role": "assistant", "content": output_blocks(_listed_items(body.get("output")))}, meta


def output_blocks(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A response's output items as the blocks of one canonical assistant message."""
    blocks: list[dict[str, Any]] = []
    for message in convert_items([{**item, "role": "assistant"} if _item_type(item) == "message" else item
                                  for item in items]):
        content = message.get("content")
        blocks.extend(content if isinstance(content, list) else [{"type": "text", "text": str(content)}])
    return blocks


def canonical_to_response(
    message: dict[str, Any] | None,
    meta: dict[str, Any] | None = None,
    *,
    model: str | None = None,
    usage: Usage | None = None,
    stop_reason: str | None = None,
) -> dict[str, Any]:
    """The Responses API body for a canonical assistant message (inverse of ``response_to_canonical``).

    Without ``meta`` a complete body is made up (deterministic ids, status ``completed``, zero usage).
    Keyword arguments override ``meta``: ``stop_reason`` is a status (``completed``, ``failed``) or an
    incomplete reason (``max_output_tokens``, ``content_filter``). ``message=None`` returns the error body
    held in ``meta``.
    """
    meta = copy.deepcopy(meta or {})
    hints = meta.pop(_HINTS, None)
    if message is None:
        if response_error(meta) is None:
            raise ValueError("canonical_to_response: no message and no error body in meta")
        return meta
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else _listed_items(content)
    if hints is None:  # not the rest of a real body: fill in what a response must have
        meta = {"id": "resp_" + content_hash(blocks, 24), "object": "response", "created_at": 0,
                "status": "completed", "error": None, "incomplete_details": None, "model": model or "unknown",
                "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "usage": _render_usage(Usage(input_tokens=0, output_tokens=0)), **meta}
        hints = {"keys": list(meta)}
    original = hints.get("output")
    if isinstance(original, list) and _same_blocks(output_blocks(_listed_items(original)), blocks):
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


def _same_blocks(left: list[dict[str, Any]], right: list[dict[str, Any]]) -> bool:
    return [_strip(b) for b in left] == [_strip(b) for b in right]


def _strip(block: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if not key.startswith("_") or key == "_input_parse_error"}


def render_output(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Canonical assistant blocks as output items: consecutive text and refusal blocks make one message."""
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []

    def flush() -> None:
        if parts:
            items.append({"id": "msg_" + content_hash(parts, 24), "type": "message", "status": "completed",
                          "role": "assistant", "content": list(parts)})
            parts.clear()

    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "output_text", "text": block.get("text", ""), "annotations": []})
            continue
        if kind == "refusal":
            parts.append({"type": "refusal", "refusal": block.get("text", "")})
            continue
        flush()
        if kind == "tool_use":
            value = block.get("input", {})
            arguments = value if block.get("_input_parse_error") else orjson.dumps(value).decode()
            items.append({"id": "fc_" + content_hash(_strip(block), 24), "type": "function_call",
                          "status": "completed", "call_id": block.get("id"), "name": block.get("name", ""),
                          "arguments": arguments})
        elif kind == "thinking":
            item = block.get("reasoning_item")
            if not isinstance(item, dict) or reasoning_text(item) != block.get("thinking", ""):
                text = block.get("thinking", "")
                item = {"id": "rs_" + content_hash(text, 24), "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": text}] if text else []}
            items.append(copy.deepcopy(item))
        else:
            items.append({key: copy.deepcopy(value) for key, value in block.items() if not key.startswith("_")})
    flush()
    return items


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
    """The canonical assistant message of a response's output (None for an error body)."""
    return response_to_canonical(body)[0]


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


# -- helpers ----------------------------------------------------------------------------------------------


def _listed_items(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _is_system(item: dict[str, Any]) -> bool:
    return _item_type(item) == "message" and item.get("role") in _SYSTEM_ROLES


def _item_type(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return "message" if "role" in item else ""


def _system_content(contents: list[Any]) -> Content | None:
    contents = [c for c in contents if c not in (None, "", [])]
    if not contents:
        return None
    if len(contents) == 1 and isinstance(contents[0], str):
        return contents[0]
    blocks: list[dict[str, Any]] = []
    for content in contents:
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            blocks.extend(_part_block(part) for part in content if isinstance(part, dict))
    return blocks


def _part_block(part: dict[str, Any]) -> dict[str, Any]:
    """One content part as a canonical block (text, image, refusal; others kept as they are)."""
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text"):
        return {"type": "text", "text": part.get("text", "")}
    if kind == "refusal":
        return {"type": "refusal", "text": part.get("refusal", "")}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        block: dict[str, Any] = {"type": "image", "source": _image_source(part["image_url"])}
        if part.get("detail") is not None:
            block["detail"] = part["detail"]
        return block
    return copy.deepcopy(part)
