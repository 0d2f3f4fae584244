"""Finding a provider by request path or by name; every registered module satisfies the Provider protocol."""

from __future__ import annotations

import pytest

from tracekit.providers import PROVIDERS, Provider, anthropic, get_provider, openai, parse_sse, provider_for_path
from tracekit.providers.base import Continuation


def test_provider_for_path() -> None:
    assert provider_for_path("/v1/messages") is anthropic
    assert provider_for_path("/v1/messages?beta=true") is anthropic
    assert provider_for_path("/v1/chat/completions/") is openai
    assert provider_for_path("/openai/v1/chat/completions") is openai
    assert provider_for_path("/v1/models") is None


def test_get_provider() -> None:
    assert get_provider("openai") is openai
    with pytest.raises(KeyError, match="known: anthropic, openai"):
        get_provider("gemini")


def test_every_provider_has_the_same_functions() -> None:
    """Every registered provider defines every member of the Provider protocol (what the proxy relies on)."""
    members = {name for name in vars(Provider) if not name.startswith("_")} | set(Provider.__annotations__)
    assert {"NAME", "ROUTE", "request_conversation", "stream_may_end", "error_event", "reply_items"} <= members
    for name, provider in PROVIDERS.items():
        assert name == provider.NAME
        assert members <= set(dir(provider)), (name, sorted(members - set(dir(provider))))


def test_continuations_and_reply_items() -> None:
    thread = {"thread": {"type": "continue", "previous_message_id": "msg_1"}, "messages": []}
    assert anthropic.request_continuation(thread) == Continuation(True, "msg_1")
    assert anthropic.request_continuation({"thread": {"type": "create"}}) == Continuation(True, None)
    assert anthropic.request_continuation({}) == openai.request_continuation(thread) == Continuation(False, None)
    assert anthropic.reply_items({"id": "msg_1", "content": [{"type": "text", "text": "好"}]}) == [
        {"role": "assistant", "content": [{"type": "text", "text": "好"}]}]
    message = {"role": "assistant", "content": "好"}
    assert openai.reply_items({"choices": [{"index": 0, "message": message}]}) == [message]
    assert openai.reply_items({"error": {"message": "x"}}) == []


def test_stream_ends_and_error_events_assemble_as_errors() -> None:
    for provider in (anthropic, openai):
        event = provider.error_event("overloaded_error", "busy")
        error = provider.assemble_stream(parse_sse(event))
        assert provider.response_error(error) == provider.response_error(provider.error_body(529, "busy",
                                                                                          "overloaded_error"))
    assert anthropic.stream_may_end(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    assert openai.stream_may_end(b"data: [DONE]\n\n") and not openai.stream_may_end(b"data: {}\n\n")
    assert openai.error_body(413, "big", code="request_too_large")["error"]["code"] == "request_too_large"
    assert "code" not in anthropic.error_body(413, "big", code="request_too_large")["error"]
