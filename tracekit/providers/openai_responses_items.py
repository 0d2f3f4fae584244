"""OpenAI Responses API items to and from canonical messages and blocks.

Canonical content is Anthropic-shaped, so:

- consecutive assistant-side items (``message`` of role assistant, ``function_call``, ``reasoning``,
  built-in tool calls such as ``web_search_call``) make one assistant message, as one response's
  ``output`` does; consecutive ``function_call_output`` items make one user message of ``tool_result``
  blocks; other messages map one to one (system / developer ones to system messages);
- ``input_text`` / ``output_text`` -> text, ``input_image`` -> image (a data URL -> a base64 source),
  ``refusal`` -> refusal, ``function_call`` -> ``tool_use`` whose id is the ``call_id`` (arguments parsed;
  unparseable -> the raw string plus ``_input_parse_error``), ``function_call_output`` -> ``tool_result``,
  ``reasoning`` -> thinking (its summary text; the whole item, encrypted content included, kept under
  ``reasoning_item``). Any other item or part is kept as it is.

``render_output`` goes the other way for the blocks of one assistant message.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from tracekit.providers.base import image_source, tool_use
from tracekit.providers.base import system_content as base_system_content
from tracekit.trace.canonical import content_hash
from tracekit.trace.models import Content

SYSTEM_ROLES = ("system", "developer")
#: Item types an assistant turn is made of (besides role-assistant messages and built-in ``*_call`` items).
_ASSISTANT_ITEMS = ("function_call", "reasoning", "custom_tool_call")
#: Canonical blocks the ``output_text`` / ``refusal`` parts of one message item become.
_MESSAGE_BLOCKS = ("text", "refusal")


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
        elif kind == "message" and role in SYSTEM_ROLES:
            result.append({"role": "system", "content": system_content([item.get("content")]) or ""})
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
    return tool_use(item.get("call_id"), item.get("name", ""), item.get("arguments"))


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


def output_blocks(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A response's output items as the blocks of one canonical assistant message."""
    blocks: list[dict[str, Any]] = []
    for message in convert_items([{**item, "role": "assistant"} if _item_type(item) == "message" else item
                                  for item in items]):
        content = message.get("content")
        blocks.extend(content if isinstance(content, list) else [{"type": "text", "text": str(content)}])
    return blocks


def same_blocks(left: list[dict[str, Any]], right: list[dict[str, Any]]) -> bool:
    """Whether two block lists mean the same (keys starting with ``_`` ignored, the parse flag kept)."""
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


def listed_items(value: Any) -> list[dict[str, Any]]:
    """The objects of a list (anything else: none)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def is_system(item: dict[str, Any]) -> bool:
    """Whether an item is a system or developer message."""
    return _item_type(item) == "message" and item.get("role") in SYSTEM_ROLES


def _item_type(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return "message" if "role" in item else ""


def system_content(contents: list[Any]) -> Content | None:
    """System prompt parts (instructions, system message contents) as one canonical system content."""
    return base_system_content([c for c in contents if c not in (None, "", [])], _part_block)


def _part_block(part: dict[str, Any]) -> dict[str, Any]:
    """One content part as a canonical block (text, image, refusal; others kept as they are)."""
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text"):
        return {"type": "text", "text": part.get("text", "")}
    if kind == "refusal":
        return {"type": "refusal", "text": part.get("refusal", "")}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        block: dict[str, Any] = {"type": "image", "source": image_source(part["image_url"])}
        if part.get("detail") is not None:
            block["detail"] = part["detail"]
        return block
    return copy.deepcopy(part)
