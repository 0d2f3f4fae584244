"""anthropic-messages importer: the seeds' injected history plus the agent's turns, checked input."""

from __future__ import annotations

from pathlib import Path

import pytest
from importer_support import assert_refused_at, write_json

from tracekit.errors import ImportFormatError
from tracekit.importers import import_anthropic_messages, write_traces
from tracekit.trace import ToolCall, ToolResult, load_trace

# Written for this test in the shape of the seeds' "messages 注入" blocks: an injected history (a
# search, its result, the agent's answer, the user's correction), then the agent's own turns.
HISTORY = [
    {"role": "user", "content": "查一下北京到成都的机票，5 月 1 号"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "好的，为您查询。"},
        {"type": "tool_use", "id": "toolu_h1", "name": "search_flights",
         "input": {"origin": "北京", "destination": "成都", "date": "2026-05-01"}},
    ]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_h1", "content": "{\"total\": 1}"}]},
    {"role": "assistant", "content": "找到 1 个航班。"},
    {"role": "user", "content": "不对，我说的是 5 月 10 号"},
]
AGENT = [
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_a1", "name": "search_flights",
         "input": {"origin": "北京", "destination": "成都", "date": "2026-05-10"}},
        {"type": "tool_use", "id": "toolu_a2", "name": "get_weather", "input": {"city": "成都"}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_a2", "content": "Error: timeout", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_a1", "content": [{"type": "text", "text": "{\"total\": 2}"}]},
    ]},
    {"role": "assistant", "content": "5 月 10 日有 2 个航班。"},
]


def _write(tmp_path: Path, value: object, name: str = "B2-PC-08.json") -> Path:
    return write_json(tmp_path / name, value)


def test_list_of_messages_becomes_one_trace(tmp_path: Path) -> None:
    path = _write(tmp_path, HISTORY + AGENT)
    [imported] = import_anthropic_messages([path], case_id="B2-PC-08")
    [written] = write_traces([imported], tmp_path / "out")
    assert written.name == "B2-PC-08.jsonl"
    assert "成都".encode() in written.read_bytes(), "Chinese is written as UTF-8, not escaped"
    trace = load_trace(written)
    assert trace.header.case_id == "B2-PC-08"
    assert trace.header.source == "import:anthropic-messages"
    calls = trace.calls()
    assert [(c.name, c.input.get("date")) for c in calls] == [
        ("search_flights", "2026-05-01"), ("search_flights", "2026-05-10"), ("get_weather", None)]
    assert [c.is_error for c in calls] == [False, False, True], "results pair by tool_use_id, not order"
    assert [c.history for c in trace.calls(history_messages=len(HISTORY))] == [True, False, False]
    assert trace.stats().tool_calls == 3 and trace.stats().tool_errors == 1
    assert trace.final_answer() == "5 月 10 日有 2 个航班。"
    assert not any(record.t for record in trace.records), "imported records carry no made-up times"


def test_object_with_system(tmp_path: Path) -> None:
    path = _write(tmp_path, {"system": "你是旅行助手。", "messages": HISTORY})
    [imported] = import_anthropic_messages([path])
    assert imported.records[1].kind == "system_message"
    assert imported.records[1].content == "你是旅行助手。"
    assert sum(isinstance(r, ToolCall) for r in imported.records) == 1
    assert sum(isinstance(r, ToolResult) for r in imported.records) == 1


def test_system_list_of_text_blocks(tmp_path: Path) -> None:
    system = [{"type": "text", "text": "你是旅行助手。", "cache_control": {"type": "ephemeral"}}]
    path = _write(tmp_path, {"system": system, "messages": HISTORY})
    [imported] = import_anthropic_messages([path])
    assert imported.records[1].kind == "system_message"
    assert "你是旅行助手。" in str(imported.records[1].content)


def test_files_with_the_same_name_get_distinct_ids(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    paths = [_write(tmp_path, HISTORY, "t.json"), _write(tmp_path / "a", HISTORY, "t.json")]
    assert [t.trace_id for t in import_anthropic_messages(paths)] == ["t", "t-2"]


@pytest.mark.parametrize(("value", "where"), [
    ({"msgs": []}, 'expected a list of messages or an object with "messages"'),
    ({"messages": {}}, "messages: expected a list of messages, got object"),
    ([{"role": "system", "content": "x"}], "messages[0].role: expected 'user' or 'assistant', got 'system'"),
    ([{"role": "user"}], 'messages[0]: missing "content"'),
    ([*HISTORY[:3], {"role": "assistant", "content": 5}], "messages[3].content: expected a string or a list"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]}],
     'messages[0].content[0]: tool_use without a string "name"'),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}],
     "messages[0].content[0].is_error: expected true or false, got string"),
    ([{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}],
     "messages[0].content[0]: tool_result blocks belong in user messages"),
    ({"system": [None], "messages": HISTORY}, "system[0]: expected a text block"),
    ({"system": [{"type": "text", "text": "x"}, "文本"], "messages": HISTORY}, "system[1]: expected a text block"),
    ({"system": [{"type": "image"}], "messages": HISTORY}, "system[0]: expected a text block"),
    ({"system": [{"type": "text", "text": 3}], "messages": HISTORY}, "system[0].text: expected a string, got number"),
])
def test_bad_input_names_file_and_position(tmp_path: Path, value: object, where: str) -> None:
    path = _write(tmp_path, value, "bad.json")
    assert_refused_at(path, where, lambda: import_anthropic_messages([path]))


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[{"role": "user",', encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"broken\.json: not valid JSON"):
        import_anthropic_messages([path])


def test_case_id_is_checked_against_the_library(tmp_path: Path) -> None:
    pytest.importorskip("tracekit.cases.loader")
    library = Path(__file__).resolve().parents[2] / "cases"
    if not (library / "b2" / "B2-PC-08.yaml").exists():
        pytest.skip("case library not in this checkout")
    path = _write(tmp_path, HISTORY)
    assert import_anthropic_messages([path], case_id="B2-PC-08", cases_dir=library)[0].header.case_id == "B2-PC-08"
    with pytest.raises(ImportFormatError, match=r"--case B2-PC-99: no such case .*known: B2-PC-01"):
        import_anthropic_messages([path], case_id="B2-PC-99", cases_dir=library)
