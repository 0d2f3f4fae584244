"""Amazon Bedrock's ``InvokeModel`` (``POST /model/{modelId}/invoke``) and
``InvokeModelWithResponseStream`` (``/invoke-with-response-stream``) carrying Anthropic Messages bodies.

The bodies are the Messages API's (Anthropic's "Claude on Amazon Bedrock" page,
https://docs.anthropic.com/en/api/claude-on-amazon-bedrock): the request without ``model`` and ``stream``
(the path says them) and with ``anthropic_version: bedrock-2023-05-31``; the response as the Messages API
gives it. The stream is an AWS event stream of ``chunk`` events whose payload is
``{"bytes": "<base64 of one Messages API event's JSON>"}`` (``ResponseStream`` in the Bedrock Runtime API
reference, https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ResponseStream.html).
Everything about the conversation is the ``anthropic`` provider's: this one only unwraps and wraps.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from typing_extensions import Unpack

from tracekit.providers import anthropic
from tracekit.providers.base import Overrides, StreamAssembler, StreamParser, ToolResultRef
from tracekit.providers.bedrock_base import BedrockProvider, broken_stream_event, error_event_payload, parse_frames
from tracekit.providers.eventstream import FrameSplitter, event_frame, exception_frame
from tracekit.providers.sse import ServerSentEvent, parse_sse
from tracekit.trace.models import Content, Usage


class InvokeEventParser:
    """Event-stream bytes in, the Messages API events they carry out (``chunk`` payloads base64-decoded); an
    ``exception`` message becomes the Messages API's ``error`` event."""

    def __init__(self) -> None:
        self._splitter = FrameSplitter()
        self._broken = False

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events ``chunk`` completes."""
        if self._broken:
            return []
        messages = parse_frames(self._splitter, chunk)
        if isinstance(messages, str):
            self._broken = True
            messages_event = broken_stream_event(messages)
            return [_error_event(messages_event.event or "", messages_event.data)]
        events = []
        for message in messages:
            if message.message_type != "event":
                events.append(_error_event(message.event_type or "internalServerException",
                                           message.payload.decode("utf-8", "replace")))  # fmt: skip
                continue
            try:
                wrapped = orjson.loads(message.payload)
                data = base64.b64decode(wrapped["bytes"]).decode("utf-8")
                name = orjson.loads(data).get("type")
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
                continue  # not a chunk of a Messages event: skipped, as the SDKs skip unknown events
            events.append(ServerSentEvent(data=data, event=name if isinstance(name, str) else None))
        return events

    def close(self) -> list[ServerSentEvent]:
        """Nothing: a partial message at the end is no event."""
        return []


def _error_event(exception_type: str, payload: str) -> ServerSentEvent:
    try:
        message = str(orjson.loads(payload).get("message", payload))
    except (orjson.JSONDecodeError, AttributeError):
        message = payload
    error = {"type": "error", "error": {"type": exception_type, "message": message}}
    return ServerSentEvent(data=orjson.dumps(error).decode(), event="error")


class BedrockInvoke(BedrockProvider):
    """InvokeModel with Anthropic Messages bodies (see the module docstring)."""

    NAME = "bedrock_invoke"
    ROUTE = "/model/{model}/{operation:invoke|invoke-with-response-stream}"
    OPERATIONS = ("invoke-with-response-stream", "invoke")

    def request_conversation(self, body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
        """The Messages API's."""
        return anthropic.request_conversation(body)

    def response_to_canonical(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The Messages API's (an AWS error body gives ``(None, body)``)."""
        if self.response_error(body) is not None:
            return None, dict(body)
        return anthropic.response_to_canonical(body)

    def canonical_to_response(
        self, message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
    ) -> dict[str, Any]:
        """The Messages API's (an error body in meta given back as it is)."""
        if message is None:
            return dict(meta or {})
        return anthropic.canonical_to_response(message, meta, **overrides)

    def response_usage(self, body: dict[str, Any]) -> Usage:
        """The Messages API's ``usage``."""
        return anthropic.response_usage(body)

    def with_note(self, body: dict[str, Any], note: str) -> dict[str, Any] | None:
        """The Messages API's."""
        return anthropic.with_note(body, note)

    def item_tool_calls(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """The Messages API's ``tool_use`` blocks."""
        return anthropic.item_tool_calls(item)

    def item_tool_results(self, item: dict[str, Any]) -> list[ToolResultRef]:
        """The Messages API's ``tool_result`` blocks."""
        return anthropic.item_tool_results(item)

    def with_tool_result(self, item: dict[str, Any], position: int, content: Content, is_error: bool) -> dict[str, Any]:
        """The Messages API's."""
        return anthropic.with_tool_result(item, position, content, is_error)

    def stream_parser(self) -> StreamParser:
        """The Messages API events inside the ``chunk`` messages."""
        return InvokeEventParser()

    def stream_assembler(self) -> StreamAssembler:
        """The Messages API's assembler."""
        return anthropic.stream_assembler()

    def render_stream(self, body: dict[str, Any]) -> bytes:
        """The Messages API's events for ``body``, each in a ``chunk`` message; an AWS error body as an
        ``exception`` message."""
        error = self.response_error(body)
        if error is not None and body.get("type") != "error":
            return exception_frame(*error_event_payload(str(error.get("type", "")), str(error.get("message", ""))))
        frames = []
        for event in parse_sse(anthropic.render_stream(body)):
            if event.event == "ping":
                continue
            wrapped = {"bytes": base64.b64encode(event.data.encode("utf-8")).decode("ascii")}
            frames.append(event_frame("chunk", orjson.dumps(wrapped)))
        return b"".join(frames)

    def error_event(self, error_type: str, message: str) -> bytes:
        """An ``exception`` message ending the stream."""
        return exception_frame(*error_event_payload(error_type, message))
