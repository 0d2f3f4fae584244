"""What Amazon Bedrock's wire formats share: the model and the stream named by the path
(``POST /model/{modelId}/converse-stream``), AWS's error bodies, and the event-stream framing of streamed
answers (``tracekit.providers.eventstream``).

Bedrock's request bodies name neither the model nor whether to stream: the path does. The proxy asks
``for_route(path)`` for each request and gets a copy of the provider bound to that path, whose
``request_model`` and ``request_stream`` answer from it.

Errors are AWS's (REST-JSON protocol): an HTTP status, the error's name in the ``x-amzn-ErrorType`` header
and ``{"message": ...}`` as the body; botocore also reads the name from the body's ``__type``, which is
where tracekit's own errors put it (names and statuses from the Bedrock Runtime API reference, "Errors" of
``Converse``: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html). A stream
that fails mid-way ends with an ``exception`` message (``:exception-type``).
"""

from __future__ import annotations

import copy
import re
from typing import Any
from urllib.parse import unquote

import orjson

from tracekit.errors import EventStreamError
from tracekit.providers.base import Provider, StreamSplitter
from tracekit.providers.defaults import ProviderBase
from tracekit.providers.eventstream import CONTENT_TYPE, EventMessage, FrameSplitter, decode_message
from tracekit.providers.sse import ServerSentEvent

#: The error name AWS gives each HTTP status of the Bedrock Runtime API.
ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    413: "ValidationException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
#: The ``:exception-type`` of a stream's failure, by the HTTP error name it stands for.
_STREAM_EXCEPTIONS = {
    "ThrottlingException": "throttlingException",
    "ValidationException": "validationException",
    "ServiceUnavailableException": "serviceUnavailableException",
    "ModelStreamErrorException": "modelStreamErrorException",
}
#: An event of a stream that is the stream's failure, as the parsers name it (``:exception-type``).
EXCEPTION_SUFFIX = "Exception"
_PATH = re.compile(r"/model/(?P<model>[^/]+)/(?P<operation>[a-z-]+)/?$")


def error_event_payload(error_type: str, message: str) -> tuple[str, bytes]:
    """The ``:exception-type`` and payload of a stream's failure (an Anthropic or AWS error name given)."""
    name = _STREAM_EXCEPTIONS.get(error_type)
    if name is None:
        busy = "overloaded" in error_type or "rate" in error_type
        name = "throttlingException" if busy else "internalServerException"
    return name, orjson.dumps({"message": message})


def parse_frames(splitter: FrameSplitter, chunk: bytes) -> list[EventMessage] | str:
    """The messages ``chunk`` completes, or why the stream cannot be read (a broken length or CRC)."""
    try:
        messages = [decode_message(frame) for frame in splitter.feed(chunk)]
    except EventStreamError as exc:
        return str(exc)
    return splitter.broken or messages


def broken_stream_event(reason: str) -> ServerSentEvent:
    """The event a parser gives once for bytes that are not a valid event stream: the stream's error."""
    return ServerSentEvent(data=orjson.dumps({"message": f"not a valid AWS event stream: {reason}"}).decode(),
                           event="invalidStreamException")  # fmt: skip


class BedrockProvider(ProviderBase):
    """A Bedrock wire format: subclasses say how bodies map to the canonical conversation and how events
    stream; this class reads the path, the errors and the framing."""

    API_PATHS: tuple[str, ...] = ("/model/",)
    #: The AWS SDKs' SigV4 date header: the proxy's own errors on other routes take AWS's shape.
    CLIENT_HEADERS = ("x-amz-date",)
    STREAM_CONTENT_TYPE = CONTENT_TYPE
    #: The operation that streams, and the one that does not (``converse-stream`` / ``converse``).
    OPERATIONS: tuple[str, str] = ("", "")

    _route_model: str | None = None
    _route_stream: bool = False

    def for_route(self, path: str) -> Provider | None:
        """A copy bound to the path's model and operation (``path`` as sent: an inference profile's ARN as a
        model id holds a ``%2F``; the model is given decoded)."""
        match = _PATH.search(path)
        if match is None:
            return None
        bound = copy.copy(self)
        bound._route_model = unquote(match["model"])
        bound._route_stream = match["operation"] == self.OPERATIONS[0]
        return bound

    def request_model(self, body: dict[str, Any]) -> str | None:
        """The model the path names."""
        return self._route_model

    def request_stream(self, body: dict[str, Any]) -> bool:
        """Whether the path is the streaming operation."""
        return self._route_stream

    def response_error(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """An AWS error body (``{"message"}``, perhaps ``__type``) as ``{"type", "message"}``; an Anthropic
        error body as its ``error``."""
        error = body.get("error")
        if body.get("type") == "error" and isinstance(error, dict):
            return error
        if "message" in body and len(body.keys() - {"message", "Message", "__type", "code"}) == 0:
            kind = body.get("__type") or body.get("code") or "UnknownError"
            return {"type": str(kind).rsplit("#", 1)[-1].split(":", 1)[0], "message": str(body.get("message"))}
        return None

    def error_body(self, status: int, message: str, type: str | None = None, code: str | None = None) -> dict[str, Any]:
        """``{"message", "__type"}``, the name chosen from the status unless given (botocore reads ``__type``)."""
        kind = type if type and type[:1].isupper() else ERROR_TYPES.get(status, "InternalServerException"
                                                                         if status >= 500 else "ValidationException")
        return {"message": message, "__type": kind}

    def stream_splitter(self) -> StreamSplitter:
        """Event-stream messages, cut by their length prefix."""
        return FrameSplitter()

    def stream_may_end(self, chunk: bytes) -> bool:
        """Every chunk is parsed before it is passed on (the final event's name is not cheap to see)."""
        return True
