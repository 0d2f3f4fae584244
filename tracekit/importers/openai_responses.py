"""Import a list of OpenAI Responses API items as a trace.

The file holds a JSON list of Responses input/output items — what ``result.to_input_list()`` of the OpenAI
Agents SDK gives, or a request's ``input`` followed by the ``output`` of its responses — or an object
``{"instructions": ..., "input": str | [items], "output": [items]}`` (``output`` appended after ``input``).
The items are checked (with positions in the errors) and converted by
``tracekit.providers.openai_responses``: ``instructions`` and leading system / developer messages become
the system prompt, each run of assistant-side items (messages, ``function_call``, ``reasoning``) one
assistant turn, each run of ``function_call_output`` items one user turn of tool results.
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
from tracekit.providers import openai_responses
from tracekit.trace import Content

SOURCE = "import:openai-responses"
ROLES = ("user", "assistant", "system", "developer")


def read_openai_responses(path: str | Path) -> tuple[Content | None, list[dict[str, Any]]]:
    """The canonical ``(system, messages)`` of one file, checked; ``ImportFormatError`` naming the position."""
    data = read_json(path)
    body: dict[str, Any] = {}
    where = "items"
    if isinstance(data, dict):
        if "input" not in data:
            raise fail(path, "", 'expected a list of items or an object with "input"')
        instructions = data.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise fail(path, "instructions", f"expected a string, got {type_name(instructions)}")
        body["instructions"] = instructions
        output = data.get("output", [])
        if not isinstance(output, list):
            raise fail(path, "output", f"expected a list of items, got {type_name(output)}")
        for index, item in enumerate(output):
            check_item(path, f"output[{index}]", item)
        data, where = data["input"], "input"
        if isinstance(data, str):
            data = [{"role": "user", "content": data}]
        data = [*data, *output] if isinstance(data, list) else data
    if not isinstance(data, list):
        raise fail(path, where, f"expected a list of items, got {type_name(data)}")
    for index, item in enumerate(data):
        check_item(path, f"{where}[{index}]", item)
    return openai_responses.request_conversation({**body, "input": data})


def check_item(path: str | Path, where: str, item: Any) -> None:
    """Check one item: a message (role, content), ``function_call`` (name, call_id, arguments) or
    ``function_call_output`` (call_id, output); other typed items are kept as they are."""
    if not isinstance(item, dict):
        raise fail(path, where, f"expected an item object, got {type_name(item)}")
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        raise fail(path, f"{where}.type", f"expected a string, got {type_name(kind)}")
    if kind is None and "role" not in item:
        raise fail(path, where, 'expected an item with "type" or a message with "role"')
    if kind in (None, "message"):
        _check_message(path, where, item)
    elif kind == "function_call":
        _check_strings(path, where, item, ("name", "call_id"))
        arguments = item.get("arguments")
        if arguments is not None and not isinstance(arguments, (str, dict)):
            raise fail(path, f"{where}.arguments", f"expected a JSON string, got {type_name(arguments)}")
    elif kind == "function_call_output":
        _check_strings(path, where, item, ("call_id",))
        _check_parts(path, f"{where}.output", item.get("output"), "output")


def _check_message(path: str | Path, where: str, item: dict[str, Any]) -> None:
    role = item.get("role")
    if role not in ROLES:
        raise fail(path, f"{where}.role", f"expected one of {', '.join(ROLES)}, got {role!r}")
    _check_parts(path, f"{where}.content", item.get("content"), "content")


def _check_parts(path: str | Path, where: str, value: Any, what: str) -> None:
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, list):
        raise fail(path, where, f"expected a string or a list of parts for {what}, got {type_name(value)}")
    for position, part in enumerate(value):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise fail(path, f"{where}[{position}]", 'expected a content part (an object with a "type")')


def _check_strings(path: str | Path, where: str, item: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if not isinstance(item.get(key), str):
            raise fail(path, f"{where}.{key}", f'{item["type"]} without a string "{key}"')


import_openai_responses = conversation_importer(read_openai_responses, source=SOURCE, provider=openai_responses.NAME)
