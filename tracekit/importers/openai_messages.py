"""Import a list of OpenAI chat messages as a trace.

The file holds a JSON list of chat messages or an object with ``messages``. The messages are checked
(with positions in the errors) and converted by ``tracekit.providers.openai``: leading system /
developer messages become the system prompt, ``tool_calls`` become tool_use blocks, consecutive
``tool`` messages one user turn of tool results.
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
from tracekit.providers import openai
from tracekit.trace import Content

SOURCE = "import:openai-messages"
ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def _read_conversation(path: str | Path) -> tuple[Content | None, list[dict[str, Any]]]:
    return openai.request_conversation({"messages": read_openai_messages(path)})


def read_openai_messages(path: str | Path) -> list[dict[str, Any]]:
    """The checked chat messages of one file; ``ImportFormatError`` naming the position otherwise."""
    data = read_json(path)
    where = ""
    if isinstance(data, dict):
        if "messages" not in data:
            raise fail(path, "", 'expected a list of messages or an object with "messages"')
        data, where = data["messages"], "messages"
    if not isinstance(data, list):
        raise fail(path, where, f"expected a list of messages, got {type_name(data)}")
    for index, message in enumerate(data):
        check_chat_message(path, f"messages[{index}]", message)
    return data


def check_chat_message(path: str | Path, where: str, message: Any) -> None:
    """Check one chat message: role, content, tool_calls of assistants, tool_call_id and name of tool results.

    Optional fields the conversion keeps (ids, names) must be strings when present.
    """
    if not isinstance(message, dict):
        raise fail(path, where, f"expected a message object, got {type_name(message)}")
    role = message.get("role")
    if role not in ROLES:
        raise fail(path, f"{where}.role", f"expected one of {', '.join(ROLES)}, got {role!r}")
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise fail(path, f"{where}.content", f"expected a string, a list of parts or null, got {type_name(content)}")
    if isinstance(content, list):
        for position, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise fail(path, f"{where}.content[{position}]", 'expected a content part (an object with a "type")')
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise fail(path, where, 'tool message without a string "tool_call_id"')
    if role in ("tool", "function"):  # both become tool results; the legacy one may omit id and name
        for key in ("tool_call_id", "name"):
            value = message.get(key)
            if value is not None and not isinstance(value, str):
                raise fail(path, f"{where}.{key}", f"expected a string, got {type_name(value)}")
    calls = message.get("tool_calls")
    if calls is None:
        return
    if role != "assistant" or not isinstance(calls, list):
        raise fail(path, f"{where}.tool_calls", "expected a list, in an assistant message")
    for position, call in enumerate(calls):
        at = f"{where}.tool_calls[{position}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise fail(path, at, 'expected {"id", "type": "function", "function": {"name", "arguments"}}')
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise fail(path, f"{at}.id", f"expected a string, got {type_name(call_id)}")
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, (str, dict)):
            raise fail(path, f"{at}.function.arguments", f"expected a JSON string, got {type_name(arguments)}")


import_openai_messages = conversation_importer(_read_conversation, source=SOURCE, provider="openai")
