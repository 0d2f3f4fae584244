"""The script format of ``tracekit fake-upstream`` is documented where a user looks: its ``--help`` and
``docs/fake-upstream.md``, whose examples are loaded and played here through the official anthropic SDK."""

from __future__ import annotations

import re
from pathlib import Path

import anthropic
import httpx2
import pytest
from click.testing import CliRunner

from tracekit._fake.spec import ReplySpec
from tracekit.cli import cli
from tracekit.testing import FakeUpstream, load_script

DOC = Path(__file__).resolve().parents[2] / "docs" / "fake-upstream.md"
USER = [{"role": "user", "content": "北京明天天气怎么样？"}]


def _example(language: str, tmp_path: Path) -> Path:
    [block] = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    path = tmp_path / f"script.{language}"
    path.write_text(block, encoding="utf-8")
    return path


def test_help_gives_the_format_and_points_to_the_page() -> None:
    result = CliRunner().invoke(cli, ["fake-upstream", "--help"])
    assert result.exit_code == 0
    assert "docs/fake-upstream.md" in result.output and "_fake" not in result.output
    assert "tool_use: {name: get_weather" in result.output  # the example keeps its layout
    for field in ("text", "tool_use", "error", "fault", "delay", "anthropic", "openai_responses"):
        assert field in result.output


def test_the_page_documents_every_field_of_a_reply() -> None:
    table = DOC.read_text(encoding="utf-8").split("## A reply", 1)[1]
    assert {name for name in ReplySpec.model_fields if f"| `{name}` |" not in table} == set()


def test_the_yaml_example_plays_through_the_anthropic_sdk(tmp_path: Path) -> None:
    script = load_script(_example("yaml", tmp_path))
    with FakeUpstream(script) as upstream:
        client = anthropic.Anthropic(base_url=upstream.url, api_key="sk-test", max_retries=0, timeout=5)
        first = client.messages.create(model="claude-test", max_tokens=100, messages=USER)
        assert first.stop_reason == "tool_use" and first.usage.input_tokens == 120
        [text, call] = first.content
        assert text.type == "text" and call.type == "tool_use" and call.input == {"city": "北京", "date": "2026-04-08"}
        second = client.messages.create(model="claude-test", max_tokens=100, messages=USER)
        assert second.content[0].type == "text" and second.content[0].text == "明天北京晴，最高 25°C。"
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            client.messages.create(model="claude-test", max_tokens=100, messages=USER)
        assert overloaded.value.status_code == 529
        assert overloaded.value.response.headers["x-should-retry"] == "true"
        with pytest.raises(anthropic.APIConnectionError):
            client.messages.create(model="claude-test", max_tokens=100, messages=USER)
        with (
            pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)),
            client.messages.stream(model="claude-test", max_tokens=100, messages=USER) as stream,
        ):
            stream.get_final_message()
        assert script.remaining == 0


def test_the_json_example_loads_with_a_queue_per_route(tmp_path: Path) -> None:
    script = load_script(_example("json", tmp_path))
    assert script.remaining == 2
