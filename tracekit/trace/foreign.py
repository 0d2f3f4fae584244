"""Files given as traces that are not traces: what they look like, and the import that reads them.

A trace file is JSONL: a header record, then one record per line. People hand ``tracekit analyze`` or
``tracekit show`` other JSON files by mistake, most often the file they meant to import (a tau-bench
results file, a list of chat messages). The reader then raises ``NotATraceError`` with the message made
here, which says what the file is and the command that turns it into traces, for example::

    runs/gpt-4o-airline.json: not a trace but a tau-bench results file (a JSON list of 50 trajectories);
    import it first: tracekit import tau-bench runs/gpt-4o-airline.json --out DIR

The shapes recognised are the ones ``tracekit import`` reads (see its importers' docstrings); anything else
gets the general message and a pointer to ``tracekit import --help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tracekit.errors import StorageError
from tracekit.storage import open_read, path_size

#: A JSON document up to this size is parsed whole to say what it is; a larger one gets the general message.
SNIFF_LIMIT = 64 * 1024 * 1024

_TRACE_SHAPE = "a trace is JSONL: a header record, then one record per line"
_IMPORTS = "`tracekit import --help` lists the formats tracekit imports"


def parse_document(path: str | Path) -> tuple[bool, Any]:
    """``(True, value)`` when the whole file is one JSON document (and no larger than ``SNIFF_LIMIT``),
    else ``(False, None)``."""
    try:
        if path_size(path) > SNIFF_LIMIT:
            return False, None
        with open_read(path) as handle:
            return True, orjson.loads(handle.read())
    except (OSError, StorageError, orjson.JSONDecodeError):
        return False, None


def not_a_trace_message(path: str | Path, document: Any) -> str:
    """What the JSON ``document`` read from ``path`` is, and which import reads it, as one line."""
    name = str(path)
    command = _import_command(document)
    if command is not None:
        what, subcommand = command
        return f"{name}: not a trace but {what}; import it first: tracekit import {subcommand} {name} --out DIR"
    return f"{name}: not a trace but a JSON {_describe(document)}; {_TRACE_SHAPE}; {_IMPORTS}"


def not_a_record_message(path: str | Path, line: int, value: Any) -> str:
    """The message for a file whose first JSON line is not a trace record."""
    return (
        f'{path}:{line}: not a trace: the first line is a JSON {_describe(value)}, not a record with a "kind" '
        f"(the header first); {_TRACE_SHAPE}; {_IMPORTS}"
    )


def unreadable_message(path: str | Path, first_problem: str | None) -> str:
    """The message for a file of which no line could be read as a record."""
    if first_problem is None:
        return f"{path}: not a trace: the file is empty"
    return f"{path}: not a trace: no line of it is a trace record ({first_problem}); {_TRACE_SHAPE}"


def _import_command(document: Any) -> tuple[str, str] | None:
    """``(what it is, the import subcommand)`` for the shapes ``tracekit import`` reads."""
    if isinstance(document, dict):
        if isinstance(document.get("resourceSpans"), list):
            return "OpenTelemetry spans (OTLP JSON)", "otel"
        if isinstance(document.get("eval"), dict) and "samples" in document:
            return "an inspect_ai eval log", "inspect"
        if isinstance(document.get("messages"), list):
            return _messages(document["messages"], "an object with a list of chat messages")
        return None
    if not isinstance(document, list) or not document or not all(isinstance(item, dict) for item in document):
        return None
    if all("task_id" in item and "traj" in item for item in document):
        return f"a tau-bench results file (a JSON list of {len(document)} trajectories)", "tau-bench"
    if all("role" in item for item in document):
        return _messages(document, "a JSON list of chat messages")
    return None


def _messages(messages: list[Any], what: str) -> tuple[str, str]:
    """Anthropic or OpenAI chat messages, told apart by their tool turns (both when nothing tells)."""
    items = [message for message in messages if isinstance(message, dict)]
    if any(message.get("role") == "tool" or "tool_calls" in message for message in items):
        return what + " (OpenAI)", "openai-messages"
    blocks = [block for message in items if isinstance(message.get("content"), list) for block in message["content"]]
    if any(isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result") for block in blocks):
        return what + " (Anthropic)", "anthropic-messages"
    return what + " (Anthropic's; for OpenAI's use openai-messages)", "anthropic-messages"


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = list(value)
        shown = ", ".join(str(key) for key in keys[:5]) + (", ..." if len(keys) > 5 else "")
        return f"object with keys {shown}" if keys else "empty object"
    if isinstance(value, list):
        return f"list of {len(value)} items"
    return {str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")
