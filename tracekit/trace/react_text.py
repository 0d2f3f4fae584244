"""Tool calls and results that a ReAct-style client sends back as text, read as calls and results.

smolagents' ``ToolCallingAgent`` gets real tool calls from the model, but sends the history back as text
(smolagents 1.26, ``smolagents/memory.py``, ``ActionStep.to_messages``; roles mapped by
``smolagents/models.py`` ``tool_role_conversions``, consecutive messages of one role joined with a newline by
``get_clean_message_list``):

- the assistant turn: its text (if any), a newline, then ``"Calling tools:\\n" + str([tc.dict() ...])``, where
  each call is the Python repr of ``{'id': ..., 'type': 'function', 'function': {'name': ..., 'arguments': ...}}``;
- the results, as the next user turn: ``"Observation:\\n" + observations`` (the results of a step's calls, in
  the order of their ids, joined with newlines), and on a failure ``"Call id: <id>\\nError:\\n<message>..."``.

``react_history`` rewrites such turns into the canonical ``tool_use`` and ``tool_result`` blocks, so the turn is
the model's reply that was recorded (same call ids: one trace, each call once) and the results are recorded as
``tool_result`` records. The rule is strict, so that no other text is mistaken for it: the assistant text must
end with a list that parses as Python literals (``ast.literal_eval``, never evaluated code) of calls of exactly
that shape, and a user turn is read as results only right after such a turn. When a step made several calls
their one observation cannot be split, so each call's result is the whole observation.
"""

from __future__ import annotations

import ast
import contextlib
import json
from typing import Any

CALLING_TOOLS = "Calling tools:\n"
#: The same as a JSON text holds it: a request body without these bytes has no such turn (a search in bytes
#: costs next to nothing; the proxy looks at every request of every session).
CALLING_TOOLS_JSON = b"Calling tools:\\n"
OBSERVATION = "Observation:\n"
CALL_ID = "Call id: "
ERROR = "\nError:\n"


def react_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with ReAct-style tool calls and results in text made ``tool_use`` / ``tool_result`` blocks
    (the same list when there are none)."""
    if not any(_has_calling_text(message) for message in messages):
        return messages
    rewritten: list[dict[str, Any]] = []
    pending: list[str] = []
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant":
            converted, pending = _calls_of(message)
            rewritten.append(converted)
        elif role == "user" and pending:
            converted = _results_of(message, pending)
            rewritten.append(converted)
            pending = []
        else:
            rewritten.append(message)
            pending = []
    return rewritten


def _has_calling_text(message: Any) -> bool:
    """Whether an assistant turn holds the calls' marker (a substring search per text, nothing copied: every
    request of every session is looked at)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return CALLING_TOOLS in content
    return isinstance(content, list) and any(
        isinstance(block, dict) and isinstance(block.get("text"), str) and CALLING_TOOLS in block["text"]
        for block in content
    )


def _text(message: dict[str, Any]) -> str:
    """The message's text when it is all text (a string, or text blocks only), else ''."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if (
        isinstance(content, list)
        and content
        and all(isinstance(block, dict) and block.get("type") == "text" for block in content)
    ):
        return "\n".join(str(block.get("text", "")) for block in content)
    return ""


def _calls_of(message: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The assistant turn with its text-carried calls as ``tool_use`` blocks, and their ids (none: unchanged)."""
    text = _text(message)
    at = text.rfind(CALLING_TOOLS)
    if at < 0 or (at > 0 and text[at - 1] != "\n"):
        return message, []
    try:
        listed = ast.literal_eval(text[at + len(CALLING_TOOLS) :].strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return message, []
    blocks = [_tool_use(item) for item in listed] if isinstance(listed, list) and listed else [None]
    if any(block is None for block in blocks):
        return message, []
    before = text[:at].rstrip("\n")
    content: list[dict[str, Any]] = [{"type": "text", "text": before}] if before.strip() else []
    content.extend(block for block in blocks if block is not None)
    return {**message, "content": content}, [str(block["id"]) for block in blocks if block is not None]


def _tool_use(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict) or set(item) != {"id", "type", "function"} or item["type"] != "function":
        return None
    function = item["function"]
    if not isinstance(function, dict) or not isinstance(function.get("name"), str) or "arguments" not in function:
        return None
    arguments = function["arguments"]
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):  # not JSON: kept as the text it is
            arguments = json.loads(arguments)
    return {"type": "tool_use", "id": str(item["id"]), "name": function["name"], "input": arguments}


def _results_of(message: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """The user turn after text-carried calls with its observation and errors as ``tool_result`` blocks."""
    text = _text(message)
    observation: str | None = None
    errors: dict[str, str] = {}
    rest = text
    if rest.startswith(OBSERVATION):
        rest = rest[len(OBSERVATION) :]
        cut = _error_start(rest, ids)
        observation, rest = (rest[:cut], rest[cut + 1 :]) if cut >= 0 else (rest, "")
    if rest.startswith(CALL_ID):
        call_id, _, error = rest[len(CALL_ID) :].partition(ERROR)
        if call_id in ids and error:
            errors[call_id] = "Error:\n" + error
            rest = ""
    if rest or (observation is None and not errors):
        return message
    blocks = []
    for call_id in ids:
        if call_id in errors:
            blocks.append({"type": "tool_result", "tool_use_id": call_id, "content": errors[call_id], "is_error": True})
        elif observation is not None:
            blocks.append({"type": "tool_result", "tool_use_id": call_id, "content": observation})
    return {**message, "content": blocks}


def _error_start(text: str, ids: list[str]) -> int:
    """Where an error of one of the calls begins after the observation (the newline before it), or -1."""
    for call_id in ids:
        at = text.find(f"\n{CALL_ID}{call_id}{ERROR}")
        if at >= 0:
            return at
    return -1
