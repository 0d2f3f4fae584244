"""The Gemini provider: routes, request and response conversion, stop reasons, usage, stream assembly and
rendering. Bodies are in the shape of the Gemini API reference (ai.google.dev/api/generate-content); the
streams come from the fake upstream, which the google-genai tests (tests/proxy) check against the real SDK."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from tracekit.providers import gemini as provider
from tracekit.providers import parse_sse, provider_for_path
from tracekit.testing import FakeUpstream, Thinking, ToolUse, message_reply, text_reply, tool_use_reply
from tracekit.trace.builder import message_fingerprint

CALLS = {"candidates": [{"content": {"parts": [
    {"text": "我查一下。"},
    {"functionCall": {"name": "get_weather", "args": {"city": "北京"}}, "thoughtSignature": "c2ln"},
    {"functionCall": {"name": "get_weather", "args": {"city": "上海"}}},
], "role": "model"}, "finishReason": "STOP", "index": 0, "safetyRatings": []}],
    "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 12, "thoughtsTokenCount": 5,
                      "cachedContentTokenCount": 8, "totalTokenCount": 57},
    "modelVersion": "gemini-2.5-flash", "responseId": "r-1"}  # fmt: skip
THOUGHT = {"candidates": [{"content": {"parts": [{"text": "先想", "thought": True}, {"text": "答案"}],
                                       "role": "model"}, "finishReason": "MAX_TOKENS"}],
           "modelVersion": "gemini-2.5-pro"}  # fmt: skip
BLOCKED = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}}
ERROR = {"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}


def test_the_path_names_the_model_and_the_stream() -> None:
    said = {
        "/v1beta/models/gemini-2.5-flash:generateContent": ("gemini-2.5-flash", False),
        "/v1/models/gemini-2.0-flash-001:streamGenerateContent": ("gemini-2.0-flash-001", True),
    }
    for path, (model, stream) in said.items():
        bound = provider_for_path(path + "?alt=sse")
        assert bound is not None and bound.NAME == "gemini"
        assert (bound.request_model({}), bound.request_stream({})) == (model, stream)
    assert provider.request_model({}) is None, "binding made a copy"
    for other in ("/v1beta/models/gemini-2.5-flash:countTokens", "/v1beta/models", "/v1/messages:generateContent",
                  "/v1beta/models/m:generateContent/more"):  # fmt: skip
        assert provider_for_path(other) is None


@pytest.mark.parametrize("body", [CALLS, THOUGHT, BLOCKED, ERROR], ids=["calls", "thought", "blocked", "error"])
def test_a_response_round_trips_through_canonical_form(body: dict[str, Any]) -> None:
    kept = copy.deepcopy(body)
    assert provider.canonical_to_response(*provider.response_to_canonical(body)) == body
    assert body == kept


def test_the_reply_and_what_a_client_sends_back_are_one_message() -> None:
    reply = provider.response_message(CALLS)
    assert reply == {"role": "assistant", "content": [
        {"type": "text", "text": "我查一下。"},
        {"type": "tool_use", "id": "gemini:get_weather:0", "name": "get_weather", "input": {"city": "北京"}},
        {"type": "tool_use", "id": "gemini:get_weather:1", "name": "get_weather", "input": {"city": "上海"}}]}
    # google-genai's chat sends a streamed reply back one Content per chunk: still one assistant message.
    parts = CALLS["candidates"][0]["content"]["parts"]
    pieces = [{"role": "model", "parts": [{"text": "我查"}]}, {"role": "model", "parts": [{"text": "一下。"}]},
              {"role": "model", "parts": parts[1:]}]  # fmt: skip
    answers = {"role": "user", "parts": [
        {"functionResponse": {"name": "get_weather", "response": {"result": "晴"}}},
        {"functionResponse": {"name": "get_weather", "response": {"error": "timeout"}}}]}
    request = {"contents": [{"role": "user", "parts": [{"text": "天气？"}]}, *pieces, answers],
               "systemInstruction": {"role": "user", "parts": [{"text": "简短回答"}]}}  # fmt: skip
    system, messages = provider.request_conversation(request)
    assert system == "简短回答"
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert message_fingerprint(messages[1]) == message_fingerprint(reply)
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "gemini:get_weather:0", "content": "晴", "name": "get_weather"},
        {"type": "tool_result", "tool_use_id": "gemini:get_weather:1", "content": "timeout", "name": "get_weather",
         "is_error": True}]  # fmt: skip


def test_an_intercept_rewrites_a_function_response_in_its_own_terms() -> None:
    item = {"role": "user", "parts": [{"text": "结果"}, {"functionCall": None},
                                      {"functionResponse": {"id": "c1", "name": "f", "response": {"result": "ok"}}}]}
    (result,) = provider.item_tool_results(item)
    assert (result.position, result.tool_use_id, result.content, result.is_error) == (2, "c1", {"result": "ok"}, False)
    rewritten = provider.with_tool_result(item, 2, "Error: down", True)
    assert rewritten["parts"][2]["functionResponse"] == {"id": "c1", "name": "f", "response": {"error": "Error: down"}}
    assert provider.with_tool_result(item, 2, [{"type": "text", "text": "新"}], False)["parts"][2][
        "functionResponse"]["response"] == {"result": "新"}
    assert item["parts"][2]["functionResponse"]["response"] == {"result": "ok"}, "the original is untouched"
    model = {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "f", "args": {"a": 1}}}]}
    assert provider.item_tool_calls(model) == [{"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}]
    assert provider.item_tool_calls({**model, "role": "user"}) == []


def test_stop_reasons_usage_and_errors() -> None:
    assert provider.response_stop_reason(CALLS) == "STOP"
    assert provider.canonical_stop_reason(CALLS) == "tool_use", "STOP with a function call"
    answered = copy.deepcopy(CALLS)
    answered["candidates"][0]["content"]["parts"] = [{"text": "好"}]
    assert provider.canonical_stop_reason(answered) == "end_turn"
    assert provider.canonical_stop_reason(THOUGHT) == "max_tokens"
    assert provider.canonical_stop_reason(BLOCKED) == "refusal"
    usage = provider.response_usage(CALLS)
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (32, 17, 8)
    assert provider.response_model(CALLS) == "gemini-2.5-flash" and provider.response_id(CALLS) == "r-1"
    assert provider.response_error(ERROR) == {"type": "RESOURCE_EXHAUSTED", "message": "Resource has been exhausted",
                                              "code": 429}  # fmt: skip
    assert provider.response_error(CALLS) is None
    assert provider.error_body(503, "busy") == {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}
    event = provider.error_event("overloaded_error", "busy")
    assert provider.response_error(provider.assemble_stream(parse_sse(event)))["message"] == "busy"


def test_a_made_up_response_and_overrides() -> None:
    message = {"role": "assistant", "content": [{"type": "thinking", "thinking": "想"}, {"type": "text", "text": "好"},
                                                {"type": "tool_use", "id": "gemini:f:0", "name": "f", "input": {}}]}
    body = provider.canonical_to_response(message, model="gemini-x", stop_reason="STOP")
    assert body["candidates"][0]["content"]["parts"] == [{"text": "想", "thought": True}, {"text": "好"},
                                                         {"functionCall": {"name": "f", "args": {}}}]  # fmt: skip
    assert provider.response_message(body) == message and provider.response_model(body) == "gemini-x"


@pytest.mark.parametrize("reply", [
    text_reply("一个很长的回答，分成好几段送出。", thinking="先想一想"),
    tool_use_reply([ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "上海"})], text="查"),
    message_reply(Thinking("只有思考，没有别的回答内容。")),
], ids=["text", "calls", "thinking"])  # fmt: skip
def test_a_stream_assembles_to_the_json_answer_and_renders_back(reply: Any) -> None:
    with FakeUpstream([reply, reply]) as up:
        body = {"contents": [{"role": "user", "parts": [{"text": "你好"}]}]}
        whole = httpx.post(up.url + "/v1beta/models/m:generateContent", json=body).json()
        sse = httpx.post(up.url + "/v1beta/models/m:streamGenerateContent?alt=sse", json=body).content
    events = parse_sse(sse)
    assert len(events) >= 2 and all("[DONE]" not in event.data for event in events)
    assembler = provider.stream_assembler()
    for event in events[:-1]:
        assembler.feed(event)
        assert not assembler.done
    assembler.feed(events[-1])
    assert assembler.done and provider.stream_may_end(sse.split(b"\r\n\r\n")[-2])
    assembled = assembler.body()
    assert {**assembled, "responseId": None} == {**whole, "responseId": None}
    assert provider.assemble_stream(parse_sse(provider.render_stream(assembled))) == assembled
