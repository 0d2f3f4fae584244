"""Import a list of Anthropic messages as a trace.

The file holds a JSON list of messages — the seeds' "messages 注入" format, possibly followed by the
agent's own turns — or an object ``{"messages": [...], "system": ...}``. Content blocks are kept as
they are (they are the canonical shape); the file is checked first so that a mistake is reported with
its position, e.g. ``t.json: messages[3].content[0]: tool_use without "name"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracekit.importers.common import (
    conversation_importer,
    fail,
    read_json,
    type_name,
)
from tracekit.trace import Content

SOURCE = "import:anthropic-messages"


def read_anthropic_messages(path: str | Path) -> tuple[Content | None, list[dict[str, Any]]]:
    """The ``(system, messages)`` of one file, checked; ``ImportFormatError`` naming the position otherwise."""
    data = read_json(path)
    system: Any = None
    where = ""
    if isinstance(data, dict):
        if "messages" not in data:
            raise fail(path, "", 'expected a list of messages or an object with "messages"')
        system, data, where = data.get("system"), data["messages"], "messages"
        if system is not None and not isinstance(system, (str, list)):
            raise fail(path, "system", f"expected a string or a list of text blocks, got {type_name(system)}")
        for position, block in enumerate(system if isinstance(system, list) else []):
            _check_system_block(path, f"system[{position}]", block)
    if not isinstance(data, list):
        raise fail(path, where, f"expected a list of messages, got {type_name(data)}")
    messages = []
    for index, message in enumerate(data):
        check_message(path, f"messages[{index}]", message)
        messages.append({"role": message["role"], "content": message["content"]})
    return system or None, messages


def check_message(path: str | Path, where: str, message: Any) -> None:
    """Check one Anthropic message: role, content, and the blocks tool use relies on."""
    if not isinstance(message, dict):
        raise fail(path, where, f"expected a message object, got {type_name(message)}")
    role = message.get("role")
    if role not in ("user", "assistant"):
        hint = ' (a system prompt goes in the top-level "system")' if role == "system" else ""
        raise fail(path, f"{where}.role", f"expected 'user' or 'assistant', got {role!r}{hint}")
    if "content" not in message:
        raise fail(path, where, 'missing "content"')
    content = message["content"]
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise fail(path, f"{where}.content", f"expected a string or a list of content blocks, got {type_name(content)}")
    for position, block in enumerate(content):
        _check_block(path, f"{where}.content[{position}]", role, block)


def _check_system_block(path: str | Path, where: str, block: Any) -> None:
    if not isinstance(block, dict) or block.get("type") != "text":
        raise fail(path, where, f'expected a text block ({{"type": "text", "text": ...}}), got {type_name(block)}')
    if not isinstance(block.get("text"), str):
        raise fail(path, f"{where}.text", f"expected a string, got {type_name(block.get('text'))}")


def _check_block(path: str | Path, where: str, role: str, block: Any) -> None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise fail(path, where, 'expected a content block (an object with a string "type")')
    kind = block["type"]
    if kind == "text" and not isinstance(block.get("text"), str):
        raise fail(path, f"{where}.text", f"expected a string, got {type_name(block.get('text'))}")
    if kind == "tool_use":
        if role != "assistant":
            raise fail(path, where, "tool_use blocks belong in assistant messages")
        for key in ("id", "name"):
            if not isinstance(block.get(key), str):
                raise fail(path, where, f'tool_use without a string "{key}"')
        if not isinstance(block.get("input", {}), dict):
            raise fail(path, f"{where}.input", f"expected an object, got {type_name(block.get('input'))}")
    if kind == "tool_result":
        if role != "user":
            raise fail(path, where, "tool_result blocks belong in user messages")
        if not isinstance(block.get("tool_use_id"), str):
            raise fail(path, where, 'tool_result without a string "tool_use_id"')
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise fail(path, f"{where}.is_error", f"expected true or false, got {type_name(block['is_error'])}")
        inner = block.get("content", "")
        if not isinstance(inner, (str, list)):
            raise fail(path, f"{where}.content", f"expected a string or a list of blocks, got {type_name(inner)}")


import_anthropic_messages = conversation_importer(read_anthropic_messages, source=SOURCE, provider="anthropic")
