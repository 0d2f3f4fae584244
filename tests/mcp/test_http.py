"""``tracekit mcp record --upstream URL`` in front of a streamable-HTTP server, and ``tracekit mcp replay --port``,
with the official mcp SDK's streamable-HTTP client."""

from __future__ import annotations

from pathlib import Path

from mcp import ClientSession
from mcp_helpers import HERE, Running, tracekit, weather_session, with_http_session

from tracekit.trace import load_trace

TOKEN = "tkmcp-9f2c4e7a1b3d5f60-secret"


def _server(tmp_path: Path) -> Running:
    import sys

    marker = tmp_path / "server-started"
    return Running([sys.executable, str(HERE / "weather_server.py"), "http"], banner_on="stdout",
                   env={"WEATHER_MARKER": str(marker)})  # fmt: skip


async def leak_and_call(session: ClientSession) -> list[dict]:
    seen = await weather_session(session)
    echoed = await session.call_tool("echo", {"text": f"my token is {TOKEN}"})
    return [*seen, echoed.model_dump(mode="json", exclude_none=True)]


def test_record_over_streamable_http_relays_sessions_and_keeps_the_token_off_disk(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    with _server(tmp_path) as server:
        upstream = f"http://127.0.0.1:{server.port}/mcp"
        with Running(tracekit("mcp", "record", "--out", str(out), "--upstream", upstream, "--port", "0")) as relay:
            assert relay.banner.startswith("tracekit mcp record: listening on http://127.0.0.1:")
            seen = with_http_session(relay.url("/mcp"), leak_and_call, headers={"Authorization": f"Bearer {TOKEN}"})
            direct = with_http_session(upstream, leak_and_call)
    assert seen == direct  # relayed unchanged: the client got what the server said, token included
    assert TOKEN in seen[-1]["content"][0]["text"]
    written = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file() and out in path.parents)
    assert written and TOKEN.encode() not in written and TOKEN[:16].encode() not in written
    [path] = sorted(out.glob("*.jsonl"))
    trace = load_trace(path)
    assert trace.header.meta["transport"] == "streamable-http"
    assert [c.name for c in trace.calls()] == ["maps_weather", "add", "maps_weather", "maps_weather", "echo"]
    sessions = {e.session for e in trace.kind("mcp_exchange") if e.method == "tools/call"}
    assert len(sessions) == 1 and None not in sessions  # the Mcp-Session-Id the server gave
    assert "[REDACTED]" in trace.calls()[-1].result_text


def test_replay_over_http_with_the_server_absent(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    with _server(tmp_path) as server:
        upstream = f"http://127.0.0.1:{server.port}/mcp"
        with Running(tracekit("mcp", "record", "--out", str(out), "--upstream", upstream, "--port", "0")) as relay:
            seen = with_http_session(relay.url("/mcp"), weather_session)
    marker = tmp_path / "server-started"
    marker.unlink()
    with Running(tracekit("mcp", "replay", str(out), "--port", "0")) as replay:
        assert replay.banner.startswith("tracekit mcp replay: listening on http://127.0.0.1:")
        replayed = with_http_session(replay.url("/mcp"), weather_session)
    assert replayed == seen
    assert not marker.exists()


def test_record_over_the_older_http_sse_transport(tmp_path: Path) -> None:
    """The 2024-11-05 HTTP+SSE transport: a GET event stream that names a POST endpoint, answers on the stream."""
    import sys

    import anyio
    from mcp.client.sse import sse_client

    async def over_sse(url: str) -> list[dict]:
        async with sse_client(url, headers={"Authorization": f"Bearer {TOKEN}"}) as (read, write), ClientSession(
            read, write
        ) as session:
            await session.initialize()
            return await leak_and_call(session)

    out = tmp_path / "traces"
    with Running([sys.executable, str(HERE / "weather_server.py"), "sse"], banner_on="stdout") as server:
        upstream = f"http://127.0.0.1:{server.port}/sse"
        with Running(tracekit("mcp", "record", "--out", str(out), "--upstream", upstream, "--port", "0")) as relay:
            seen = anyio.run(over_sse, relay.url("/sse"))
        direct = anyio.run(over_sse, upstream)
    assert seen == direct
    written = b"".join(path.read_bytes() for path in out.rglob("*") if path.is_file())
    assert TOKEN.encode() not in written
    traces = [load_trace(path) for path in sorted(out.glob("*.jsonl"))]
    calls = [call.name for trace in traces for call in trace.calls()]
    assert calls == ["maps_weather", "add", "maps_weather", "maps_weather", "echo"]


def test_a_fault_over_http_reaches_the_client_as_is_error(tmp_path: Path) -> None:
    out = tmp_path / "traces"

    async def call(session: ClientSession) -> list[tuple[bool, str]]:
        first = await session.call_tool("add", {"a": 1, "b": 2})
        second = await session.call_tool("add", {"a": 1, "b": 2})
        return [(bool(r.is_error), r.content[0].text) for r in (first, second)]

    with _server(tmp_path) as server:
        upstream = f"http://127.0.0.1:{server.port}/mcp"
        command = tracekit("mcp", "record", "--out", str(out), "--upstream", upstream, "--port", "0",
                           "--fault", "error:上游超时@add#1")  # fmt: skip
        with Running(command) as relay:
            seen = with_http_session(relay.url("/mcp"), call)
    assert seen == [(True, "上游超时"), (False, "3")]
    [path] = sorted(out.glob("*.jsonl"))
    assert load_trace(path).kind("intercept")[0].fault["type"] == "error"


def test_each_mcp_session_gets_its_own_trace(tmp_path: Path) -> None:
    out = tmp_path / "traces"

    def adder(a: int):  # type: ignore[no-untyped-def]
        async def call(session: ClientSession) -> str:
            return (await session.call_tool("add", {"a": a, "b": 0})).content[0].text

        return call

    with _server(tmp_path) as server:
        upstream = f"http://127.0.0.1:{server.port}/mcp"
        with Running(tracekit("mcp", "record", "--out", str(out), "--upstream", upstream, "--port", "0")) as relay:
            assert [with_http_session(relay.url("/mcp"), adder(a)) for a in (1, 2)] == ["1", "2"]
    traces = [load_trace(path) for path in sorted(out.glob("*.jsonl"))]
    inputs = sorted(tuple(call.input["a"] for call in trace.calls()) for trace in traces)
    assert inputs == [(1,), (2,)]
    sessions = [{e.session for e in trace.kind("mcp_exchange") if e.method == "tools/call"} for trace in traces]
    assert all(len(s) == 1 for s in sessions) and sessions[0] != sessions[1]
