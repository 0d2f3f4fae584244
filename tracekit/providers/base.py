"""What a provider is: the members that convert one wire format (a module of functions, or a
``ProviderBase`` subclass), and the helpers they share (``tool_use`` blocks, stream events, overrides).

The canonical shapes (see ``tracekit.trace``): a conversation is ``(system, messages)`` where messages
are ``{"role": "user" | "assistant", "content": str | [blocks]}`` with Anthropic-shaped blocks; a reply
is one canonical assistant message. ``meta`` is whatever of a provider body the canonical message does
not hold (ids, usage, stop reason, unknown fields), so that ``canonical_to_response(*response_to_canonical(
body))`` gives back ``body``.

Example::

    from tracekit.providers import provider_for_path

    provider = provider_for_path("/v1/messages")
    system, messages = provider.request_conversation(request_body)
    reply, meta = provider.response_to_canonical(response_body)
    assert provider.canonical_to_response(reply, meta) == response_body
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol, TypedDict

import orjson
from typing_extensions import Unpack

from tracekit.providers.sse import EventSplitter, ServerSentEvent, SSEParser
from tracekit.trace.canonical import parse_json_arguments
from tracekit.trace.models import Content, Usage


class Continuation(NamedTuple):
    """How a request relates to conversations the API server keeps (Anthropic threads, the Responses API's
    ``previous_response_id`` and ``conversation``)."""

    kept: bool
    """The server keeps this request's conversation: a later request may continue from its reply's id."""
    previous_id: str | None
    """The id of the reply this request continues (it then sends only the new items)."""
    conversation: str | None = None
    """The id of a conversation the server keeps that this request belongs to (the Responses API's
    ``conversation``): the request sends only its new items, the server adds the conversation's."""


NOT_CONTINUED = Continuation(False, None)
"""A request that neither continues nor starts a kept conversation."""


class StreamAssembler(Protocol):
    """Accumulates the events of one SSE response into the provider's JSON response body."""

    def feed(self, event: ServerSentEvent) -> None:
        """Take one event (pings and unknown events are ignored)."""

    @property
    def error(self) -> dict[str, Any] | None:
        """The provider error body when the stream carried an error event, else None."""

    @property
    def done(self) -> bool:
        """True once the stream's final event arrived (``message_stop`` / ``[DONE]``)."""

    def body(self) -> dict[str, Any]:
        """The response assembled so far: the error body if there was an error, else the message."""


class StreamParser(Protocol):
    """Turns the byte chunks of one streamed answer into events, incrementally (``SSEParser`` for SSE; a
    format with another framing gives each of its messages as a ``ServerSentEvent``)."""

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by ``chunk``."""

    def close(self) -> list[ServerSentEvent]:
        """End of stream: the events still pending, if the framing completes any."""


class StreamSplitter(Protocol):
    """Cuts the byte chunks of one streamed answer at event boundaries, keeping each event's bytes as they
    came (stream faults count events; replay times them)."""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The whole events completed by ``chunk``."""

    def rest(self) -> bytes:
        """Bytes after the last whole event."""


class AssemblerBase(ABC):
    """What both providers' stream assemblers share: the error and done states, and ``body()`` giving a
    copy of the error body when the stream carried one, else of the response so far."""

    def __init__(self) -> None:
        self._error: dict[str, Any] | None = None
        self._done = False

    @property
    def error(self) -> dict[str, Any] | None:
        """The error body, when the stream carried an error."""
        return self._error

    @property
    def done(self) -> bool:
        """True once the stream's final event came."""
        return self._done

    def body(self) -> dict[str, Any]:
        """The error body, or the response assembled so far (``{}`` before the first event)."""
        if self._error is not None:
            return copy.deepcopy(self._error)
        return self._snapshot_body()

    @abstractmethod
    def _snapshot_body(self) -> dict[str, Any]:
        """A copy of the response assembled so far."""

    @abstractmethod
    def feed(self, event: ServerSentEvent) -> None:
        """Apply one event."""


def event_object(event: ServerSentEvent) -> dict[str, Any] | None:
    """The event's data as a JSON object, or None when it is not one (assemblers skip such events, as the
    SDKs do)."""
    try:
        data = event.json()
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def assemble(assembler: StreamAssembler, events: Iterable[ServerSentEvent]) -> dict[str, Any]:
    """Feed ``events`` to ``assembler`` and return the body they add up to."""
    for event in events:
        assembler.feed(event)
    return assembler.body()


# Provider functions whose rule is the same in both wire formats; each provider module re-exports them.


def request_model(body: dict[str, Any]) -> str | None:
    """The ``model`` the request names."""
    model = body.get("model")
    return model if isinstance(model, str) else None


def request_stream(body: dict[str, Any]) -> bool:
    """Whether the request asks for SSE (``"stream": true``)."""
    return body.get("stream") is True


def response_model(body: dict[str, Any]) -> str | None:
    """The model that answered."""
    model = body.get("model")
    return model if isinstance(model, str) else None


def response_id(body: dict[str, Any]) -> str | None:
    """The response's ``id``."""
    value = body.get("id")
    return value if isinstance(value, str) else None


def tool_use(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """A canonical ``tool_use`` block for a call whose ``arguments`` are JSON text (parsed, as the SDKs do;
    ``_input_parse_error`` marks text that is not JSON) or already a value (kept; none is ``{}``)."""
    block: dict[str, Any] = {"type": "tool_use", "id": call_id, "name": name}
    if isinstance(arguments, str):
        value, ok = parse_json_arguments(arguments)
        block["input"] = value
        if not ok:
            block["_input_parse_error"] = True
    else:
        block["input"] = arguments if arguments is not None else {}
    return block


STREAM_CONTENT_TYPE = "text/event-stream"
"""The content type of a streamed answer (server-sent events, unless a format says otherwise)."""


def for_route(path: str) -> None:
    """Nothing: the route names no value the body does not (the provider serves the request as it is)."""
    return None


def stream_parser() -> StreamParser:
    """An ``SSEParser``."""
    return SSEParser()


def stream_splitter() -> StreamSplitter:
    """An ``EventSplitter`` (SSE events end with a blank line)."""
    return EventSplitter()


def split_stream(splitter: StreamSplitter, data: bytes) -> list[bytes]:
    """A whole streamed answer as its events' bytes, cut by a new ``splitter`` (``provider.stream_splitter()``);
    a trailing incomplete event is kept as the last item."""
    events = splitter.feed(data)
    if splitter.rest():
        events.append(splitter.rest())
    return events


class ToolResultRef(NamedTuple):
    """A tool result as a wire item carries it: where in the item (``with_tool_result`` takes it back), the
    call it answers, and its content and error flag as sent (the wire's own shape)."""

    position: int
    tool_use_id: Any
    content: Any
    is_error: bool = False


def result_text(content: Any) -> str:
    """Canonical tool-result content as one string, for wire formats whose tool results are text only."""
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))


def request_items(body: dict[str, Any]) -> list[Any] | None:
    """The ``messages`` of a request (None when it has no list of them)."""
    messages = body.get("messages")
    return messages if isinstance(messages, list) else None


def with_request_items(body: dict[str, Any], items: list[Any]) -> dict[str, Any]:
    """A copy of ``body`` whose ``messages`` are ``items``."""
    return {**body, "messages": items}


class Overrides(TypedDict, total=False):
    """The fields ``canonical_to_response`` takes besides the message and meta, each replacing meta's."""

    model: str | None
    usage: Usage | None
    stop_reason: str | None


def overridden(overrides: Overrides) -> tuple[str | None, Usage | None, str | None]:
    """``(model, usage, stop_reason)`` of ``canonical_to_response``'s keyword arguments (None: not given)."""
    return overrides.get("model"), overrides.get("usage"), overrides.get("stop_reason")


class Provider(Protocol):
    """The members of a provider: a module defining them all (``tracekit.providers.anthropic`` / ``openai``),
    or a ``ProviderBase`` subclass, which has defaults for all but five.

    The proxy, the intercepts and the guard know a wire format only through these: adding one is a provider
    and one registration (``register_provider`` or the entry point ``tracekit.providers``;
    ``tests/providers/test_provider_lookup.py`` checks that each registered provider has every member).
    """

    NAME: str
    ROUTE: str
    """The path of the API's model endpoint (``/v1/messages``), served by the proxy; it may hold aiohttp's
    ``{name}`` and ``{name:regex}`` parts when the path names the model (``/model/{model}/converse``)."""
    STREAM_CONTENT_TYPE: str
    """The content type of a streamed answer (``text/event-stream``): an upstream answer of this type is
    relayed as a stream, and a replayed stream is given this type."""

    def for_route(self, path: str) -> Provider | None:
        """The provider bound to what a request's ``path`` (as sent, percent-encoding kept) says that its body
        does not (the model, whether to stream), or None when the path says nothing more (then this provider
        serves the request)."""

    def stream_parser(self) -> StreamParser:
        """A new parser of one streamed answer's bytes into events (what ``stream_assembler`` is fed)."""

    def stream_splitter(self) -> StreamSplitter:
        """A new splitter of one streamed answer's bytes at event boundaries."""

    @property
    def API_PATHS(self) -> tuple[str, ...]:
        """Path prefixes of the provider's whole API: the proxy's own errors on them take this provider's shape."""

    @property
    def CLIENT_HEADERS(self) -> tuple[str, ...]:
        """Request headers (lower case) that this provider's SDK sends: the proxy's own errors elsewhere take this
        provider's shape when a request has one (providers are asked in the order of ``PROVIDERS``)."""

    def request_conversation(self, body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
        """A request body as a canonical conversation ``(system, messages)``."""

    def request_model(self, body: dict[str, Any]) -> str | None:
        """The model the request names."""

    def request_stream(self, body: dict[str, Any]) -> bool:
        """Whether the request asks for SSE."""

    def request_items(self, body: dict[str, Any]) -> list[Any] | None:
        """The wire conversation items the request carries (``messages``; None when it carries no list)."""

    def with_request_items(self, body: dict[str, Any], items: list[Any]) -> dict[str, Any]:
        """A copy of ``body`` carrying ``items`` instead (the inverse of ``request_items``)."""

    def request_continuation(self, body: dict[str, Any]) -> Continuation:
        """Whether the request continues (or starts) a conversation the server keeps."""

    def response_to_canonical(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """A response body as ``(assistant message or None for an error body, meta)``."""

    def canonical_to_response(
        self, message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
    ) -> dict[str, Any]:
        """The response body for a canonical assistant message (the inverse of ``response_to_canonical``)."""

    def response_message(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The canonical assistant message of a response body (None for an error body)."""

    def response_usage(self, body: dict[str, Any]) -> Usage:
        """Token usage of a response body."""

    def response_stop_reason(self, body: dict[str, Any]) -> str | None:
        """The provider's stop / finish reason."""

    def canonical_stop_reason(self, body: dict[str, Any]) -> str | None:
        """Why the reply stopped, in the canonical (Messages API) terms: ``end_turn``, ``tool_use``,
        ``max_tokens``, ``refusal``, ... (a reason with no such term is given as the wire says it)."""

    def response_model(self, body: dict[str, Any]) -> str | None:
        """The model that answered."""

    def response_id(self, body: dict[str, Any]) -> str | None:
        """The id a later request names to continue from this response (see ``request_continuation``)."""

    def reply_items(self, body: dict[str, Any]) -> list[Any]:
        """The wire items a successful response adds to the conversation the server keeps."""

    def response_error(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The error object of an error body (``{"type", "message", ...}``), else None."""

    def error_body(self, status: int, message: str, type: str | None = None, code: str | None = None) -> dict[str, Any]:
        """An error body in the provider's shape, as its API would send with HTTP ``status`` (``code`` where the
        shape has one)."""

    def stream_assembler(self) -> StreamAssembler:
        """A new incremental assembler for one SSE response."""

    def assemble_stream(self, events: Iterable[ServerSentEvent]) -> dict[str, Any]:
        """The response body the events of one stream add up to (as the official SDK assembles it)."""

    def render_stream(self, body: dict[str, Any]) -> bytes:
        """A JSON response body as SSE bytes that assemble back to it."""

    def stream_may_end(self, chunk: bytes) -> bool:
        """Whether ``chunk`` may hold the stream's final event: a cheap byte test. The proxy parses such a chunk
        before passing it on, so that the session has moved on before the client can send its next request."""

    def error_event(self, error_type: str, message: str) -> bytes:
        """The provider's in-stream error event (the SSE bytes that end a stream with an error)."""

    def with_note(self, body: dict[str, Any], note: str) -> dict[str, Any] | None:
        """A copy of the request ``body`` with ``note`` added where the model reads it before it answers (after
        the tool results), as the user's; None when the body has no conversation to add it to (the guard's
        ``warn``)."""

    def item_tool_calls(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """The tool calls a wire item of a request makes, as canonical ``tool_use`` blocks (none for an item
        that is not the model's)."""

    def item_tool_results(self, item: dict[str, Any]) -> list[ToolResultRef]:
        """The tool results a wire item of a request carries back to the model."""

    def with_tool_result(self, item: dict[str, Any], position: int, content: Content, is_error: bool) -> dict[str, Any]:
        """A copy of ``item`` whose tool result at ``position`` says ``content`` (canonical; a wire format
        without an error flag sends it as it can and drops ``is_error``): what an intercept sends instead."""


def system_content(contents: list[Any], part_block: Callable[[dict[str, Any]], dict[str, Any]]) -> Content | None:
    """System prompt parts (a string each, or a list of content parts) as one canonical system content: the
    string itself when there is one string, else text blocks and ``part_block`` of each part."""
    if not contents:
        return None
    if len(contents) == 1 and isinstance(contents[0], str):
        return contents[0]
    blocks: list[dict[str, Any]] = []
    for content in contents:
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            blocks.extend(part_block(part) for part in content if isinstance(part, dict))
    return blocks


def image_source(url: str) -> dict[str, Any]:
    """An image URL of the OpenAI APIs as a canonical source: a data URL as base64, any other as a url."""
    if url.startswith("data:") and ";base64," in url:
        header, data = url[len("data:") :].split(";base64,", 1)
        return {"type": "base64", "media_type": header or "application/octet-stream", "data": data}
    return {"type": "url", "url": url}
