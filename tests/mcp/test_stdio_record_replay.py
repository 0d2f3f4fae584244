"""``tracekit mcp record -- CMD`` and ``tracekit mcp replay DIR`` with the official mcp SDK on both sides."""

from __future__ import annotations

from pathlib import Path

from mcp import ClientSession
from mcp_helpers import server_command, tracekit, weather_session, with_session

from tracekit.trace import load_trace


def _record(tmp_path: Path) -> tuple[Path, list[dict]]:
    out = tmp_path / "traces"
    marker = tmp_path / "server-started"
    seen = with_session(tracekit("mcp", "record", "--out", str(out), "--", *server_command()), weather_session,
                        env={"WEATHER_MARKER": str(marker)})  # fmt: skip
    assert marker.exists()  # the recorder really ran the server
    return out, seen


def test_record_relays_the_session_and_writes_the_tool_side(tmp_path: Path) -> None:
    out, seen = _record(tmp_path)
    direct = with_session(server_command(), weather_session)
    assert seen == direct  # the client got what the server says, unchanged
    [path] = sorted(out.glob("*.jsonl"))
    trace = load_trace(path)
    assert trace.header.source == "mcp" and trace.header.meta["side"] == "tool"
    exchanges = trace.kind("mcp_exchange")
    initialize = next(e for e in exchanges if e.method == "initialize")
    assert initialize.result["serverInfo"] == {"name": "weather-test", "version": "1.2.3"}
    listed = next(e for e in exchanges if e.method == "tools/list")
    assert {tool["name"] for tool in listed.result["tools"]} == {"maps_weather", "add", "echo"}
    assert "inputSchema" in listed.result["tools"][0]
    assert any(e.method == "notifications/initialized" for e in exchanges)
    calls = trace.calls()
    assert [(c.name, c.input) for c in calls] == [("maps_weather", {"city": "北京"}), ("add", {"a": 2, "b": 3}),
                                                   ("maps_weather", {"city": "Atlantis"}),
                                                   ("maps_weather", {"city": "北京"})]  # fmt: skip
    assert [c.is_error for c in calls] == [False, False, True, False]
    assert calls[0].result_text.startswith("北京: 晴")  # Chinese kept as it came
    assert all(c.call.side == "tool" and c.result.side == "tool" and c.result.latency_ms > 0 for c in calls)
    assert "北京" in path.read_text(encoding="utf-8")


def test_replay_answers_with_the_server_absent(tmp_path: Path) -> None:
    out, seen = _record(tmp_path)
    marker = tmp_path / "server-started"
    marker.unlink()
    replayed = with_session(tracekit("mcp", "replay", str(out)), weather_session,
                            env={"WEATHER_MARKER": str(marker)})  # fmt: skip
    assert replayed == seen
    assert not marker.exists()  # no server started


def test_a_replay_miss_names_the_nearest_recorded_call(tmp_path: Path) -> None:
    out, _ = _record(tmp_path)

    async def ask(session: ClientSession) -> str:
        from mcp.shared.exceptions import MCPError

        try:
            await session.call_tool("maps_weather", {"city": "上海"})
        except MCPError as exc:
            return str(exc)
        raise AssertionError("the replay answered a call it never recorded")

    message = with_session(tracekit("mcp", "replay", str(out)), ask)
    assert "no recording matches tools/call maps_weather" in message
    assert 'Nearest recorded call: maps_weather {"city":"北京"}' in message
    assert "first difference: root['city']: recorded '北京' != request '上海'" in message


def test_repeated_calls_are_answered_in_recorded_order(tmp_path: Path) -> None:
    out, _ = _record(tmp_path)

    async def twice(session: ClientSession) -> list[bool]:
        first = await session.call_tool("maps_weather", {"city": "Atlantis"})
        second = await session.call_tool("add", {"b": 3, "a": 2})  # argument order does not matter
        return [bool(first.is_error), bool(second.is_error), second.content[0].text == "5"]

    assert with_session(tracekit("mcp", "replay", str(out)), twice) == [True, False, True]


def test_a_tool_side_trace_alone_is_analyzed(tmp_path: Path) -> None:
    import orjson
    from click.testing import CliRunner

    from tracekit.cli import cli

    out, _ = _record(tmp_path)
    result = CliRunner().invoke(cli, ["analyze", str(out), "--json", str(tmp_path / "r.json")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [entry] = orjson.loads((tmp_path / "r.json").read_bytes())["traces"]
    assert entry["stats"]["tool_calls"] == 4 and entry["stats"]["tool_errors"] == 1
    assert [f["kind"] for f in entry["findings"]] == ["repeated_call"]  # 北京 asked twice with the same answer
    assert entry["tool_side"]["tool_errors"] == 1 and len(entry["tool_side"]["calls"]) == 4


def test_a_server_that_cannot_start_is_an_error_and_leaves_no_trace(tmp_path: Path) -> None:
    import subprocess

    command = tracekit("mcp", "record", "--out", str(tmp_path / "t"), "--", str(tmp_path / "no-such-server"))
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 2 and "cannot start" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").iterdir())
