"""``tracekit show`` prints a readable timeline with Chinese kept as is."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tracekit.cli import cli
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
    assert "no readable trace record" in result.output
