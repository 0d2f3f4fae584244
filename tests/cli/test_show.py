"""``tracekit show`` prints a readable timeline with Chinese kept as is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
from click.testing import CliRunner

from tracekit.cli import cli
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import Header, ToolCall, ToolResult, UserMessage, write_trace


def test_show_prints_chinese_and_marks_errors(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", [
        Header(trace_id="t", source="test"),
        UserMessage(message_index=0, content="查一下明天北京飞成都的机票"),
        ToolCall(index=0, name="search_flights", input={"origin": "北京"}, message_index=1),
        ToolResult(call_index=0, content="Error: 服务暂时不可用" + "很长" * 200, is_error=True, message_index=2),
    ])
    result = CliRunner().invoke(cli, ["show", str(path), "--width", "60"])
    assert result.exit_code == 0, result.output
    assert "查一下明天北京飞成都的机票" in result.output
    assert '→ #0 search_flights({"origin":"北京"})' in result.output
    assert "✗ error Error: 服务暂时不可用" in result.output
    assert "\\u" not in result.output
    assert max(len(line) for line in result.output.splitlines()) < 100


def test_show_unreadable_file_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = CliRunner().invoke(cli, ["show", str(empty)])
    assert result.exit_code == 2
    assert result.output == f"Error: {empty}: not a trace: the file is empty\n"


def _trace(path: Path, trace_id: str, question: str) -> Path:
    return write_trace(path, [Header(trace_id=trace_id, source="test"), UserMessage(message_index=0, content=question)])


def test_show_a_folder_shows_each_trace_in_it(tmp_path: Path) -> None:
    _trace(tmp_path / "a.jsonl", "trace-a", "北京天气")
    _trace(tmp_path / "sub" / "b.jsonl", "trace-b", "上海天气")
    result = CliRunner().invoke(cli, ["show", str(tmp_path)])
    assert result.exit_code == 0, result.output
    shown = [line.split()[1] for line in result.output.splitlines() if line.startswith("trace ")]
    assert shown == ["trace-a", "trace-b"]
    assert "北京天气" in result.output and "上海天气" in result.output


def test_show_a_folder_without_traces_says_so_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a trace")
    result = CliRunner().invoke(cli, ["show", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output == f"Error: no trace files found in {tmp_path} (a trace file ends in .jsonl)\n"


def test_show_a_file_that_is_not_a_trace_gives_one_line_and_exit_2(tmp_path: Path) -> None:
    other = tmp_path / "settings.json"
    other.write_bytes(b'{\n  "theme": "dark",\n  "width": 120\n}\n')
    result = CliRunner().invoke(cli, ["show", str(other)])
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert line.startswith(f"Error: {other}: not a trace but a JSON object with keys theme, width")
    assert "tracekit import --help" in line


def test_show_a_folder_with_one_bad_trace_shows_the_others_and_exits_2(tmp_path: Path) -> None:
    _trace(tmp_path / "a.jsonl", "trace-a", "北京天气")
    (tmp_path / "b.jsonl").write_bytes(b'{"kind": "header", "format": 1, "trace_id": null}\n')
    result = CliRunner().invoke(cli, ["show", str(tmp_path)])
    assert result.exit_code == 2
    assert "trace trace-a" in result.stdout
    assert result.stderr == (
        f"Error: {tmp_path / 'b.jsonl'}:1: invalid trace header: field trace_id: Input should be a valid string, "
        'got null; the first line of a trace is its header (kind "header", format, trace_id: a string): '
        "fix that line or record the trace again\n"
    )


def test_show_keeps_the_recorded_order_of_thinking_text_and_tool_use(tmp_path: Path) -> None:
    script = by_turn([tool_use_reply(ToolUse("get_weather", {"city": "北京"}), text="我查一下。", thinking="先查北京"),
                      text_reply("北京晴。")])  # fmt: skip
    with FakeUpstream(script) as upstream, RunningProxy(
        ProxyConfig(upstream=upstream.url, out_dir=tmp_path / "t", redactor=Redactor())
    ) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "北京天气？"}]
        reply = client.messages.create(model="m", max_tokens=100, messages=messages)
        assert [block.type for block in reply.content] == ["thinking", "text", "tool_use"]
        messages += [{"role": "assistant", "content": [block.model_dump() for block in reply.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": reply.content[2].id,
                                                   "content": "晴"}]}]  # fmt: skip
        client.messages.create(model="m", max_tokens=100, messages=messages)
    (trace,) = (tmp_path / "t").glob("*.jsonl")
    result = CliRunner().invoke(cli, ["show", str(trace)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    thinking = next(n for n, line in enumerate(lines) if "(thinking) 先查北京" in line)
    text = next(n for n, line in enumerate(lines) if "assistant 我查一下。" in line)
    call = next(n for n, line in enumerate(lines) if "→ #0 get_weather" in line)
    assert thinking < text < call
