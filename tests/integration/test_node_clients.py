"""Node agent clients from npm through ``tracekit record`` (in front of the fake upstream), then through
``tracekit replay`` with the upstream stopped: the Anthropic and OpenAI Node SDKs, the Vercel AI SDK, Claude
Code (``claude -p``) and the Codex CLI (``codex exec``).

Each client runs a small tool-calling task; the fake upstream (``answer_by_tools``) calls the first tool it
knows in the request's ``tools`` once, then answers with text. Checks: every session is one trace holding
its model calls, tool calls and tool results; no key reaches the disk; replay gives the client identical
output. The Codex CLI is recorded twice, and each recording replays the other run.

npm installs the pinned versions (``NODE_PACKAGES``) into ``$TRACEKIT_NODE_CACHE`` (default
``~/.cache/tracekit/node-clients``), once; the tests skip, saying why, without npm or without the registry.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tracekit.testing import FakeRequest, FakeUpstream, ToolUse, text_reply, tool_use_reply

#: The versions these tests were run with (npm resolves nothing else).
NODE_PACKAGES = {
    "@anthropic-ai/sdk": "1.17.0",
    "openai": "6.49.0",
    "ai": "6.0.333",
    "@ai-sdk/openai": "3.0.141",
    "@ai-sdk/anthropic": "3.0.140",
    "zod": "4.6.7",
    "@anthropic-ai/claude-code": "2.1.197",
    "@openai/codex": "0.171.0",
}
SCRIPTS = Path(__file__).resolve().parent / "node_clients"
ANTHROPIC_KEY = "sk-ant-node-0123456789abcdefghijklmnop"
OPENAI_KEY = "sk-node-0123456789abcdefghijklmnopqrst"
FINAL = "北京今天晴。"

#: Tool name -> the input the fake upstream calls it with (the first of these a request offers is called).
TOOL_INPUTS: dict[str, dict[str, Any]] = {
    "get_weather": {"city": "北京"},
    "Bash": {"command": "echo 晴", "description": "Print the weather"},
    "shell": {"command": ["echo", "晴"]},
    "shell_command": {"command": "echo 晴"},
    "exec_command": {"cmd": "echo 晴"},
}


def _tool_names(request: FakeRequest) -> list[str]:
    tools = request.body.get("tools") if isinstance(request.body, dict) else None
    names = []
    for tool in tools or []:
        if isinstance(tool, dict):
            function = tool.get("function")
            names.append(function.get("name") if isinstance(function, dict) else tool.get("name"))
    return [name for name in names if isinstance(name, str)]


def _has_tool_result(request: FakeRequest) -> bool:
    for message in request.messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" or str(message.get("type", "")).endswith("_call_output"):
            return True
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return True
    return False


def answer_by_tools(request: FakeRequest) -> Any:
    """A sensible tool-calling conversation for any client: call the first known tool once, then answer."""
    if _has_tool_result(request):
        return text_reply(FINAL)
    for name in _tool_names(request):
        if name in TOOL_INPUTS:
            return tool_use_reply(ToolUse(name, TOOL_INPUTS[name]), text="我查一下。")
    return text_reply("天气查询")  # a side call with no tool (a title, a summary)


# -- npm and processes -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The pinned packages, installed with npm once into the cache folder."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("npm/node are not installed: the Node clients cannot be installed")
    prefix = Path(os.environ.get("TRACEKIT_NODE_CACHE", Path.home() / ".cache" / "tracekit" / "node-clients"))
    wanted = [f"{name}@{version}" for name, version in NODE_PACKAGES.items()]
    stamp = prefix / "installed.json"
    if not stamp.exists() or json.loads(stamp.read_text("utf-8")) != wanted:
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
                                   *wanted], capture_output=True, text=True, check=False, timeout=900)  # fmt: skip
        except subprocess.TimeoutExpired:
            pytest.skip("npm did not install the Node clients within 15 minutes (no registry?)")
        if done.returncode != 0:
            pytest.skip(f"npm could not install the Node clients (no registry?): {done.stderr.strip()[-300:]}")
        stamp.write_text(json.dumps(wanted), "utf-8")
    return prefix / "node_modules"


@contextmanager
def tracekit_server(*args: str) -> Iterator[tuple[str, list[str]]]:
    """``tracekit record|replay ... --port 0``: its URL, and (after the block) its stderr lines."""
    process = subprocess.Popen([sys.executable, "-m", "tracekit", *args, "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    lines: list[str] = []
    try:
        if "listening on" not in line:
            process.kill()
            raise AssertionError(f"tracekit did not start: {line!r} {process.communicate(timeout=10)[1]}")
        yield line.split()[-1], lines
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        lines.extend(err.splitlines())


def client_env(node_modules: Path, url: str, home: Path) -> dict[str, str]:
    """The environment of a Node client pointed at the proxy: fake keys, no telemetry, ``home`` emptied (the
    same path each run: Claude Code's system prompt names its memory folder under HOME)."""
    shutil.rmtree(home, ignore_errors=True)
    (home / ".codex").mkdir(parents=True)
    return {
        "PATH": f"{node_modules / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "NODE_PATH": str(node_modules),
        "TRACEKIT_PROXY_URL": url,
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "OPENAI_BASE_URL": url + "/v1",
        "OPENAI_API_KEY": OPENAI_KEY,
        "CODEX_API_KEY": OPENAI_KEY,
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def run_client(command: list[str], env: dict[str, str], cwd: Path) -> str:
    """Run a client to the end; its stdout (a failure shows its stderr)."""
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{command} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


Command = Callable[[str], list[str]]
"""The client's command line, given the proxy's URL."""


def record(node_modules: Path, tmp_path: Path, command: Command, name: str) -> tuple[str, Path]:
    """Run the client through ``tracekit record`` in front of a fresh fake upstream; its output, the traces."""
    out = tmp_path / f"{name}-traces"
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    with FakeUpstream(answer_by_tools) as upstream:
        with tracekit_server("record", "--upstream", upstream.url, "--out", str(out)) as (url, _):
            output = run_client(command(url), client_env(node_modules, url, tmp_path / "home"), work)
        assert upstream.requests, "the client reached the fake upstream"
    return output, out


def replay(node_modules: Path, tmp_path: Path, command: Command, traces: Path, name: str) -> tuple[str, list[str]]:
    """Run the client through ``tracekit replay`` of ``traces`` (no upstream); its output, replay's log."""
    with tracekit_server("replay", str(traces)) as (url, replay_log):
        output = run_client(command(url), client_env(node_modules, url, tmp_path / "home"), tmp_path / "work")
    return output, replay_log


def record_and_replay(node_modules: Path, tmp_path: Path, command: Command,
                      ) -> tuple[str, str, list[Path], list[str]]:  # fmt: skip
    """Run the client through record (fake upstream behind it), then through replay (upstream stopped)."""
    recorded, traces = record(node_modules, tmp_path, command, "recorded")
    replayed, replay_log = replay(node_modules, tmp_path, command, traces, "replayed")
    return recorded, replayed, session_files(traces), replay_log


def session_files(out: Path) -> list[Path]:
    """The traces of agent sessions (not the side file of other routes)."""
    return sorted(path for path in out.glob("*.jsonl") if not path.name.endswith("-other-routes.jsonl"))


def records_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def assert_tool_session(path: Path, tool: str) -> list[dict[str, Any]]:
    """A trace with model calls, a call of ``tool`` and its result; the records."""
    records = records_of(path)
    kinds = [record["kind"] for record in records]
    assert kinds.count("model_call") >= 2, (path.name, kinds)
    assert [r["name"] for r in records if r["kind"] == "tool_call"][:1] == [tool], (path.name, kinds)
    assert "tool_result" in kinds, (path.name, kinds)
    return records


def assert_no_key_on_disk(folder: Path) -> None:
    written = "".join(path.read_text("utf-8", "replace") for path in folder.rglob("*.jsonl"))
    assert ANTHROPIC_KEY not in written and OPENAI_KEY not in written


# -- the SDKs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("script", ["anthropic_sdk.cjs", "openai_sdk.cjs", "vercel_ai.cjs"])
def test_node_sdk_sessions_record_as_one_trace_each_and_replay_identically(
    node_modules: Path, tmp_path: Path, script: str
) -> None:
    recorded, replayed, traces, replay_log = record_and_replay(node_modules, tmp_path,
                                                               lambda url: ["node", str(SCRIPTS / script)])  # fmt: skip
    assert replayed == recorded, replay_log
    sessions = json.loads(recorded.strip().splitlines()[-1])  # (the AI SDK prints warnings first)
    assert len(sessions) == 2 and FINAL in json.dumps(sessions, ensure_ascii=False)
    assert len(traces) == 2, [path.name for path in traces]  # two sessions, two traces
    for path in traces:
        assert_tool_session(path, "get_weather")
    assert_no_key_on_disk(tmp_path)
    assert any("0 missed" in line for line in replay_log), replay_log


# -- Claude Code -------------------------------------------------------------------------------------------


def claude_code(url: str) -> list[str]:
    """``claude -p`` (ANTHROPIC_BASE_URL and a fake ANTHROPIC_API_KEY in the environment), Bash allowed."""
    return ["claude", "-p", "北京天气怎么样？用 Bash 查。", "--allowedTools", "Bash", "--output-format", "text"]


def test_claude_code_session_is_one_trace_and_replays_identically(node_modules: Path, tmp_path: Path) -> None:
    recorded, replayed, traces, replay_log = record_and_replay(node_modules, tmp_path, claude_code)
    assert recorded.strip() == FINAL
    assert replayed == recorded, replay_log
    assert len(traces) == 1, [path.name for path in traces]
    records = assert_tool_session(traces[0], "Bash")
    assert next(r["content"] for r in records if r["kind"] == "tool_result").strip() == "晴"
    assert_no_key_on_disk(tmp_path)
    assert any("0 missed" in line for line in replay_log), replay_log


# -- the Codex CLI -----------------------------------------------------------------------------------------


def codex(url: str) -> list[str]:
    """``codex exec`` with the built-in OpenAI provider pointed at the proxy (``-c openai_base_url=...``; it
    opens the Responses API WebSocket first), CODEX_API_KEY a fake key and CODEX_HOME under the empty home."""
    return ["codex", "exec", "--skip-git-repo-check", "-m", "gpt-test", "-c", f'openai_base_url="{url}/v1"',
            "北京天气怎么样？用 shell 查。"]  # fmt: skip


def test_codex_recorded_twice_each_recording_replays_the_other_run(node_modules: Path, tmp_path: Path) -> None:
    first, first_traces = record(node_modules, tmp_path, codex, "first")
    second, second_traces = record(node_modules, tmp_path, codex, "second")
    assert first.strip() == second.strip() == FINAL
    for traces in (first_traces, second_traces):
        [path] = session_files(traces)  # the warm-up, the tool call and the answer: one session
        records = assert_tool_session(path, "exec_command")
        calls = [r for r in records if r["kind"] == "model_call"]
        assert all(call["websocket"] for call in calls), "Codex spoke the WebSocket mode"
    assert_no_key_on_disk(tmp_path)
    for traces, other in ((first_traces, second), (second_traces, first)):
        replayed, replay_log = replay(node_modules, tmp_path, codex, traces, f"replay-{traces.name}")
        assert replayed == other, replay_log
        summary = [line for line in replay_log if line.startswith("tracekit replay: answered")]
        assert summary and "0 missed" in summary[0], replay_log
