"""``ProviderBase``: a wire format as a class, with every member a format need not change given once.

A new wire format subclasses it and defines five members: ``NAME``, ``ROUTE``, ``request_conversation``,
``response_to_canonical`` and ``canonical_to_response``. The defaults read the fields most model APIs
share (``model``, ``stream``, ``messages``, ``id``, ``usage``, ``stop_reason``, ``error``), stream a
body as one SSE event followed by ``[DONE]``, and see no tool calls; a format overrides what it does
otherwise (``docs/architecture.md`` shows the smallest complete one). Register an instance or the class
with ``@register_provider`` or the entry-point group ``tracekit.providers``.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from typing_extensions import Unpack

from tracekit.providers import base
from tracekit.providers.base import (
    NOT_CONTINUED,
    AssemblerBase,
    Continuation,
    Overrides,
    Provider,
    StreamAssembler,
    StreamParser,
    StreamSplitter,
    ToolResultRef,
    event_object,
)
from tracekit.providers.sse import ServerSentEvent, encode_event, encode_json_event
from tracekit.trace.models import Content, Usage


class OneEventAssembler(AssemblerBase):
    """The default stream: each event's data is the whole body so far (JSON), ``[DONE]`` ends it, and a body
    with an ``error`` object is the stream's error."""

    def __init__(self) -> None:
        super().__init__()
        self._body: dict[str, Any] = {}

    def feed(self, event: ServerSentEvent) -> None:
        """Take one event: ``[DONE]`` or a JSON body."""
        if event.data == "[DONE]":
            self._done = True
            return
        value = event_object(event)
        if value is None:
            return
        if isinstance(value.get("error"), dict):
            self._error = value
        else:
            self._body = value

    def _snapshot_body(self) -> dict[str, Any]:
        return copy.deepcopy(self._body)


class ProviderBase(ABC):
    """A wire format; the members of ``tracekit.providers.base.Provider`` not given here have defaults."""

    NAME: str
    ROUTE: str
    CLIENT_HEADERS: tuple[str, ...] = ()
    STREAM_CONTENT_TYPE: str = base.STREAM_CONTENT_TYPE

    def for_route(self, path: str) -> Provider | None:
        """None: the route names nothing the body does not."""
        return None

    def stream_parser(self) -> StreamParser:
        """Server-sent events."""
        return base.stream_parser()

    def stream_splitter(self) -> StreamSplitter:
        """Server-sent events."""
        return base.stream_splitter()

    @property
    def API_PATHS(self) -> tuple[str, ...]:
        """The model endpoint alone."""
        return (self.ROUTE,)

    @abstractmethod
    def request_conversation(self, body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
        """A request body as a canonical conversation ``(system, messages)``."""

    @abstractmethod
    def response_to_canonical(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """A response body as ``(assistant message or None for an error body, meta)``."""

    @abstractmethod
    def canonical_to_response(
        self, message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
    ) -> dict[str, Any]:
        """The response body for a canonical assistant message (the inverse of ``response_to_canonical``)."""

    def request_model(self, body: dict[str, Any]) -> str | None:
        """The body's ``model``."""
        return base.request_model(body)

    def request_stream(self, body: dict[str, Any]) -> bool:
        """``"stream": true``."""
        return base.request_stream(body)

    def request_items(self, body: dict[str, Any]) -> list[Any] | None:
        """The body's ``messages``."""
        return base.request_items(body)

    def with_request_items(self, body: dict[str, Any], items: list[Any]) -> dict[str, Any]:
        """The body with other ``messages``."""
        return base.with_request_items(body, items)

    def request_continuation(self, body: dict[str, Any]) -> Continuation:
        """The server keeps no conversation."""
        return NOT_CONTINUED

    def response_message(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The message of ``response_to_canonical``."""
        return self.response_to_canonical(body)[0]

    def response_usage(self, body: dict[str, Any]) -> Usage:
        """``usage.input_tokens`` and ``usage.output_tokens`` when the body has them."""
        usage = body.get("usage")
        if not isinstance(usage, dict):
            return Usage()
        counts = {key: usage[key] for key in ("input_tokens", "output_tokens") if isinstance(usage.get(key), int)}
        return Usage(**counts)

    def response_stop_reason(self, body: dict[str, Any]) -> str | None:
        """The body's ``stop_reason``."""
        reason = body.get("stop_reason")
        return reason if isinstance(reason, str) else None

    def canonical_stop_reason(self, body: dict[str, Any]) -> str | None:
        """The wire's own stop reason (a format in other terms maps it)."""
        return self.response_stop_reason(body)

    def response_model(self, body: dict[str, Any]) -> str | None:
        """The body's ``model``."""
        return base.response_model(body)

    def response_id(self, body: dict[str, Any]) -> str | None:
        """The body's ``id``."""
        return base.response_id(body)

    def reply_items(self, body: dict[str, Any]) -> list[Any]:
        """Nothing: the server keeps no conversation."""
        return []

    def response_error(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The body's ``error`` object."""
        error = body.get("error")
        return error if isinstance(error, dict) else None

    def error_body(self, status: int, message: str, type: str | None = None, code: str | None = None) -> dict[str, Any]:
        """``{"error": {"type", "message"}}`` (and ``code`` when given)."""
        error: dict[str, Any] = {"type": type or ("api_error" if status >= 500 else "invalid_request_error"),
                                 "message": message}
        if code is not None:
            error["code"] = code
        return {"error": error}

    def stream_assembler(self) -> StreamAssembler:
        """A ``OneEventAssembler``."""
        return OneEventAssembler()

    def assemble_stream(self, events: Iterable[ServerSentEvent]) -> dict[str, Any]:
        """The body the events add up to, through ``stream_assembler``."""
        return base.assemble(self.stream_assembler(), events)

    def render_stream(self, body: dict[str, Any]) -> bytes:
        """The body as one event, then ``[DONE]``."""
        return encode_json_event(body) + encode_event("[DONE]")

    def stream_may_end(self, chunk: bytes) -> bool:
        """Whether the chunk may hold ``[DONE]``."""
        return b"[DONE]" in chunk

    def error_event(self, error_type: str, message: str) -> bytes:
        """An error body as an event, then ``[DONE]``."""
        return encode_json_event(self.error_body(500, message, error_type)) + encode_event("[DONE]")

    def with_note(self, body: dict[str, Any], note: str) -> dict[str, Any] | None:
        """A user message saying ``note`` after the request's items."""
        items = self.request_items(body)
        return None if items is None else self.with_request_items(body, [*items, {"role": "user", "content": note}])

    def item_tool_calls(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """No tool calls."""
        return []

    def item_tool_results(self, item: dict[str, Any]) -> list[ToolResultRef]:
        """No tool results."""
        return []

    def with_tool_result(self, item: dict[str, Any], position: int, content: Content, is_error: bool) -> dict[str, Any]:
        """Called only for a result ``item_tool_results`` gives, so a format without tool results keeps this."""
        return item
