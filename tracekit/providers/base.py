"""What a provider is: a module with the same few functions, converting one wire format.

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
from collections.abc import Iterable
from typing import Any, Protocol

from tracekit.providers.sse import ServerSentEvent
from tracekit.trace.models import Content, Usage


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


class Provider(Protocol):
    """The functions every provider module defines (``tracekit.providers.anthropic`` / ``openai``)."""

    NAME: str
    ROUTE: str

    def request_conversation(self, body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
        """A request body as a canonical conversation ``(system, messages)``."""

    def request_model(self, body: dict[str, Any]) -> str | None:
        """The model the request names."""

    def request_stream(self, body: dict[str, Any]) -> bool:
        """Whether the request asks for SSE."""

    def response_to_canonical(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """A response body as ``(assistant message or None for an error body, meta)``."""

    def canonical_to_response(
        self,
        message: dict[str, Any] | None,
        meta: dict[str, Any] | None = None,
        *,
        model: str | None = None,
        usage: Usage | None = None,
        stop_reason: str | None = None,
    ) -> dict[str, Any]:
        """The response body for a canonical assistant message (the inverse of ``response_to_canonical``)."""

    def response_message(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The canonical assistant message of a response body (None for an error body)."""

    def response_usage(self, body: dict[str, Any]) -> Usage:
        """Token usage of a response body."""

    def response_stop_reason(self, body: dict[str, Any]) -> str | None:
        """The provider's stop / finish reason."""

    def response_model(self, body: dict[str, Any]) -> str | None:
        """The model that answered."""

    def response_error(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The error object of an error body (``{"type", "message", ...}``), else None."""

    def error_body(self, status: int, message: str, type: str | None = None) -> dict[str, Any]:
        """An error body in the provider's shape, as its API would send with HTTP ``status``."""

    def stream_assembler(self) -> StreamAssembler:
        """A new incremental assembler for one SSE response."""

    def assemble_stream(self, events: Iterable[ServerSentEvent]) -> dict[str, Any]:
        """The response body the events of one stream add up to (as the official SDK assembles it)."""

    def render_stream(self, body: dict[str, Any]) -> bytes:
        """A JSON response body as SSE bytes that assemble back to it."""
