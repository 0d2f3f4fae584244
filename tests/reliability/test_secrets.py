"""Secrets: the official SDKs run through ``tracekit record`` with recognizable keys (the anthropic SDK's
``x-api-key`` header, the openai SDK's bearer token, a ``?key=`` query parameter on both), an upstream that
echoes the key back in an error, and an agent that pastes its key into a prompt. Then the recordings go
through ``analyze`` (JSON, HTML, Markdown, JUnit), ``report``, ``export otel``, ``show`` and ``replay`` (with
a miss that names the difference). Every byte written under the test's folder -- recordings, reports,
exports and the logs of every command -- is scanned: none of the keys may appear.

The keys match none of the redactor's built-in patterns, so only what the proxy learns from the traffic
protects them. A request-body field configured as secret is checked in its own test.

Reports must escape what they show: a tool result full of markup is rendered as text.
"""

from __future__ import annotations

import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pytest

from tracekit.testing import FakeRequest, FakeUpstream, Reply, ToolUse, error_reply, text_reply, tool_use_reply

from .support import RecordProcess, clean_env, secret_hits, start_tracekit, tracekit_command, wait_for_line

HEADER_KEY = "tkrel-xapikey-7f3a9c2e51b8d4"  # sent as x-api-key
ANTHROPIC_KEY = "tkrel-anthropic-5d0e8b13c7f2"  # the anthropic SDK 2.x sends api_key as a bearer token
BEARER_KEY = "tkrel-bearer-c81d4e2b96a0f7"  # the openai SDK's api_key
QUERY_KEY = "tkrel-querykey-3b7e99d0a4c6"
BODY_SECRET = "tkrel-bodyfield-a4c2e8f1b7d3"
KEYS = [HEADER_KEY, ANTHROPIC_KEY, BEARER_KEY, QUERY_KEY]
HOSTILE = ('<script>alert("tkrel")</script><img src=x onerror=alert(1)>{{ 7*7 }}]]><!-- '
           '<a href="javascript:alert(2)">点我</a> \x1b[31m\x07 </textarea></pre>')  # fmt: skip
HOSTILE_MARKUP = ['<script>alert("tkrel")', "<img src=x onerror", '<a href="javascript:alert(2)"']


def _script(request: FakeRequest) -> Reply:
    """Tool call first, then an answer; the x-echo header asks for a 401 echoing the key (as some gateways do)."""
    if "x-echo" in request.headers:
        keys = f"{request.headers.get('x-api-key')} / {request.headers.get('authorization')}"
        return error_reply(401, "authentication_error", f"invalid keys {keys} for ?key={request.query.get('key')}")
    if request.assistant_turns == 0:
        return tool_use_reply(ToolUse("search_flights", {"from": "北京", "to": "上海"}), text="我查一下。")
    return text_reply("查到了：MU5101。")


def _anthropic_session(url: str) -> None:
    headers = {"x-tracekit-session": "secrets-anthropic", "x-api-key": HEADER_KEY}
    client = anthropic.Anthropic(base_url=url, api_key=ANTHROPIC_KEY, default_query={"key": QUERY_KEY}, max_retries=0,
                                 default_headers=headers)  # fmt: skip
    tools: Any = [{"name": "search_flights", "description": "航班", "input_schema": {"type": "object"}}]
    messages: list[Any] = [{"role": "user", "content": f"帮我查机票。我的 key 是 {HEADER_KEY}，别告诉别人"}]
    first = client.messages.create(model="claude-x", max_tokens=64, tools=tools, messages=messages)
    tool_use = next(block for block in first.content if block.type == "tool_use")
    result = {"type": "tool_result", "tool_use_id": tool_use.id, "content": HOSTILE}
    messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}]
    with client.messages.stream(model="claude-x", max_tokens=64, tools=tools, messages=messages) as stream:
        stream.get_final_message()
    with pytest.raises(anthropic.AuthenticationError):
        client.messages.create(model="claude-x", max_tokens=8, messages=[{"role": "user", "content": "hi"}],
                               extra_headers={"x-echo": "1", "x-tracekit-session": "secrets-echo"})  # fmt: skip


def _openai_session(url: str) -> None:
    client = openai.OpenAI(base_url=url + "/v1", api_key=BEARER_KEY, default_query={"key": QUERY_KEY}, max_retries=0,
                           default_headers={"x-tracekit-session": "secrets-openai"})  # fmt: skip
    tools: Any = [{"type": "function", "function": {"name": "search_flights", "parameters": {"type": "object"}}}]
    messages: list[Any] = [{"role": "user", "content": "帮我查机票"}]
    first = client.chat.completions.create(model="gpt-x", tools=tools, messages=messages)
    reply = first.choices[0].message
    call = (reply.tool_calls or [])[0]
    messages += [reply.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": HOSTILE}]
    for _ in client.chat.completions.create(model="gpt-x", tools=tools, messages=messages, stream=True):
        pass


def _tracekit(logs: Path, name: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``tracekit ARGS``, keeping its output in logs/NAME.*.log; it must exit 0."""
    done = subprocess.run(tracekit_command(list(args)), capture_output=True, env=clean_env(), timeout=120)
    (logs / f"{name}.stdout.log").write_bytes(done.stdout)
    (logs / f"{name}.stderr.log").write_bytes(done.stderr)
    assert done.returncode == 0, f"tracekit {' '.join(args)}: {done.stderr.decode()[-1500:]}"
    return done


def _replay_with_a_miss(traces: Path, logs: Path) -> None:
    process = start_tracekit(
        ["replay", str(traces), "--port", "0"], logs / "replay.stdout.log", logs / "replay.stderr.log"
    )
    try:
        url = wait_for_line(logs / "replay.stdout.log", "listening on ", process).split("listening on ", 1)[1]
        client = anthropic.Anthropic(base_url=url, api_key=ANTHROPIC_KEY, default_query={"key": QUERY_KEY},
                                     default_headers={"x-api-key": HEADER_KEY}, max_retries=0)  # fmt: skip
        # A miss (this text was never recorded) pasting the keys this very request sends in its headers.
        pasted = f"帮我查机票。我的 key 是 {HEADER_KEY}，还有 {ANTHROPIC_KEY}"
        with pytest.raises(anthropic.APIStatusError):
            client.messages.create(model="claude-x", max_tokens=64, messages=[{"role": "user", "content": pasted}])
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Record, replay, analyze, report, export and show; returns the folder holding everything written."""
    root = tmp_path_factory.mktemp("secrets")
    logs, traces = root / "logs", root / "traces"
    with FakeUpstream(_script) as upstream:
        proxy = RecordProcess(upstream.url, traces, logs)
        try:
            _anthropic_session(proxy.url)
            _openai_session(proxy.url)
        finally:
            assert proxy.stop() == 0
        forwarded = upstream.requests
    # The keys did reach the upstream (the test is not vacuous).
    assert {r.headers.get("x-api-key") for r in forwarded} >= {HEADER_KEY}
    assert {f"Bearer {ANTHROPIC_KEY}", f"Bearer {BEARER_KEY}"} <= {r.headers.get("authorization") for r in forwarded}
    assert {r.query.get("key") for r in forwarded} == {QUERY_KEY}
    _replay_with_a_miss(traces, logs)
    reports = ["--html", str(root / "html"), "--markdown", str(root / "summary.md"), "--junit", str(root / "junit.xml")]
    _tracekit(logs, "analyze", "analyze", str(traces), "--json", str(root / "results.json"), *reports, "--no-progress")
    _tracekit(logs, "report", "report", str(root / "results.json"), "--html", str(root / "report"),
              "--markdown", str(root / "report.md"), "--junit", str(root / "report.xml"))  # fmt: skip
    _tracekit(logs, "export", "export", "otel", str(traces), "--out", str(root / "otel.json"), "--with-content")
    for path in sorted(traces.glob("*.jsonl")):
        _tracekit(logs, f"show-{path.stem}", "show", str(path), "--full")
    yield root


def test_every_command_wrote_something(written: Path) -> None:
    names = {path.name for path in written.rglob("*") if path.is_file()}
    assert {"results.json", "summary.md", "junit.xml", "report.md", "report.xml", "otel.json"} <= names
    assert len(list((written / "traces").glob("*.jsonl"))) == 3
    assert len(list((written / "html").rglob("*.html"))) > 1
    assert any(path.stat().st_size for path in (written / "logs").glob("replay.std*.log")), "the miss was logged"


@pytest.mark.parametrize("key", KEYS)
def test_no_key_in_any_byte_written(written: Path, key: str) -> None:
    replay_logs = {written / "logs" / "replay.stdout.log", written / "logs" / "replay.stderr.log"}
    assert [hit for hit in secret_hits([key], written) if Path(hit.rsplit(": ", 1)[0]) not in replay_logs] == []


def test_no_key_in_the_replay_log(written: Path) -> None:
    log = written / "logs" / "replay.stderr.log"
    assert "first difference" in log.read_text(encoding="utf-8")
    assert secret_hits(KEYS, log) == []


def test_what_was_redacted_is_marked(written: Path) -> None:
    traces = b"".join(path.read_bytes() for path in (written / "traces").glob("*.jsonl"))
    assert traces.count(b"[REDACTED]") >= 2, "the pasted key and the echoed key"
    assert "我的 key 是 [REDACTED]，别告诉别人".encode() in traces


def test_reports_render_hostile_tool_results_as_text(written: Path) -> None:
    pages = [path.read_text(encoding="utf-8") for path in written.rglob("*.html")]
    for page in pages:
        for markup in HOSTILE_MARKUP:
            assert markup not in page
    assert any("&lt;script&gt;alert(" in page for page in pages), "the tool result is shown, escaped"
    for name in ("summary.md", "report.md"):
        text = (written / name).read_text(encoding="utf-8")
        assert not any(markup in text for markup in HOSTILE_MARKUP), name
    for name in ("junit.xml", "report.xml"):
        root = ET.parse(written / name).getroot()  # well-formed, whatever the tool results held
        assert root.tag in ("testsuites", "testsuite")
        assert b"\x1b" not in (written / name).read_bytes()
    orjson.loads((written / "otel.json").read_bytes())


def test_a_request_body_field_configured_as_secret_is_never_written(tmp_path: Path) -> None:
    with FakeUpstream(_script) as upstream:
        proxy = RecordProcess(
            upstream.url, tmp_path / "traces", tmp_path / "logs", "--redact-field", "metadata.user_id"
        )
        try:
            client = anthropic.Anthropic(base_url=proxy.url, api_key=ANTHROPIC_KEY, max_retries=0)
            client.messages.create(model="claude-x", max_tokens=8, metadata={"user_id": BODY_SECRET},
                                   messages=[{"role": "user", "content": f"我是 {BODY_SECRET}"}])  # fmt: skip
            time.sleep(0.1)
        finally:
            assert proxy.stop() == 0
        assert upstream.requests[0].body["metadata"]["user_id"] == BODY_SECRET, "forwarded as it was"
    assert secret_hits([BODY_SECRET, ANTHROPIC_KEY], tmp_path) == []


def test_the_secret_scanner_finds_what_it_looks_for(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(f"x-api-key: {HEADER_KEY}\n")
    (tmp_path / "deeper").mkdir()
    (tmp_path / "deeper" / "b.json").write_bytes(orjson.dumps({"url": f"http://h/v1/messages?key={QUERY_KEY}"}))
    (tmp_path / "c.txt").write_text(f"Bearer {BEARER_KEY[:-1]}")
    assert sorted(hit.rsplit(": ", 1)[1] for hit in secret_hits(KEYS, tmp_path)) == sorted([HEADER_KEY, QUERY_KEY])
