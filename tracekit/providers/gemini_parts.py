"""Gemini ``Content`` parts as canonical blocks and back: the part-level half of ``tracekit.providers.gemini``.

A ``Content`` is ``{"role": "user" | "model", "parts": [...]}``; a part holds one of (Gemini API reference,
"Caching" / ``Content`` and ``Part``; google-genai ``types.Part``):

- ``text`` -> a text block, or with ``"thought": true`` a thinking block (``thoughtSignature`` kept as its
  ``signature``); consecutive texts of one kind are one block (a stream's pieces, which google-genai's chat
  sends back as they came), and an empty text part makes no block (clients echo it or not alike);
- ``functionCall {name, args, id?}`` -> ``tool_use``;
- ``functionResponse {name, response, id?}`` -> ``tool_result``: the response's ``output`` (or ``result``,
  what google-genai's automatic function calling sends) when it is the only key, else the whole response
  as JSON text; a response with only an ``error`` key is an error result ("Use "output" key to specify
  function output and "error" key to specify error details", ``types.FunctionResponse.response``);
- ``inlineData {mimeType, data}`` -> an image block with a base64 source (other types: a document block);
- anything else (``executableCode``, ``fileData``, ...) -> ``{"type": <its key>, "data": <its value>}``.

Ids: the Gemini API may leave ``functionCall.id`` out (and google-adk strips the ids it makes up before it
sends a request). A call without one gets ``gemini:{name}:{k}``, k counting the calls of that name in its
turn (one response, or the consecutive ``model`` Contents a request repeats it as); a response without one
gets the same from the responses of that name in its turn, so the k-th response of a tool answers its k-th
call, the order google-genai and google-adk send them in. (An intercept sees one Content at a time: when a
client splits one turn's calls of the same tool over several Contents, their results are told apart by order
only.)
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import orjson

from tracekit.providers.base import result_text, tool_use
from tracekit.trace.models import Content

#: Keys of a function response whose one value is the tool's output (``output`` is the API's, ``result``
#: what google-genai's automatic function calling wraps a Python return value in).
OUTPUT_KEYS = ("output", "result")


def synthetic_id(name: Any, occurrence: int) -> str:
    """The id of the ``occurrence``-th call (or response) of tool ``name`` in a Content that carries none."""
    return f"gemini:{name}:{occurrence}"


def content_blocks(parts: Any) -> list[dict[str, Any]]:
    """The parts of one ``Content`` as canonical blocks."""
    blocks: list[dict[str, Any]] = []
    calls: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        if "functionCall" in part:
            blocks.append(call_block(part["functionCall"], calls))
        elif "functionResponse" in part:
            blocks.append(response_block(part["functionResponse"], answers))
        elif "text" in part:
            text = part.get("text")
            if not isinstance(text, str) or not text:
                continue
            kind, field = ("thinking", "thinking") if part.get("thought") else ("text", "text")
            last = blocks[-1] if blocks else None
            if last is not None and last["type"] == kind:  # a stream's pieces, kept as separate parts
                last[field] += text
            else:
                blocks.append({"type": kind, field: text})
            if kind == "thinking" and part.get("thoughtSignature") is not None:
                blocks[-1]["signature"] = part["thoughtSignature"]
        elif isinstance(part.get("inlineData"), dict):
            data = part["inlineData"]
            media_type = str(data.get("mimeType") or "application/octet-stream")
            source = {"type": "base64", "media_type": media_type, "data": data.get("data", "")}
            blocks.append({"type": "image" if media_type.startswith("image/") else "document", "source": source})
        else:
            key = next((k for k in part if k not in ("thought", "thoughtSignature")), None)
            if key is not None:
                blocks.append({"type": key, "data": copy.deepcopy(part[key])})
    return blocks


def call_block(call: Any, seen: Counter[str]) -> dict[str, Any]:
    """A ``functionCall`` as a ``tool_use`` block (``seen`` counts the calls of each name so far)."""
    call = call if isinstance(call, dict) else {}
    name = call.get("name", "")
    call_id = call.get("id") or synthetic_id(name, seen[str(name)])
    seen[str(name)] += 1
    return tool_use(call_id, name, call.get("args"))


def response_block(answer: Any, seen: Counter[str]) -> dict[str, Any]:
    """A ``functionResponse`` as a ``tool_result`` block (``seen`` counts the responses of each name)."""
    answer = answer if isinstance(answer, dict) else {}
    name = answer.get("name", "")
    answer_id = answer.get("id") or synthetic_id(name, seen[str(name)])
    seen[str(name)] += 1
    content, is_error = response_content(answer.get("response"))
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": answer_id, "content": content, "name": name}
    if is_error:
        block["is_error"] = True
    return block


def response_content(response: Any) -> tuple[str, bool]:
    """A function response's ``response`` object as result text, and whether it reports an error."""
    if isinstance(response, dict) and len(response) == 1:
        key, value = next(iter(response.items()))
        if key in (*OUTPUT_KEYS, "error"):
            text = value if isinstance(value, str) else orjson.dumps(value).decode()
            return text, key == "error"
    if response is None:
        return "", False
    return orjson.dumps(response).decode(), False


def answered_response(original: Any, content: Content, is_error: bool) -> dict[str, Any]:
    """The ``response`` object saying ``content`` instead: under ``error`` for an error, else under the key
    the original used for its output (``output`` when it used none)."""
    text = result_text(content)
    if is_error:
        return {"error": text}
    key = "output"
    if isinstance(original, dict) and len(original) == 1 and next(iter(original)) in OUTPUT_KEYS:
        key = next(iter(original))
    return {key: text}


def block_parts(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Canonical blocks as parts (the inverse of ``content_blocks``; a made-up call id is left out)."""
    parts: list[dict[str, Any]] = []
    calls: Counter[str] = Counter()
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append({"text": block.get("text", "")})
        elif kind == "thinking":
            part: dict[str, Any] = {"text": block.get("thinking", ""), "thought": True}
            if block.get("signature") is not None:
                part["thoughtSignature"] = block["signature"]
            parts.append(part)
        elif kind == "tool_use":
            name = block.get("name", "")
            call: dict[str, Any] = {"name": name, "args": block.get("input", {})}
            if block.get("id") != synthetic_id(name, calls[str(name)]):
                call["id"] = block.get("id")
            calls[str(name)] += 1
            parts.append({"functionCall": call})
        elif kind in ("image", "document") and isinstance(block.get("source"), dict):
            source = block["source"]
            parts.append({"inlineData": {"mimeType": source.get("media_type"), "data": source.get("data")}})
        elif isinstance(kind, str) and "data" in block:
            parts.append({kind: copy.deepcopy(block["data"])})
    return parts
