"""A Node MCP server from npm (``@modelcontextprotocol/server-everything``, the MCP project's reference server)
recorded behind ``tracekit mcp record`` and replayed by ``tracekit mcp replay`` without it, with the official
Python SDK as the client: tools (text, image), progress notifications, resources and prompts.

npm installs the server into a temporary folder (the registry must be reachable); skipped when npm is absent.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))  # the MCP tests' helpers
from mcp_helpers import tracekit, with_session

from tracekit.trace import load_trace

PACKAGE = "@modelcontextprotocol/server-everything"


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The reference server's stdio command, installed with npm into a temporary folder."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the Node MCP server cannot be installed")
    prefix = tmp_path_factory.mktemp("npm")
    done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", PACKAGE],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"npm could not install {PACKAGE} (no registry?): {done.stderr.strip()[-300:]}")
    return [str(prefix / "node_modules" / ".bin" / "mcp-server-everything"), "stdio"]


async def tour(session: ClientSession) -> list[Any]:
    """One session over what the reference server offers."""
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    seen: list[Any] = [sorted(tool.name for tool in (await session.list_tools()).tools)]
    for name, arguments in [("echo", {"message": "你好，MCP"}), ("get-sum", {"a": 2, "b": 3}),
                            ("get-tiny-image", {}), ("echo", {"message": "你好，MCP"})]:  # fmt: skip
        seen.append((await session.call_tool(name, arguments)).model_dump(mode="json", exclude_none=True))
    long = await session.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                   progress_callback=on_progress)  # fmt: skip
    seen.append([long.model_dump(mode="json", exclude_none=True), progress])
    resources = (await session.list_resources()).resources
    seen.append((await session.read_resource(resources[0].uri)).model_dump(mode="json", exclude_none=True))
    seen.append(sorted(prompt.name for prompt in (await session.list_prompts()).prompts))
    return seen


def test_a_node_server_recorded_then_replayed_without_it(everything: list[str], tmp_path: Path) -> None:
    out = tmp_path / "traces"
    recorded = with_session(tracekit("mcp", "record", "--out", str(out), "--", *everything), tour)
    assert recorded[1]["content"][0]["text"] == "Echo: 你好，MCP"
    assert "image" in [block["type"] for block in recorded[3]["content"]], recorded[3]
    assert recorded[5][1] == [1.0, 2.0, 3.0]  # progress notifications relayed to the client
    [path] = sorted(out.glob("*.jsonl"))
    trace = load_trace(path)
    methods = {exchange.method for exchange in trace.kind("mcp_exchange")}
    assert {"initialize", "tools/list", "tools/call", "notifications/progress", "resources/list",
            "resources/read", "prompts/list"} <= methods  # fmt: skip
    initialize = next(e for e in trace.kind("mcp_exchange") if e.method == "initialize")
    assert initialize.result["serverInfo"]["name"] == "mcp-servers/everything"
    assert [c.name for c in trace.calls()][:3] == ["echo", "get-sum", "get-tiny-image"]

    replayed = with_session(tracekit("mcp", "replay", str(out)), tour)
    assert replayed == recorded  # progress notifications included, under the replayed request's token
