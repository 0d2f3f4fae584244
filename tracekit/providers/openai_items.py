"""OpenAI chat messages as canonical messages and blocks: the request side of the Chat Completions wire
format (``tracekit.providers.openai`` re-exports these; the importers of OpenAI transcripts use them too)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from tracekit.providers.base import ToolResultRef, image_source, result_text, system_content, tool_use
from tracekit.trace.models import Content

#: Message roles that give the system prompt.
SYSTEM_ROLES = ("system", "developer")


@dataclass(frozen=True)
class ResultItems:
    """Wire items that carry one tool result each, as text with no error flag (chat ``role: tool`` messages,
    Responses ``function_call_output`` items): ``kind`` under ``kind_key`` says which items they are, the call
    id is under ``id_key`` and the result under ``result_key``."""

    kind_key: str
    kind: str
    id_key: str
    result_key: str

    def item_tool_results(self, item: dict[str, Any]) -> list[ToolResultRef]:
        """The item's result, if it is one of these items (the wire has no error flag)."""
        if item.get(self.kind_key) != self.kind:
            return []
        return [ToolResultRef(0, item.get(self.id_key), item.get(self.result_key))]

    def with_tool_result(self, item: dict[str, Any], position: int, content: Content, is_error: bool) -> dict[str, Any]:
        """The item saying ``content`` as text (the wire has no ``is_error``: the trace keeps it)."""
        return {**item, self.result_key: result_text(content)}


def convert_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages as canonical messages (tool messages grouped into user tool_result turns)."""
    result: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("tool", "function"):
            block = tool_result_block(message)
            previous = result[-1] if result else None
            if previous is not None and previous.get("_tool_results"):
                previous["content"].append(block)
            else:
                result.append({"role": "user", "content": [block], "_tool_results": True})
        elif role == "assistant":
            result.append({"role": "assistant", "content": assistant_blocks(message)})
        elif role in SYSTEM_ROLES:
            result.append({"role": "system", "content": system_content([message.get("content")], part_block) or ""})
        else:
            result.append({"role": "user", "content": user_content(message.get("content"))})
    for message in result:
        message.pop("_tool_results", None)
    return result


def tool_result_block(message: dict[str, Any]) -> dict[str, Any]:
    """A ``tool`` (or legacy ``function``) message as a canonical ``tool_result`` block."""
    content = message.get("content")
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.get("tool_call_id"),
        "content": [part_block(p) for p in content if isinstance(p, dict)] if isinstance(content, list)
        else ("" if content is None else str(content)),
    }
    if message.get("name") is not None:
        block["name"] = message["name"]
    return block


def user_content(content: Any) -> Content:
    """User message content: a string stays a string, parts become canonical blocks."""
    if isinstance(content, list):
        return [part_block(part) for part in content if isinstance(part, dict)]
    return "" if content is None else str(content)


def assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """An OpenAI assistant message as canonical blocks: thinking, text, refusal, tool_use, in that order."""
    blocks: list[dict[str, Any]] = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        blocks.append({"type": "thinking", "thinking": reasoning})
    # Empty text and refusal make no block: agents echo a tool-calling reply with content "" or null
    # alike, and both must read as the same message (or the history would look rewritten).
    content = message.get("content")
    if isinstance(content, str) and content:
        blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        blocks.extend(part_block(part) for part in content if isinstance(part, dict))
    if isinstance(message.get("refusal"), str) and message["refusal"]:
        blocks.append({"type": "refusal", "text": message["refusal"]})
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            blocks.append(tool_use_block(call))
    return blocks


def tool_use_block(call: dict[str, Any]) -> dict[str, Any]:
    """One ``tool_calls`` entry as a canonical ``tool_use`` block (arguments parsed from JSON)."""
    function = call.get("function")
    if not isinstance(function, dict):
        function = {}
    return tool_use(call.get("id"), function.get("name", ""), function.get("arguments"))


def part_block(part: dict[str, Any]) -> dict[str, Any]:
    """One content part as a canonical block (text, image; refusal; others kept as they are)."""
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part.get("text", "")}
    if kind == "refusal":
        return {"type": "refusal", "text": part.get("refusal", "")}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url", "") if isinstance(image, dict) else str(image or "")
        block: dict[str, Any] = {"type": "image", "source": image_source(url)}
        if isinstance(image, dict) and image.get("detail") is not None:
            block["detail"] = image["detail"]
        return block
    return copy.deepcopy(part)
