"""OpenAI Responses provider: requests to canonical conversations, response <-> canonical, usage, errors.

Response bodies come from the scripted fake upstream through the openai SDK; the few edge bodies the fake
does not make (a built-in tool call, annotations, a refusal, unparseable arguments, a failed response) are
written below as dict literals after the API reference's examples, ids made up.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import openai as openai_sdk
import pytest
from deepdiff import DeepDiff

from tracekit.providers import openai_responses, parse_sse
from tracekit.providers.base import Continuation
from tracekit.testing import FakeUpstream, Thinking, ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import Usage
from tracekit.trace.builder import message_fingerprint

TOOLS: list[Any] = [{"type": "function", "name": "get_weather", "description": "weather",
                     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
                    {"type": "web_search"}]  # fmt: skip

SCRIPT = by_turn([
    tool_use_reply([ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "上海"})],
                   text="我查一下。", thinking=Thinking("先查两个城市")),
    text_reply("北京晴，上海多云。"),
])  # fmt: skip

EDGE_BODIES: dict[str, dict[str, Any]] = {
    "web_search_annotations_refusal": {
        "id": "resp_edge_1", "object": "response", "created_at": 1775520000, "status": "completed",
        "error": None, "incomplete_details": None, "model": "gpt-test",
        "output": [
            {"id": "ws_1", "type": "web_search_call", "status": "completed",
             "action": {"type": "search", "query": "北京 天气"}},
            {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [
                {"type": "output_text", "text": "北京晴。", "logprobs": [],
                 "annotations": [{"type": "url_citation", "start_index": 0, "end_index": 3,
                                  "url": "https://example.com/weather", "title": "天气"}]},
                {"type": "refusal", "refusal": "其余的我不能回答。"}]},
        ],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [{"type": "web_search"}],
        "usage": {"input_tokens": 120, "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 100},
                  "output_tokens": 30,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 150},
    },
    "bad_arguments_incomplete": {
        "id": "resp_edge_2", "object": "response", "created_at": 1775520000, "status": "incomplete",
        "error": None, "incomplete_details": {"reason": "max_output_tokens"}, "model": "gpt-test",
        "output": [{"id": "fc_1", "type": "function_call", "status": "incomplete", "call_id": "call_1",
                    "name": "book", "arguments": '{"flight": "CA12'}],
        "usage": None,
    },
}  # fmt: skip

FAILED = {"id": "resp_edge_3", "object": "response", "created_at": 1775520000, "status": "failed",
          "error": {"code": "server_error", "message": "The model failed to respond."},
          "incomplete_details": None, "model": "gpt-test", "output": [], "usage": None}  # fmt: skip


def session_bodies() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A two-turn function-calling session through the openai SDK: the requests as sent, the responses."""
    with FakeUpstream(SCRIPT) as upstream:
        client = openai_sdk.OpenAI(base_url=upstream.openai_url, api_key="k", max_retries=0)
        first = client.responses.create(model="gpt-test", instructions="你是天气助手。", input="北京和上海天气？",
                                        tools=TOOLS, include=["reasoning.encrypted_content"])  # fmt: skip
        outputs = [{"type": "function_call_output", "call_id": item.call_id, "output": "晴" if i == 0 else "多云"}
                   for i, item in enumerate(o for o in first.output if o.type == "function_call")]  # fmt: skip
        history = [{"role": "user", "content": "北京和上海天气？"}, *first.output, *outputs]
        second = client.responses.create(model="gpt-test", instructions="你是天气助手。", input=history,  # type: ignore[arg-type]
                                         tools=TOOLS)  # fmt: skip
        requests = [request.body for request in upstream.requests]
    return requests, [first.to_dict(mode="json"), second.to_dict(mode="json")]


@pytest.fixture(scope="module")
def session() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return session_bodies()


def test_string_input_and_instructions(session: Any) -> None:
    requests, _ = session
    system, messages = openai_responses.request_conversation(requests[0])
    assert system == "你是天气助手。"
    assert messages == [{"role": "user", "content": "北京和上海天气？"}]


def test_re_sent_history_groups_items_into_turns(session: Any) -> None:
    requests, _ = session
    _, messages = openai_responses.request_conversation(requests[1])
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assistant = messages[1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use", "tool_use"]
    assert assistant[0]["thinking"] == "先查两个城市"
    assert assistant[0]["reasoning_item"]["encrypted_content"], "the encrypted reasoning is kept whole"
    assert [(b["name"], b["input"]) for b in assistant[2:]] == [("get_weather", {"city": "北京"}),
                                                               ("get_weather", {"city": "上海"})]
    results = messages[2]["content"]
    assert [(r["type"], r["tool_use_id"], r["content"]) for r in results] == [
        ("tool_result", assistant[2]["id"], "晴"), ("tool_result", assistant[3]["id"], "多云")]


def test_reply_reads_as_the_turn_the_client_sends_back(session: Any) -> None:
    """What session stitching relies on: the reply and its echo in the next request mean the same."""
    requests, responses = session
    reply = openai_responses.response_message(responses[0])
    assert reply is not None
    _, messages = openai_responses.request_conversation(requests[1])
    assert message_fingerprint(reply) == message_fingerprint(messages[1])
    assert message_fingerprint(reply) != message_fingerprint(openai_responses.response_message(responses[1]) or {})


def test_input_parts_images_and_system_messages() -> None:
    body = {"model": "m", "input": [
        {"role": "developer", "content": "只用中文。"},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "这是哪里？"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"},
            {"type": "input_image", "file_id": "file_1"}]},
        {"role": "assistant", "content": "故宫。"},
        {"role": "system", "content": "之后简短回答。"},
        {"role": "user", "content": "谢谢"},
    ], "instructions": "你是导游。"}  # fmt: skip
    system, messages = openai_responses.request_conversation(body)
    assert system == [{"type": "text", "text": "你是导游。"}, {"type": "text", "text": "只用中文。"}]
    assert messages[0]["content"] == [
        {"type": "text", "text": "这是哪里？"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
         "detail": "low"},
        {"type": "input_image", "file_id": "file_1"},
    ]
    assert messages[1:] == [{"role": "assistant", "content": [{"type": "text", "text": "故宫。"}]},
                            {"role": "system", "content": "之后简短回答。"},
                            {"role": "user", "content": "谢谢"}]  # fmt: skip


def test_built_in_tool_items_and_unparseable_arguments_are_kept() -> None:
    body = {"input": [
        {"role": "user", "content": "订票"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"type": "function_call", "call_id": "call_9", "name": "book", "arguments": '{"flight": "CA12'},
        {"type": "function_call_output", "call_id": "call_9", "output": [{"type": "input_text", "text": "已订"}]},
        {"type": "item_reference", "id": "msg_0"},
    ]}  # fmt: skip
    _, messages = openai_responses.request_conversation(body)
    assert messages[1]["content"] == [
        body["input"][1],
        {"type": "tool_use", "id": "call_9", "name": "book", "input": '{"flight": "CA12', "_input_parse_error": True},
    ]
    assert messages[2]["content"] == [{"type": "tool_result", "tool_use_id": "call_9",
                                       "content": [{"type": "text", "text": "已订"}]}]  # fmt: skip
    assert messages[3] == {"role": "user", "content": [{"type": "item_reference", "id": "msg_0"}]}


def all_bodies(session: Any) -> list[dict[str, Any]]:
    return [*session[1], *EDGE_BODIES.values(), FAILED]


def test_body_canonical_body_round_trip(session: Any) -> None:
    for body in all_bodies(session):
        message, meta = openai_responses.response_to_canonical(body)
        assert DeepDiff(body, openai_responses.canonical_to_response(message, meta)) == {}, body["id"]
        assert list(openai_responses.canonical_to_response(message, meta)) == list(body), "key order kept"


def test_edited_reply_renders_new_output_items() -> None:
    body = EDGE_BODIES["web_search_annotations_refusal"]
    message, meta = openai_responses.response_to_canonical(body)
    assert message is not None
    assert [b["type"] for b in message["content"]] == ["web_search_call", "text", "refusal"]
    message["content"][1]["text"] = "北京多云。"
    rendered = openai_responses.canonical_to_response(message, meta)
    assert rendered["output"][0] == body["output"][0]
    assert rendered["output"][1]["content"] == [
        {"type": "output_text", "text": "北京多云。", "annotations": []},
        {"type": "refusal", "refusal": "其余的我不能回答。"},
    ]
    assert openai_responses.response_message(rendered) == message


def test_canonical_without_meta_is_a_valid_response_that_reads_back() -> None:
    message = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "想一想"},
        {"type": "text", "text": "查一下"},
        {"type": "tool_use", "id": "call_1", "name": "search", "input": {"q": "北京"}},
    ]}  # fmt: skip
    usage = Usage(input_tokens=10, cache_read_input_tokens=90, output_tokens=5)
    body = openai_responses.canonical_to_response(message, model="gpt-x", usage=usage, stop_reason="max_output_tokens")
    parsed = openai_sdk.types.responses.Response.model_validate(body)
    assert [item.type for item in parsed.output] == ["reasoning", "message", "function_call"]
    assert parsed.usage is not None and parsed.usage.input_tokens == 100
    assert parsed.status == "incomplete" and openai_responses.response_stop_reason(body) == "max_output_tokens"
    read_back = openai_responses.response_message(body)
    assert read_back is not None
    assert [{k: v for k, v in b.items() if k != "reasoning_item"} for b in read_back["content"]] == message["content"]


def test_usage_splits_cached_input_and_keeps_reasoning_tokens(session: Any) -> None:
    usage = openai_responses.response_usage(EDGE_BODIES["web_search_annotations_refusal"])
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (20, 100, 30)
    first = session[1][0]
    usage = openai_responses.response_usage(first)
    assert usage.input_tokens == first["usage"]["input_tokens"]
    assert (usage.model_extra or {})["output_tokens_details"]["reasoning_tokens"] > 0
    assert openai_responses.response_usage({"usage": None}) == Usage()


def test_stop_reason_status_and_errors() -> None:
    assert openai_responses.response_stop_reason(EDGE_BODIES["web_search_annotations_refusal"]) == "completed"
    assert openai_responses.response_stop_reason(EDGE_BODIES["bad_arguments_incomplete"]) == "max_output_tokens"
    assert openai_responses.response_error(EDGE_BODIES["bad_arguments_incomplete"]) is None
    assert openai_responses.response_error(FAILED) == FAILED["error"]
    assert openai_responses.response_message(FAILED) is None
    error = openai_responses.error_body(429, "slow down")
    assert error == {"error": {"message": "slow down", "type": "rate_limit_exceeded", "param": None, "code": None}}
    assert openai_responses.response_error(error) == error["error"]
    assert openai_responses.canonical_to_response(None, copy.deepcopy(error)) == error
    with pytest.raises(ValueError):
        openai_responses.canonical_to_response(None, {"id": "resp_1", "object": "response"})


def test_arguments_are_parsed_once_per_call(session: Any) -> None:
    reply = openai_responses.response_message(session[1][0])
    assert reply is not None
    calls = [b for b in reply["content"] if b["type"] == "tool_use"]
    raw = [item["arguments"] for item in session[1][0]["output"] if item["type"] == "function_call"]
    assert [c["input"] for c in calls] == [json.loads(text) for text in raw]


def test_continuation_items_and_stream_ends(session: Any) -> None:
    requests, responses = session
    assert openai_responses.request_continuation(requests[0]) == Continuation(True, None)
    chained = {"input": [], "previous_response_id": responses[0]["id"]}
    assert openai_responses.request_continuation(chained) == Continuation(True, responses[0]["id"])
    assert openai_responses.request_continuation({**chained, "store": False}).kept is False
    assert openai_responses.request_items({"input": "hi"}) == [{"role": "user", "content": "hi"}]
    assert openai_responses.request_items({}) is None
    assert openai_responses.with_request_items(requests[1], ["x"])["input"] == ["x"]
    assert openai_responses.reply_items(responses[0]) == responses[0]["output"]
    assert openai_responses.reply_items(FAILED) == []
    assert openai_responses.response_id(responses[1]) == responses[1]["id"]
    rendered = openai_responses.render_stream(responses[0])
    frames = rendered.split(b"\n\n")
    assert openai_responses.stream_may_end(frames[-2]) and not any(
        openai_responses.stream_may_end(frame) for frame in frames[:-2])


def test_error_event_assembles_to_the_error_body() -> None:
    event = openai_responses.error_event("overloaded_error", "busy")
    assert openai_responses.stream_may_end(event)
    body = openai_responses.assemble_stream(parse_sse(event))
    expected = openai_responses.error_body(529, "busy", "overloaded_error")["error"]
    assert openai_responses.response_error(body) == expected
