"""``--guard [FILE]`` on the command line: a real ``tracekit record`` process, the guard file's errors, and
``tracekit replay --guard``."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import anthropic
import orjson
import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.guard import GuardConfig, GuardConfigError, load_guard_config
from tracekit.testing import FakeUpstream, ToolUse, tool_use_reply

TOOLS = [{"name": "lookup", "description": "look up", "input_schema": {"type": "object"}}]


def start(*args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(["tracekit", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    if "listening on" not in line:
        process.kill()
        raise AssertionError(f"no URL announced: {line!r} {process.communicate()[1]}")
    return process, line.split()[-1]


def agent_turns(url: str, turns: int) -> tuple[anthropic.Anthropic, list[Any]]:
    """An agent (session ``cli``) that calls the tool it is given ``turns`` times, answering each call; its
    client and the conversation so far."""
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0,
                                 default_headers={"x-tracekit-session": "cli"})  # fmt: skip
    messages: list[Any] = [{"role": "user", "content": "查"}]
    for _ in range(turns):
        call = client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS).content[-1]  # type: ignore[arg-type]
        assert call.type == "tool_use"
        messages += [{"role": "assistant", "content": [call.model_dump()]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "r"}]}]
    return client, messages


def loop_three_times(url: str) -> None:
    """An agent calling the same tool with the same arguments after it succeeded (repeated_call)."""
    client, messages = agent_turns(url, 3)
    with pytest.raises(anthropic.PermissionDeniedError, match="rule repeated_call"):
        client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]


def test_record_with_a_guard_file_stops_a_looping_session_and_logs_one_line(tmp_path: Path) -> None:
    guard = tmp_path / "guard.yaml"
    guard.write_text("findings:\n  repeated_call: {action: stop}\ndetectors:\n  repeated_call: {min_repeats: 2}\n",
                     encoding="utf-8")  # fmt: skip
    out = tmp_path / "traces"
    script = [tool_use_reply(ToolUse("lookup", {"q": "x"})) for _ in range(3)]
    with FakeUpstream(script) as upstream:
        process, url = start("record", "--upstream", upstream.url, "--port", "0", "--out", str(out),
                             "--guard", str(guard))  # fmt: skip
        try:
            loop_three_times(url)
        finally:
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=15)
    assert process.returncode == 0
    (line,) = [line for line in stderr.splitlines() if line.startswith("tracekit guard:")]
    assert "session cli: finding repeated_call -> stop" in line
    records = [orjson.loads(raw) for raw in (out / "cli.jsonl").read_bytes().splitlines()]
    (event,) = [r for r in records if r["kind"] == "guard"]
    assert (event["rule"], event["action"], event["calls"]) == ("repeated_call", "stop", [0, 1, 2])


def test_a_bad_guard_file_is_a_usage_error_naming_file_line_and_field(tmp_path: Path) -> None:
    guard = tmp_path / "guard.yaml"
    guard.write_text("findings:\n  repeated_call: {action: stop}\nbudgets:\n  tokens: {limit: -5}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["record", "--upstream", "http://127.0.0.1:9", "--port", "0",
                                      "--out", str(tmp_path / "t"), "--guard", str(guard)])  # fmt: skip
    assert result.exit_code == 2
    assert f"{guard}:4: budgets.tokens.limit: Input should be greater than 0" in result.output
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("findings:\n  looping: {action: stop}\n", ":2: findings.looping: unknown finding kind"),
        ("findings:\n  repeated_call: {action: halt}\n", ":2: findings.repeated_call.action: Input should be"),
        ("budgets:\n  tokens: {limit: 5}\n  coins: {limit: 1}\n", ":3: budgets.coins: Extra inputs are not permitted"),
        ("detectors:\n  repeated_call: {min_repeat: 2}\n", ":1: detector 'repeated_call' has no option 'min_repeat'"),
        ("preset: nobody\n", ":1: unknown detector preset 'nobody'"),
        ("findings: [\n", ": not valid YAML"),
        ("- 1\n", ":1: expected a mapping"),
    ],
)
def test_guard_file_errors_name_the_line_and_the_field(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "guard.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GuardConfigError) as error:
        load_guard_config(path)
    assert str(error.value).startswith(str(path)) and where in str(error.value)


def test_the_default_guard_records_every_finding_with_no_budget() -> None:
    config = load_guard_config(None)
    assert config == GuardConfig() and config.action_for("repeated_call") == "record"
    assert all(getattr(config.budgets, name) is None for name in ("tokens", "model_calls", "seconds"))


def test_replay_with_the_guard_watches_replayed_sessions(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded"
    script = [tool_use_reply(ToolUse("lookup", {"q": "x"})) for _ in range(3)]
    with FakeUpstream(script) as upstream:
        process, url = start("record", "--upstream", upstream.url, "--port", "0", "--out", str(recorded))
        try:
            client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0,
                                         default_headers={"x-tracekit-session": "cli"})  # fmt: skip
            messages: list[Any] = [{"role": "user", "content": "查"}]
            for _ in range(3):
                call = client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS).content[-1]  # type: ignore[arg-type]
                messages += [{"role": "assistant", "content": [call.model_dump()]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,  # type: ignore[union-attr]
                                                           "content": "r"}]}]  # fmt: skip
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=15)
    guard = tmp_path / "guard.yaml"
    guard.write_text("findings:\n  repeated_call: {action: stop}\ndetectors:\n  repeated_call: {min_repeats: 2}\n",
                     encoding="utf-8")  # fmt: skip
    process, url = start("replay", str(recorded), "--port", "0", "--guard", str(guard))
    try:
        loop_three_times(url)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
    assert "tracekit guard: session cli: finding repeated_call -> stop" in stderr


def test_a_budget_on_the_command_line_turns_the_guard_on_and_stops_the_session(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    script = [tool_use_reply(ToolUse("lookup", {"q": n})) for n in range(3)]
    with FakeUpstream(script) as upstream:
        process, url = start("record", "--upstream", upstream.url, "--port", "0", "--out", str(out),
                             "--guard-budget", "model_calls=2", "--guard-budget", "tool_calls=1:warn")  # fmt: skip
        try:
            client, messages = agent_turns(url, 2)
            with pytest.raises(anthropic.PermissionDeniedError, match="rule model_calls, used 3, limit 2"):
                client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=15)
    assert process.returncode == 0
    records = [orjson.loads(raw) for raw in (out / "cli.jsonl").read_bytes().splitlines()]
    events = [(r["rule"], r["action"], r["figures"]) for r in records if r["kind"] == "guard"]
    # Both went over at the third request: the budgets in their documented order.
    assert events == [("model_calls", "stop", {"used": 3, "limit": 2}),
                      ("tool_calls", "warn", {"used": 2, "limit": 1})]  # fmt: skip


def test_a_command_line_budget_replaces_the_files_and_a_bad_one_is_a_usage_error(tmp_path: Path) -> None:
    from tracekit.guard import with_budgets

    guard = tmp_path / "guard.yaml"
    guard.write_text("budgets:\n  tokens: {limit: 100, action: warn}\n  seconds: {limit: 60}\n", encoding="utf-8")
    config = with_budgets(load_guard_config(guard), ["tokens=5000", "errors=3:record"])
    assert config.budgets.tokens is not None and (config.budgets.tokens.limit, config.budgets.tokens.action) == (
        5000, "stop")  # fmt: skip
    assert config.budgets.errors is not None and config.budgets.errors.action == "record"
    assert config.budgets.seconds is not None and config.budgets.seconds.limit == 60
    for spec, message in [("coins=5", "unknown budget 'coins'"), ("tokens=-1", "limit: Input should be greater"),
                          ("tokens=many", "limit: Input should be a valid number"),
                          ("tokens=5:halt", "action: Input should be")]:  # fmt: skip
        result = CliRunner().invoke(cli, ["record", "--upstream", "http://127.0.0.1:9", "--port", "0",
                                          "--out", str(tmp_path / "t"), "--guard-budget", spec])  # fmt: skip
        assert result.exit_code == 2, spec
        assert f"budget {spec!r}: {message}" in result.output, (spec, result.output)
    assert not (tmp_path / "t").exists()
