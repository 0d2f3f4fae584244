"""A case's tool_intercept/tool_mock and transport faults applied to the MCP traffic itself: the agent's own MCP
client (the official SDK) receives the failure, and the trace records each injection."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp_helpers import server_command, tracekit, with_session

from tracekit.trace import load_trace

INTERCEPT = {
    "type": "tool_intercept",
    "intercept_tool": "maps_weather",
    "inject_tool_result": {"is_error": True, "content": "Error: 高德地图服务暂时不可用 (503)"},
}


async def call_weather_then_add(session: ClientSession) -> list[tuple[bool, str]]:
    weather = await session.call_tool("maps_weather", {"city": "北京"})
    total = await session.call_tool("add", {"a": 1, "b": 2})
    return [(bool(result.is_error), result.content[0].text) for result in (weather, total)]


def _trace(out: Path):  # type: ignore[no-untyped-def]
    [path] = sorted(out.glob("*.jsonl"))
    return load_trace(path)


def test_a_case_intercept_reaches_the_client_as_is_error(tmp_path: Path) -> None:
    case = tmp_path / "intercept.json"
    case.write_text(json.dumps(INTERCEPT, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "traces"
    command = tracekit("mcp", "record", "--out", str(out), "--case", str(case), "--", *server_command())
    seen = with_session(command, call_weather_then_add)
    assert seen == [(True, "Error: 高德地图服务暂时不可用 (503)"), (False, "3")]
    trace = _trace(out)
    [injection] = trace.kind("intercept")
    assert injection.mode == "tool_intercept" and injection.tool == "maps_weather" and injection.call_index == 0
    assert injection.original["content"][0]["text"].startswith("北京: 晴")  # what the server really said
    calls = trace.calls()
    assert calls[0].result.injected and calls[0].is_error and not calls[1].is_error


def test_a_case_intercept_applies_in_replay_too(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    with_session(tracekit("mcp", "record", "--out", str(out), "--", *server_command()), call_weather_then_add)
    case = tmp_path / "intercept.json"
    case.write_text(json.dumps(INTERCEPT, ensure_ascii=False), encoding="utf-8")
    replayed = with_session(tracekit("mcp", "replay", str(out), "--case", str(case), "--out", str(tmp_path / "r")),
                            call_weather_then_add)  # fmt: skip
    assert replayed == [(True, "Error: 高德地图服务暂时不可用 (503)"), (False, "3")]
    assert _trace(tmp_path / "r").kind("intercept")[0].mode == "tool_intercept"


def test_a_timeout_fault_is_an_is_error_result_and_the_server_never_sees_the_call(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    command = tracekit("mcp", "record", "--out", str(out), "--fault", "timeout@add#1", "--", *server_command())

    async def twice(session: ClientSession) -> list[tuple[bool, str]]:
        first = await session.call_tool("add", {"a": 1, "b": 2})
        second = await session.call_tool("add", {"a": 1, "b": 2})
        return [(bool(r.is_error), r.content[0].text) for r in (first, second)]

    first, second = with_session(command, twice)
    assert first[0] and "timed out" in first[1] and second == (False, "3")  # only the first call (#1)
    trace = _trace(out)
    [fault] = trace.kind("intercept")
    assert fault.mode == "fault" and fault.tool == "add" and fault.call_index == 0 and fault.is_error
    exchanges = [e for e in trace.kind("mcp_exchange") if e.method == "tools/call"]
    assert [e.fault for e in exchanges] == ["timeout", None]


def test_a_cut_fault_closes_the_connection(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    command = tracekit("mcp", "record", "--out", str(out), "--fault", "cut@add", "--", *server_command())

    async def cut(session: ClientSession) -> str:
        from mcp.shared.exceptions import MCPError

        with anyio.fail_after(60):  # a guard against a hang, not a timing assertion
            try:
                await session.call_tool("add", {"a": 1, "b": 2})
            except MCPError as exc:
                return str(exc)
        raise AssertionError("the call was answered through a cut connection")

    assert "closed" in with_session(command, cut).lower()
    assert _trace(out).kind("intercept")[0].fault["type"] == "cut"


def test_a_bad_fault_spec_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(tracekit("mcp", "record", "--out", str(tmp_path), "--fault", "explode", "--", "true"),
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 2 and "the type must be one of" in done.stderr and "Traceback" not in done.stderr


def test_a_library_case_runs_at_the_tool_layer(tmp_path: Path) -> None:
    """B2-FR-03 (the seeds' 故宫 weather case): its tool_intercept, read from the case file itself, reaches the
    agent's MCP client from the real server's call."""
    case = Path(__file__).resolve().parents[2] / "cases" / "b2" / "B2-FR-03.yaml"
    out = tmp_path / "traces"
    command = tracekit("mcp", "record", "--out", str(out), "--case", str(case), "--", *server_command())

    async def ask(session: ClientSession) -> tuple[bool, str]:
        result = await session.call_tool("maps_weather", {"city": "北京"})
        return bool(result.is_error), result.content[0].text

    is_error, text = with_session(command, ask)
    assert is_error and json.loads(text)["error"] == "INVALID_CITY_PARAMETER" and "故宫" in text
    trace = _trace(out)
    assert trace.header.meta["case"] == "B2-FR-03"
    assert trace.kind("intercept")[0].original["content"][0]["text"] == "北京: 晴 25°C x1"
