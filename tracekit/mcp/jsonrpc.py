"""JSON-RPC 2.0 messages as MCP carries them: one message (or a batch) per line on stdio, per body over HTTP.

The MCP stdio transport frames messages as newline-delimited JSON: "Messages are delimited by newlines, and
MUST NOT contain embedded newlines" (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#stdio).
JSON-RPC 2.0 (https://www.jsonrpc.org/specification) tells a request (``method`` and ``id``), a notification
(``method``, no ``id``) and a response (``id`` with ``result`` or ``error``) apart; a batch is a JSON array of them
(allowed by MCP 2025-03-26, dropped in 2025-06-18; relayed either way).
"""

from __future__ import annotations

from typing import Any

import orjson

from tracekit.trace.canonical import canonical_json


def parse_messages(data: bytes) -> tuple[list[dict[str, Any]], bool]:
    """The JSON-RPC messages of one line or body and whether it was a batch; no message when it is not JSON
    (it is still relayed as it came)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return [], False
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)], True
    return ([value] if isinstance(value, dict) else []), False


def is_request(message: dict[str, Any]) -> bool:
    """A request: a method and an id (it expects a response)."""
    return "method" in message and message.get("id") is not None


def is_notification(message: dict[str, Any]) -> bool:
    """A notification: a method and no id (progress, cancellation, logging, list changes, ...)."""
    return "method" in message and message.get("id") is None


def is_response(message: dict[str, Any]) -> bool:
    """A response: an id with a result or an error."""
    return "method" not in message and ("result" in message or "error" in message)


def encode(message: Any) -> bytes:
    """A message as one line of compact JSON, non-ASCII kept as UTF-8, newline included."""
    return orjson.dumps(message) + b"\n"


def canonical_arguments(arguments: Any) -> bytes:
    """The identity of a tool call's arguments: canonical JSON (sorted keys), ``{}`` for none."""
    return canonical_json(arguments if arguments is not None else {})


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response to ``request_id``."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_response(request_id: Any, result: Any) -> dict[str, Any]:
    """A JSON-RPC result response to ``request_id``."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def tool_error_result(text: str) -> dict[str, Any]:
    """A ``tools/call`` result reporting a failure the model should see (``isError: true``), as the MCP spec's
    tool execution errors are (https://modelcontextprotocol.io/specification/2025-06-18/server/tools#error-handling)."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


#: JSON-RPC error code for a method the server does not have, and for a server-side failure (spec range).
METHOD_NOT_FOUND = -32601
SERVER_ERROR = -32000
