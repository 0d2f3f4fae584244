"""The session ids that Claude Code and the Codex CLI send on their own stitch one trace per session, and their
side calls (Claude Code's title call, Codex's compaction) join it as side calls, left out of the analysis.

Claude Code and Codex are Node / Rust programs; here the official Python SDKs send exactly the headers and
body fields those clients send (``tracekit.proxy.client_sessions`` cites where each comes from), through a real
HTTP client, recorded against the fake upstream and replayed with the upstream gone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import jsonschema
import openai
from click.testing import CliRunner

from tracekit.analyze.entry import analyze_trace
from tracekit.cli.main import cli
from tracekit.cli.show import render_timeline
from tracekit.testing import ToolUse, text_reply, tool_use_reply
from tracekit.trace import load_trace

from .helpers import of_kind, recording, replaying, trace_records

SESSION = "6f1c2a1e-6a3b-4d8e-9f00-1234567890ab"
#: Claude Code 2.x's metadata.user_id: a JSON string (device id, account uuid, session id).
USER_ID = json.dumps({"device_id": "ab" * 32, "account_uuid": "", "session_id": SESSION})
WEATHER_TOOL = {"name": "get_weather", "description": "weather",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}  # fmt: skip
TITLE_FORMAT = {"type": "json_schema", "schema": {"type": "object", "properties": {"title": {"type": "string"}},
                                                  "required": ["title"]}}  # fmt: skip


def claude_code_session(url: str) -> list[Any]:
    """A Claude Code-like session: its quota check (``"quota"``, ``max_tokens`` 1, no tools), two turns of the main
    conversation (tools offered) and, between them, the title call (a small model, no tools, a structured answer:
    the ``structured-outputs`` beta), all with the session's header and ``metadata.user_id``."""
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0,
                                 default_headers={"X-Claude-Code-Session-Id": SESSION, "x-app": "cli"})  # fmt: skip
    system = [{"type": "text", "text": "You are Claude Code. " * 40, "cache_control": {"type": "ephemeral"}}]
    quota = client.messages.create(model="claude-haiku-test", max_tokens=1, metadata={"user_id": USER_ID},
                                   messages=[{"role": "user", "content": "quota"}])  # fmt: skip
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.messages.create(model="claude-sonnet-test", max_tokens=256, system=system, messages=messages,
                                   tools=[WEATHER_TOOL], metadata={"user_id": USER_ID})  # fmt: skip
    title = client.beta.messages.create(
        model="claude-haiku-test", max_tokens=64, betas=["structured-outputs-2025-12-15"],
        messages=[{"role": "user", "content": "Give this conversation a title: What is the weather in Paris?"}],
        metadata={"user_id": USER_ID}, extra_body={"output_format": TITLE_FORMAT},
    )  # fmt: skip
    call = next(block for block in first.content if block.type == "tool_use")
    result = {"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}
    messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}]
    second = client.messages.create(model="claude-sonnet-test", max_tokens=256, system=system, messages=messages,
                                    tools=[WEATHER_TOOL], metadata={"user_id": USER_ID})  # fmt: skip
    return [quota.model_dump(), first.model_dump(), title.model_dump(), second.model_dump()]


def claude_code_script() -> Any:
    replies = iter([
        text_reply("ok"),
        tool_use_reply(ToolUse("get_weather", {"city": "Paris"}), text="Checking."),
        text_reply('{"title": "Weather in Paris"}'),
        text_reply("Paris is sunny."),
    ])  # fmt: skip
    return lambda request: next(replies)


def test_claude_code_session_header_makes_one_trace_with_the_title_call_as_a_side_call(tmp_path: Path) -> None:
    with recording(claude_code_script(), tmp_path) as (_, proxy):
        recorded = claude_code_session(proxy.url)
    (records,) = trace_records(tmp_path)
    header = records[0]
    assert header["session"] == SESSION and header["meta"]["session_from"] == "x-claude-code-session-id"
    calls = of_kind(records, "model_call")
    assert [(c["model"], c.get("side_call")) for c in calls] == [("claude-haiku-test", True),
        ("claude-sonnet-test", None), ("claude-haiku-test", True), ("claude-sonnet-test", None)]  # fmt: skip
    assert [c["stitched"] for c in calls] == ["client"] * 4
    # The quota check's and title call's conversations are not the session's: 2 turns, 1 call, 1 result.
    assert [r["message_index"] for r in of_kind(records, "assistant_message")] == [1, 3]
    assert len(of_kind(records, "tool_call")) == len(of_kind(records, "tool_result")) == 1
    assert len(of_kind(records, "system_message")) == 1
    trace = load_trace(next(tmp_path.glob("*.jsonl")))
    assert trace.stats().llm_calls == 2 and [c.index for c in trace.side_calls()] == [0, 2]
    shown = [line for line in render_timeline(trace, 200) if "claude-haiku-test" in line]
    assert [line.split(" · ")[0] for line in shown] == ["  side model call 0", "  side model call 2"]
    assert "Weather in Paris" in shown[1]
    result = analyze_trace(trace)
    assert result.stats.llm_calls == 2 and [call.name for call in result.tool_calls] == ["get_weather"]
    schema = json.loads(CliRunner().invoke(cli, ["schema", "trace"]).output)
    validator = jsonschema.Draft202012Validator(schema)
    assert [list(validator.iter_errors(record)) for record in records] == [[]] * len(records)
    assert "side_call" in json.dumps(schema)
    html = tmp_path / "html"
    analyzed = CliRunner().invoke(cli, ["analyze", str(next(tmp_path.glob("*.jsonl"))), "--html", str(html)])
    assert analyzed.exit_code == 0, analyzed.output
    (page,) = (html / "traces").glob("*.html")
    shown_html = page.read_text(encoding="utf-8")
    assert shown_html.count("side call (not a turn of the conversation)") == 2
    assert "Weather in Paris" in shown_html and "over 2 model calls" in shown_html
    with replaying(tmp_path) as proxy:
        assert claude_code_session(proxy.url) == recorded
        assert proxy.proxy.misses == []


def test_the_session_inside_metadata_user_id_is_enough(tmp_path: Path) -> None:
    """Without the header: Claude Code 1.x's ``user_<hash>_account__session_<uuid>`` names the session, so two
    requests whose conversations do not continue each other still form one trace."""
    user_id = f"user_{'cd' * 32}_account__session_{SESSION}"
    with recording([text_reply("one"), text_reply("two")], tmp_path) as (_, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        for prompt in ("first question", "an unrelated second one"):
            client.messages.create(model="claude-test", max_tokens=32, tools=[WEATHER_TOOL],
                                   metadata={"user_id": user_id},
                                   messages=[{"role": "user", "content": prompt}])  # fmt: skip
    (records,) = trace_records(tmp_path)
    assert records[0]["session"] == SESSION and records[0]["meta"]["session_from"] == "metadata.user_id"
    assert len(of_kind(records, "model_call")) == 2


CODEX_TOOLS = [{"type": "function", "name": "shell", "description": "run a command",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}]  # fmt: skip


def codex_session(url: str) -> list[Any]:
    """A Codex-like session on the Responses API: the ``session-id`` and ``thread-id`` headers, the full input
    each turn, ``client_metadata`` in the body, and a compaction request (``x-openai-subagent: compact``)."""
    headers = {"session-id": SESSION, "thread-id": SESSION, "originator": "codex_exec"}
    client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, default_headers=headers)
    metadata = {"session_id": SESSION, "thread_id": SESSION, "turn_id": "turn-1"}
    items: list[Any] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]}]
    first = client.responses.create(model="gpt-test", input=items, tools=CODEX_TOOLS, store=False,
                                    extra_body={"client_metadata": metadata})  # fmt: skip
    call = next(item for item in first.output if item.type == "function_call")
    items += [item.model_dump(exclude_none=True) for item in first.output]
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "a.txt b.txt"})
    compact = client.responses.create(model="gpt-test", input=[*items, {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": "Summarize the conversation."}]}],
                                      store=False, extra_headers={"x-openai-subagent": "compact"})  # fmt: skip
    second = client.responses.create(model="gpt-test", input=items, tools=CODEX_TOOLS, store=False,
                                     extra_body={"client_metadata": {**metadata, "turn_id": "turn-2"}})  # fmt: skip
    return [first.model_dump(), compact.model_dump(), second.model_dump()]


def test_codex_session_headers_make_one_trace_with_compaction_as_a_side_call(tmp_path: Path) -> None:
    replies = iter([tool_use_reply(ToolUse("shell", {"command": "ls"})), text_reply("Summary: listed files."),
                    text_reply("There are two files.")])  # fmt: skip
    with recording(lambda request: next(replies), tmp_path) as (_, proxy):
        recorded = codex_session(proxy.url)
    (records,) = trace_records(tmp_path)
    assert records[0]["session"] == SESSION and records[0]["meta"]["session_from"] == "thread-id"
    assert [c.get("side_call") for c in of_kind(records, "model_call")] == [None, True, None]
    assert [r["name"] for r in of_kind(records, "tool_call")] == ["shell"]
    assert [r["content"] for r in of_kind(records, "tool_result")] == ["a.txt b.txt"]
    with replaying(tmp_path) as proxy:
        replayed = codex_session(proxy.url)
        assert proxy.proxy.misses == []
    assert [_texts(r) for r in replayed] == [_texts(r) for r in recorded]


def _texts(response: dict[str, Any]) -> list[Any]:
    return [(item["type"], item.get("name"), str(item.get("content"))) for item in response["output"]]


def test_a_resent_turn_without_its_text_block_continues_the_session_once(tmp_path: Path) -> None:
    """crewai over Anthropic sends the assistant turn back without its leading text block (the tool_use id
    unchanged): the same session, and the call counted once."""
    replies = iter([tool_use_reply(ToolUse("get_weather", {"city": "Paris"}), text="Checking."), text_reply("Sunny.")])
    with recording(lambda request: next(replies), tmp_path) as (_, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        first = client.messages.create(model="claude-test", max_tokens=64, messages=messages, tools=[WEATHER_TOOL])
        call = next(block for block in first.content if block.type == "tool_use")
        result = {"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}
        messages += [{"role": "assistant", "content": [call.model_dump(exclude_none=True)]},
                     {"role": "user", "content": [result]}]  # fmt: skip
        client.messages.create(model="claude-test", max_tokens=64, messages=messages, tools=[WEATHER_TOOL])
    (records,) = trace_records(tmp_path)
    assert [c["stitched"] for c in of_kind(records, "model_call")] == ["new", "continuity"]
    assert len(of_kind(records, "tool_call")) == 1 and len(of_kind(records, "assistant_message")) == 2
