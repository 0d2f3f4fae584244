"""Canonical content in the GenAI conventions' message shape (role and typed parts:
gen-ai-input-messages.json and gen-ai-output-messages.json, semantic conventions v1.41.0)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracekit.trace import AssistantMessage, ToolResult, content_text

# Provider finish reasons -> the conventions' FinishReason values (gen-ai-output-messages.json).
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "stop": "stop", "tool_use": "tool_call",
                  "tool_calls": "tool_call", "max_tokens": "length", "length": "length",
                  "content_filter": "content_filter", "refusal": "content_filter"}  # fmt: skip


def parts(content: Any) -> list[dict[str, Any]]:
    """A message's canonical content as typed parts (text, tool_call, reasoning, blob, uri)."""
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    found: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            found.append({"type": "text", "content": str(block.get("text", ""))})
        elif kind in ("tool_use", "server_tool_use"):
            found.append({"type": "tool_call", "id": block.get("id"), "name": block.get("name"),
                          "arguments": block.get("input")})
        elif kind == "thinking":
            found.append({"type": "reasoning", "content": str(block.get("thinking", ""))})
        elif kind == "image":
            source: Mapping[str, Any] = block["source"] if isinstance(block.get("source"), Mapping) else {}
            if source.get("type") == "base64":
                found.append({"type": "blob", "modality": "image", "mime_type": source.get("media_type"),
                              "content": source.get("data")})
            else:
                found.append({"type": "uri", "modality": "image", "uri": source.get("url")})
        elif kind:
            found.append({"type": str(kind)})
    return found


def tool_response(record: ToolResult) -> dict[str, Any]:
    """A tool result as a ``tool_call_response`` part."""
    return {"type": "tool_call_response", "id": record.tool_use_id, "response": content_text(record.content)}


def output_message(record: AssistantMessage) -> dict[str, Any]:
    """An assistant message as an output message (parts and the conventions' finish reason)."""
    message: dict[str, Any] = {"role": "assistant", "parts": parts(record.content)}
    if record.stop_reason:
        message["finish_reason"] = FINISH_REASONS.get(record.stop_reason, record.stop_reason)
    return message
