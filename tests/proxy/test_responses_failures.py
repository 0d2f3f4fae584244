"""The Responses API's failure paths through the proxy, each recorded and replayed as it happened: a stream
cut mid-event, an in-stream ``error`` event, a proxy ``stream_error`` fault, an incomplete response, and
intercepts on a ``previous_response_id`` chain (which sends only the new items)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records

LONG = "北京今天晴，最高气温二十五度，最低十二度，空气质量良，适合出行。"


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


def stream_text(url: str) -> str:
    with client(url).responses.stream(model="gpt-test", input="北京天气？") as stream:
        return stream.get_final_response().output_text


def test_a_cut_stream_is_cut_for_the_client_recorded_partial_and_replayed_cut(tmp_path: Path) -> None:
    cut = (httpx2.RemoteProtocolError, openai.APIConnectionError)
    with recording([text_reply(LONG, chunk_size=4).cut_after(6)], tmp_path) as (_, proxy), pytest.raises(cut):
        stream_text(proxy.url)
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["partial"] is True and call["error"]["type"] == "transport_error"
    assert call["sse"].count("\n\n") == 6, "the six whole events and the start of the seventh"
    grown = call["response"]["output"][0]["content"][0]["text"]
    assert grown and LONG.startswith(grown), "the text as far as it grew"
    assert of_kind(records, "assistant_message") == [], "a partial reply is not part of the conversation"
    with replaying(tmp_path) as replay, pytest.raises(cut):
        stream_text(replay.url)


def test_an_in_stream_error_event_is_passed_on_and_recorded(tmp_path: Path) -> None:
    script = [text_reply(LONG).error_after(4, type="overloaded_error", message="过载")]
    with recording(script, tmp_path) as (_, proxy), pytest.raises(openai.APIError, match="过载"):
        stream_text(proxy.url)
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["error"]["message"] == "过载" and call["partial"] is False
    assert "event: error" in call["sse"]
    assert of_kind(records, "error")[0]["source"] == "upstream"
    with replaying(tmp_path) as replay, pytest.raises(openai.APIError, match="过载"):
        stream_text(replay.url)


def test_a_stream_error_fault_ends_the_stream_with_the_responses_error_event(tmp_path: Path) -> None:
    case = {"faults": [{"type": "stream_error", "after_events": 3, "error_type": "overloaded_error", "message": "忙"}]}
    with recording([text_reply(LONG)], tmp_path, case=case) as (_, proxy), pytest.raises(openai.APIError, match="忙"):
        stream_text(proxy.url)
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["sse"].count("\n\n") == 4 and call["sse"].rstrip().splitlines()[-2] == "event: error"
    assert call["error"]["type"] == "overloaded_error"


def test_an_incomplete_response_is_a_reply_with_its_reason(tmp_path: Path) -> None:
    with recording([text_reply("被截断的回答", stop_reason="max_tokens")], tmp_path) as (_, proxy):
        response = client(proxy.url).responses.create(model="gpt-test", input="hi")
    assert response.status == "incomplete"
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["stop_reason"] == "max_output_tokens" and call.get("error") is None
    assert of_kind(records, "assistant_message")[0]["stop_reason"] == "max_output_tokens"
    with replaying(tmp_path) as replay:
        replayed = client(replay.url).responses.create(model="gpt-test", input="hi", stream=True)
        assert [event.type for event in replayed][-1] == "response.incomplete", "SSE made from the JSON recording"


def test_intercepts_reach_a_previous_response_id_chain(tmp_path: Path) -> None:
    """The continuation sends only its function_call_output; the call it answers is in the stored items."""
    case = {"type": "tool_intercept", "intercept_tool": "get_weather",
            "inject_tool_result": {"is_error": True, "content": "Error: 503"}}  # fmt: skip
    script = by_turn([tool_use_reply(ToolUse("get_weather", {"city": "北京"})), text_reply("服务不可用。")])

    def session(url: str) -> str:
        api = client(url)
        first = api.responses.create(model="gpt-test", input="北京天气？")
        call = first.output[0]
        assert call.type == "function_call"
        outputs: Any = [{"type": "function_call_output", "call_id": call.call_id, "output": "晴"}]
        return api.responses.create(model="gpt-test", previous_response_id=first.id, input=outputs).output_text

    with recording(script, tmp_path, case=case) as (upstream, proxy):
        assert session(proxy.url) == "服务不可用。"
        sent = upstream.requests_for("openai_responses")[-1].body
    assert sent["input"] == [{"type": "function_call_output", "call_id": "call_fake_0001", "output": "Error: 503"}]
    (records,) = trace_records(tmp_path)
    assert [c["stitched"] for c in of_kind(records, "model_call")] == ["new", "thread"]
    assert [(r["content"], r["injected"]) for r in of_kind(records, "tool_result")] == [("Error: 503", True)]
    (intercept,) = of_kind(records, "intercept")
    assert (intercept["tool"], intercept["original"], intercept["call_index"]) == ("get_weather", "晴", 0)
    with replaying(tmp_path, case=case) as replay:
        assert session(replay.url) == "服务不可用。"
        assert replay.proxy.misses == []
    assert json.loads(of_kind(records, "model_call")[0]["response"]["output"][0]["arguments"]) == {"city": "北京"}
