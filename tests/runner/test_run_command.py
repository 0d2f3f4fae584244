"""`tracekit run` with a "real model": only ANTHROPIC_API_KEY (or --provider openai), against the fake upstream
standing in for the model API via --base-url, with the official SDKs; and bad usage, with the test-local
stand-in ``canned:<text>`` (conftest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.testing import FakeUpstream, ToolUse, by_turn, text_reply, tool_use_reply

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-api03-tracekit-test-key-0123456789"
FLIGHTS = ToolUse("search_flights", {"origin": "北京", "destination": "成都", "date": "2026-04-08", "passengers": 1})


def run(args: list[str], env: dict[str, str | None]) -> Any:
    return CliRunner().invoke(cli, ["run", *args, "--cases-dir", str(ROOT / "cases"), "--no-progress"], env=env)


def test_a_real_model_needs_only_the_api_key(tmp_path: Path) -> None:
    script = by_turn([tool_use_reply(FLIGHTS), text_reply("明天北京飞成都有 3 个航班，最便宜的是 HU7147。")])
    with FakeUpstream(script) as upstream:
        result = run(["B2-TS-01", "--groups", "A", "--model", "claude-test", "--base-url", upstream.url,
                      "--out", str(tmp_path)], {"ANTHROPIC_API_KEY": KEY})
    assert result.exit_code == 0, result.output
    assert "1 traces: 1 pass" in result.output
    # the proxy forwards the agent's credentials (this SDK version sends the key as a bearer token)
    assert all(KEY in (r.headers.get("x-api-key", "") + r.headers.get("authorization", "")) for r in upstream.requests)
    assert len(upstream.requests) == 2
    records = [orjson.loads(line) for line in (tmp_path / "B2-TS-01__A__r0.jsonl").read_bytes().splitlines()]
    header = records[0]
    assert header["source"] == "run:reference-agent" and header["model"] == "claude-test"
    assert header["meta"]["run"] == {"model": "claude-test", "provider": "anthropic", "agent": "reference",
                                     "skills": []}
    assert [r["name"] for r in records if r["kind"] == "tool_call"] == ["search_flights"]
    on_disk = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    assert KEY.encode() not in on_disk


def test_openai_compatible_server(tmp_path: Path) -> None:
    script = by_turn([tool_use_reply(FLIGHTS), text_reply("查到了。")])
    with FakeUpstream(script) as upstream:
        result = run(["B2-TS-01", "--groups", "B", "--model", "gpt-test", "--provider", "openai",
                      "--base-url", upstream.openai_url, "--out", str(tmp_path)], {"OPENAI_API_KEY": "sk-test-openai"})
    assert result.exit_code == 0, result.output
    assert [request.provider for request in upstream.requests] == ["openai", "openai"]
    system = upstream.requests[0].body["messages"][0]
    assert system["role"] == "system" and "flight_booking_skill" in system["content"]  # group B loads the skill
    header = orjson.loads((tmp_path / "B2-TS-01__B__r0.jsonl").read_bytes().splitlines()[0])
    assert (header["provider"], header["group"]) == ("openai", "B")


def test_without_a_key_the_run_does_not_start(tmp_path: Path) -> None:
    result = run(["B2-TS-01", "--model", "claude-test", "--out", str(tmp_path)], {"ANTHROPIC_API_KEY": None})
    assert result.exit_code == 2
    assert "set ANTHROPIC_API_KEY" in result.output
    assert not list(tmp_path.glob("*.jsonl"))


def test_bad_usage_is_exit_2(tmp_path: Path) -> None:
    assert run(["ZZ-01", "--model", "canned:好的", "--out", str(tmp_path)], {}).exit_code == 2
    declined = run(["B2-TS-01", "--model", "canned:", "--out", str(tmp_path)], {})
    assert declined.exit_code == 2 and "'canned:' cannot run as an agent" in declined.output
    groups = run(["Q1-RF-02", "--groups", "A", "--model", "canned:好的", "--out", str(tmp_path)], {})
    assert groups.exit_code == 2 and "no jobs" in groups.output


def test_a_folder_of_another_run_is_not_resumed(tmp_path: Path) -> None:
    first = run(["B2-TS-01", "--groups", "A", "--model", "canned:好的", "--out", str(tmp_path)], {})
    assert first.exit_code == 0
    other = run(["B2-TS-01", "--groups", "A", "--model", "canned:不好", "--out", str(tmp_path)], {})
    assert other.exit_code == 2 and "made by another run" in other.output
    again = run(["B2-TS-01", "--groups", "A", "--model", "canned:好的", "--out", str(tmp_path)], {})
    assert again.exit_code == 0 and "0 jobs run, 1 already complete" in again.output
