"""openai-messages importer: chat messages to a trace, checked input."""

from __future__ import annotations

from pathlib import Path

import pytest
from importer_support import assert_refused_at, write_json

from tracekit.importers import import_openai_messages, write_traces
from tracekit.trace import SystemMessage, load_trace

# Written for this test: a system prompt, a user turn with an image, parallel tool calls (one with
# arguments that are not JSON) answered by consecutive tool messages, and the final answer.
MESSAGES = [
    {"role": "system", "content": "你是地图助手。"},
    {"role": "user", "content": [
        {"type": "text", "text": "这张图是哪里？附近有什么餐厅？"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "recognize_place", "arguments": "{}"}},
        {"id": "call_2", "type": "function", "function": {"name": "search_poi", "arguments": "{\"kind\": \"餐厅\""}},
    ]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"place\": \"西湖\"}"},
    {"role": "tool", "tool_call_id": "call_2", "content": "Error: bad arguments"},
    {"role": "assistant", "content": "这是杭州西湖。"},
]


def _write(tmp_path: Path, value: object, name: str = "chat.json") -> Path:
    return write_json(tmp_path / name, value)


@pytest.mark.parametrize("wrap", [False, True])
def test_messages_become_one_trace(tmp_path: Path, wrap: bool) -> None:
    path = _write(tmp_path, {"messages": MESSAGES} if wrap else MESSAGES)
    [written] = write_traces(import_openai_messages([path], case_id="B2-MM-01"), tmp_path / "out")
    trace = load_trace(written)
    assert trace.header.case_id == "B2-MM-01" and trace.header.provider == "openai"
    assert trace.of_kind(SystemMessage)[0].content == "你是地图助手。"
    calls = trace.calls()
    assert [(c.name, c.call.input_parse_error) for c in calls] == [("recognize_place", False), ("search_poi", True)]
    assert calls[1].input == '{"kind": "餐厅"'
    assert [c.result_text for c in calls] == ['{"place": "西湖"}', "Error: bad arguments"]
    assert trace.stats().tool_errors == 0, "plain chat messages carry no error flag; only tau-bench reads 'Error:'"
    assert trace.final_answer() == "这是杭州西湖。"
    image = trace.records[1].content[1]
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


@pytest.mark.parametrize(("value", "where"), [
    ("hello", "expected a list of messages, got string"),
    ([{"role": "robot", "content": "x"}], "messages[0].role: expected one of system"),
    ([{"role": "user", "content": 3}], "messages[0].content: expected a string, a list of parts or null, got number"),
    ([{"role": "user", "content": ["x"]}], "messages[0].content[0]: expected a content part"),
    ([{"role": "tool", "content": "x"}], 'messages[0]: tool message without a string "tool_call_id"'),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [{"id": "c"}]}],
     "messages[1].tool_calls[0]: expected"),
    ([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 3}}]}],
     "messages[0].tool_calls[0].function.arguments: expected a JSON string, got number"),
    ([{"role": "assistant", "tool_calls": [{"id": [], "function": {"name": "f", "arguments": "{}"}}]}],
     "messages[0].tool_calls[0].id: expected a string, got array"),
    ([{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "c", "name": [], "content": "x"}],
     "messages[1].name: expected a string, got array"),
    ([{"role": "user", "content": "q"}, {"role": "function", "tool_call_id": 7, "content": "x"}],
     "messages[1].tool_call_id: expected a string, got number"),
    ([{"role": "user", "content": "q"}, {"role": "function", "name": {"a": 1}, "content": "x"}],
     "messages[1].name: expected a string, got object"),
])
def test_bad_input_names_file_and_position(tmp_path: Path, value: object, where: str) -> None:
    path = _write(tmp_path, value, "bad.json")
    assert_refused_at(path, where, lambda: import_openai_messages([path]))


def test_legacy_function_message_without_id_is_a_tool_result(tmp_path: Path) -> None:
    # The pre-tools shape: a "function" message names the function and carries no tool_call_id.
    legacy = [{"role": "user", "content": "天气？"}, {"role": "function", "name": "get_weather", "content": "晴"}]
    [imported] = import_openai_messages([_write(tmp_path, legacy)])
    [result] = [record for record in imported.records if record.kind == "tool_result"]
    assert result.name == "get_weather" and result.tool_use_id is None
