"""What the fake upstream answers: content blocks, replies and their builders.

A reply is provider-neutral. The same ``MessageReply`` renders as an Anthropic Messages response or as
an OpenAI Chat Completions response, as JSON or as an SSE stream, whichever the request asked for.

    Reply
     ├── MessageReply     an assistant message (text, tool_use, thinking blocks), optionally slowed
     │                    down or broken mid-stream (``cut_after``, ``error_after``)
     ├── ErrorReply       an HTTP error with the provider's error body and retry headers
     └── ConnectionReset  the connection is closed without any response
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from typing_extensions import TypedDict, Unpack


@dataclass(frozen=True)
class Text:
    """A text block."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A tool call. ``id`` None: the fake upstream assigns ``toolu_fake_0001`` / ``call_fake_0001``."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Thinking:
    """An extended-thinking block (Anthropic only; dropped from OpenAI responses except in the usage count).

    ``signature`` defaults to a deterministic fake derived from the thinking text."""

    thinking: str
    signature: str | None = None


@dataclass(frozen=True)
class RedactedThinking:
    """A ``redacted_thinking`` block carrying opaque ``data`` (Anthropic only)."""

    data: str


Block = Text | ToolUse | Thinking | RedactedThinking


@dataclass(frozen=True)
class Usage:
    """Token counts to report instead of the computed fake ones; a None field keeps the computed value."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error response shaped like the provider's.

    ``type`` is the Anthropic error type (``overloaded_error``, ``rate_limit_error``, ...); the OpenAI body
    uses ``openai_type`` / ``openai_code`` when given, else a mapping of ``type``. ``should_retry`` sets the
    ``x-should-retry`` header (None: no header, the SDK decides from the status). ``retry_after_ms`` and
    ``retry_after`` (seconds) set the headers of the same names. ``details`` becomes ``error.details``
    (e.g. ``{"error_code": "thread_not_found"}``).
    """

    status: int
    type: str
    message: str
    should_retry: bool | None = None
    retry_after_ms: int | None = None
    retry_after: float | None = None
    details: Mapping[str, Any] | None = None
    openai_type: str | None = None
    openai_code: str | None = None
    param: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    first_byte_delay: float = 0.0


@dataclass(frozen=True)
class ConnectionReset:
    """Close the connection after reading the request, without sending a response."""

    first_byte_delay: float = 0.0


@dataclass(frozen=True)
class StreamFault:
    """A fault injected into a reply's stream after ``after_events`` complete events.

    ``cut``: the first bytes of the next event are sent, then the connection closes (a non-streaming request
    gets half of its JSON body). ``error``: an in-stream error event (Anthropic ``event: error``, OpenAI
    ``data: {"error": ...}``) and the stream ends; a non-streaming request gets ``error`` as an HTTP error.
    """

    kind: Literal["cut", "error"]
    after_events: int
    error: ErrorReply | None = None


@dataclass(frozen=True)
class MessageReply:
    """An assistant message.

    ``stop_reason`` is Anthropic's (``end_turn``, ``tool_use``, ``max_tokens``, ``stop_sequence``,
    ``refusal``); None means ``tool_use`` when the content has a ToolUse, else ``end_turn``. ``model`` None
    echoes the request's model. ``chunk_size`` is the number of characters per streamed text or thinking
    delta (tool input JSON is sent as an empty fragment then at least three pieces where it is long enough).
    ``first_byte_delay`` waits before anything is sent; ``event_delay`` waits before each later SSE event.
    """

    content: tuple[Block, ...]
    stop_reason: str | None = None
    model: str | None = None
    usage: Usage | None = None
    chunk_size: int = 8
    first_byte_delay: float = 0.0
    event_delay: float = 0.0
    fault: StreamFault | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def resolved_stop_reason(self) -> str:
        """The stop reason sent: the given one, or derived from the content."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(block, ToolUse) for block in self.content) else "end_turn"

    def http_error(self, stream: bool) -> ErrorReply | None:
        """The HTTP error sent instead of this reply: that of its ``error`` fault when the response is not streamed
        (a JSON body cannot end with an error event)."""
        if self.fault is None or self.fault.kind != "error" or stream:
            return None
        assert self.fault.error is not None
        return self.fault.error

    def cut_after(self, events: int) -> MessageReply:
        """This reply, with the connection cut mid-event after ``events`` complete SSE events."""
        return dataclasses.replace(self, fault=StreamFault("cut", events))

    def error_after(
        self, events: int, type: str = "overloaded_error", message: str = "Overloaded", status: int = 529
    ) -> MessageReply:
        """This reply, with an in-stream error event after ``events`` complete SSE events."""
        error = ErrorReply(status=status, type=type, message=message)
        return dataclasses.replace(self, fault=StreamFault("error", events, error))

    def delayed(self, first_byte: float = 0.0, per_event: float = 0.0) -> MessageReply:
        """This reply, sent after ``first_byte`` seconds and with ``per_event`` seconds between SSE events."""
        return dataclasses.replace(self, first_byte_delay=first_byte, event_delay=per_event)


Reply = MessageReply | ErrorReply | ConnectionReset


class ReplyOptions(TypedDict, total=False):
    """Keyword options shared by the message builders (see ``MessageReply``)."""

    stop_reason: str | None
    model: str | None
    usage: Usage | None
    chunk_size: int
    first_byte_delay: float
    event_delay: float
    headers: Mapping[str, str]


def message_reply(*blocks: Block, **options: Unpack[ReplyOptions]) -> MessageReply:
    """An assistant message of ``blocks`` in order: ``message_reply(Thinking("..."), Text("..."))``."""
    return MessageReply(content=tuple(blocks), **options)


def text_reply(
    text: str, *, thinking: str | Thinking | None = None, **options: Unpack[ReplyOptions]
) -> MessageReply:
    """An assistant message with one text block, after an optional thinking block."""
    return message_reply(*_thinking_blocks(thinking), Text(text), **options)


def tool_use_reply(
    calls: ToolUse | Sequence[ToolUse],
    text: str | None = None,
    *,
    thinking: str | Thinking | None = None,
    **options: Unpack[ReplyOptions],
) -> MessageReply:
    """An assistant message calling one or more tools (parallel calls), after optional thinking and text."""
    tool_uses = [calls] if isinstance(calls, ToolUse) else list(calls)
    text_blocks = [Text(text)] if text is not None else []
    return message_reply(*_thinking_blocks(thinking), *text_blocks, *tool_uses, **options)


def error_reply(
    status: int,
    type: str | None = None,
    message: str | None = None,
    *,
    should_retry: bool | None = None,
    retry_after_ms: int | None = None,
    retry_after: float | None = None,
    details: Mapping[str, Any] | None = None,
    openai_type: str | None = None,
    openai_code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ErrorReply:
    """An HTTP error; ``type`` and ``message`` default to what Anthropic sends for ``status``."""
    default_type, default_message = ANTHROPIC_ERROR_TYPES.get(status, ("api_error", "Internal server error"))
    return ErrorReply(
        status=status,
        type=type or default_type,
        message=message if message is not None else default_message,
        should_retry=should_retry,
        retry_after_ms=retry_after_ms,
        retry_after=retry_after,
        details=details,
        openai_type=openai_type,
        openai_code=openai_code,
        headers=dict(headers or {}),
    )


def connection_reset() -> ConnectionReset:
    """Close the connection without a response (the SDKs see a connection error and retry)."""
    return ConnectionReset()


def fault(
    kind: Literal["reset", "cut", "error"],
    *,
    after_events: int = 0,
    reply: MessageReply | None = None,
    error_type: str = "overloaded_error",
    message: str = "Overloaded",
    status: int = 529,
) -> Reply:
    """A transport fault: ``reset`` (no response), ``cut`` (``reply`` cut mid-event after ``after_events``
    events) or ``error`` (an in-stream error event after ``after_events`` events of ``reply``).
    ``reply`` defaults to a short text reply."""
    if kind == "reset":
        return ConnectionReset()
    base = reply if reply is not None else text_reply("This reply is interrupted by a scripted fault.")
    if kind == "cut":
        return base.cut_after(after_events)
    if kind == "error":
        return base.error_after(after_events, type=error_type, message=message, status=status)
    raise ValueError(f"unknown fault kind {kind!r}; expected 'reset', 'cut' or 'error'")


def _thinking_blocks(thinking: str | Thinking | None) -> list[Block]:
    if thinking is None:
        return []
    return [thinking if isinstance(thinking, Thinking) else Thinking(thinking)]


#: status -> (Anthropic error type, default message), after https://docs.anthropic.com/en/api/errors
ANTHROPIC_ERROR_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request"),
    401: ("authentication_error", "invalid x-api-key"),
    402: ("billing_error", "Your credit balance is too low"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "Not found"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    500: ("api_error", "Internal server error"),
    504: ("timeout_error", "Request timed out"),
    529: ("overloaded_error", "Overloaded"),
}
