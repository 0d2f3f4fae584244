"""The example of ``tracekit.clients``' docstring, run as written: a third party's prefix (``local:``), registered
by decorator, takes ``tracekit run`` to its server (here the fake upstream, speaking OpenAI Chat Completions)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

import tracekit.clients
from tracekit.cli.main import cli
from tracekit.clients import ApiModelClient, model_client
from tracekit.testing import FakeUpstream, ToolUse, by_turn, text_reply, tool_use_reply

ROOT = Path(__file__).resolve().parents[2]


def docstring_example(doc: str, after: str) -> str:
    """The literal block (``::``) that follows the paragraph starting with ``after``, dedented."""
    lines = doc[doc.index(after):].splitlines()
    start = next(number for number, line in enumerate(lines) if line.rstrip().endswith("::")) + 1
    block: list[str] = []
    for line in lines[start:]:
        if line.strip() and not line.startswith(" "):
            break
        block.append(line)
    return textwrap.dedent("\n".join(block)).strip() + "\n"


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    """The example's module namespace, after running it (which registers ``local``)."""
    assert tracekit.clients.__doc__ is not None
    namespace: dict[str, Any] = {"__name__": "docstring_example"}
    exec(compile(docstring_example(tracekit.clients.__doc__, "Example:"), "tracekit.clients example", "exec"),
         namespace)
    return namespace


def test_the_documented_client_serves_its_prefix_only(example: dict[str, Any]) -> None:
    client = model_client("local:qwen3")
    assert isinstance(client, example["LocalServer"]) and client.model == "local:qwen3"
    assert isinstance(model_client("qwen3"), ApiModelClient)  # no prefix: a model API


def test_a_run_goes_to_the_documented_client_s_server(
    example: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flights = ToolUse("search_flights", {"origin": "北京", "destination": "成都", "date": "2026-04-08",
                                         "passengers": 1})
    with FakeUpstream(by_turn([tool_use_reply(flights), text_reply("明天有 3 个航班。")])) as upstream:
        monkeypatch.setenv("LOCAL_MODEL_URL", upstream.openai_url)
        result = CliRunner().invoke(cli, [
            "run", "B2-TS-01", "--groups", "A", "--model", "local:qwen3", "--provider", "openai",
            "--out", str(tmp_path), "--cases-dir", str(ROOT / "cases"), "--no-progress",
        ], env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.output  # no OPENAI_API_KEY needed: the client has its own key
    assert [request.provider for request in upstream.requests] == ["openai", "openai"]
    assert {request.body["model"] for request in upstream.requests} == {"local:qwen3"}
    assert {request.headers["authorization"] for request in upstream.requests} == {"Bearer no-key"}
    header = orjson.loads((tmp_path / "B2-TS-01__A__r0.jsonl").read_bytes().splitlines()[0])
    assert header["source"] == "run:reference-agent" and header["model"] == "local:qwen3"  # a model, not simulated
