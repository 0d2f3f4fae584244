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
    with pytest.raises(KeyError, match=r"known: anthropic, .*openai"):
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


def test_each_provider_maps_its_stop_reasons_to_the_canonical_terms() -> None:
    from tracekit.providers import openai_responses

    assert anthropic.canonical_stop_reason({"stop_reason": "tool_use"}) == "tool_use"
    finish = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}
    for reason, canonical in finish.items():
        assert openai.canonical_stop_reason({"choices": [{"finish_reason": reason}]}) == canonical
    assert openai.canonical_stop_reason({"choices": [{"finish_reason": "odd"}]}) == "odd"
    assert openai.canonical_stop_reason({"choices": []}) is None
    function_call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    call = {"status": "completed", "output": [function_call]}
    assert openai_responses.canonical_stop_reason(call) == "tool_use"
    assert openai_responses.canonical_stop_reason({"status": "completed", "output": []}) == "end_turn"
    cut = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    assert openai_responses.canonical_stop_reason(cut) == "max_tokens"


def test_a_provider_owns_the_tool_results_an_intercept_rewrites() -> None:
    from tracekit.intercepts import config_from, rewrite_request

    for provider, result in ((anthropic, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]}),
                             (openai, {"role": "tool", "tool_call_id": "c1", "content": "ok"})):
        call = openai.item_tool_calls({"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "北京"}'}}]})
        assert call == [{"type": "tool_use", "id": "c1", "name": "search", "input": {"q": "北京"}}]
        assistant = {"role": "assistant", "content": call} if provider is anthropic else {
            "role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                                 "function": {"name": "search", "arguments": '{"q": "北京"}'}}]}
        intercepts = config_from({"type": "tool_intercept", "intercept_tool": "search",
                                  "inject_tool_result": {"is_error": True, "content": "服务不可用"}}).intercepts
        rewrite = rewrite_request(provider, {"messages": [assistant, result]}, intercepts)
        (injection,) = rewrite.injections
        assert (injection.tool, injection.original, injection.injected) == ("search", "ok", "服务不可用")
        (ref,) = provider.item_tool_results(rewrite.body["messages"][1])
        assert ref.content == "服务不可用"
