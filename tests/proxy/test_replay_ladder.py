"""The replay ladder (``tracekit.proxy.matching``): a client that puts per-run values in every request replays.

The agent below behaves as the Codex CLI does on the Responses API (the values seen in its recordings):
every run sends new ``client_metadata`` ids and a new ``prompt_cache_key``, gives every input item a new
``msg_<uuid>`` id, and its tool's output holds a random ``Chunk ID``. It runs with the real openai SDK
through ``tracekit record`` against the fake upstream, twice; each recording must replay the other run.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.errors import InputError
from tracekit.proxy.launch import match_rules
from tracekit.proxy.matching import MatchRules, PathPattern, remove_paths
from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records

TOOLS: list[Any] = [{"type": "function", "name": "read_file", "description": "Read a file.",
                     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]  # fmt: skip


def script() -> Any:
    return by_turn([tool_use_reply(ToolUse("read_file", {"path": "README.md"})), text_reply("The file says hello.")])


def codex_like_run(client: openai.OpenAI, run_id: str) -> list[Any]:
    """One session of two model calls whose per-run values all come from ``run_id``."""
    metadata = {"session_id": run_id, "thread_id": run_id, "turn_id": f"turn-{run_id}"}
    items: list[Any] = [{"id": f"msg_{run_id}", "type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": "What does README.md say?"}]}]  # fmt: skip
    outputs = []
    for _ in range(3):
        response = client.responses.create(
            model="gpt-test", input=items, tools=TOOLS,
            extra_body={"client_metadata": metadata, "prompt_cache_key": run_id},
        )  # fmt: skip
        outputs.append(response.to_dict(mode="json", exclude_none=True))
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return outputs
        items += [item.to_dict(mode="json", exclude_none=True) for item in response.output]
        items += [{"type": "function_call_output", "call_id": call.call_id,
                   "output": f"Chunk ID: {chunk_id(run_id)}\nhello"} for call in calls]  # fmt: skip
    return outputs


def chunk_id(run_id: str) -> str:
    """Six characters as Codex prints them, from the run's id (hex, with a digit and a letter)."""
    return "a1" + run_id[:4]


def record(folder: Path, run_id: str) -> list[Any]:
    with recording(script(), folder) as (_, proxy):
        return codex_like_run(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0), run_id)


def replay_headers(folder: Path, run_id: str, **options: Any) -> tuple[list[Any], list[str], Any]:
    """The run's outputs against a replay of ``folder``, the rung of each answer, and the proxy."""
    rungs: list[str] = []

    def note(response: Any) -> None:
        rungs.append(response.headers.get("x-tracekit-replay-match", "none"))

    with replaying(folder, **options) as running:
        http = httpx.Client(event_hooks={"response": [note]})
        client = openai.OpenAI(base_url=running.url + "/v1", api_key="k", max_retries=0, http_client=http)
        outputs = codex_like_run(client, run_id)
        return outputs, rungs, running.proxy


def test_two_recordings_of_a_per_run_id_client_each_replay_the_other(tmp_path: Path) -> None:
    first, second = uuid.uuid4().hex, uuid.uuid4().hex
    recorded_first = record(tmp_path / "a", first)
    recorded_second = record(tmp_path / "b", second)
    crossed = ((tmp_path / "a", second, recorded_first), (tmp_path / "b", first, recorded_second))
    for folder, run_id, expected in crossed:
        outputs, rungs, proxy = replay_headers(folder, run_id)
        assert outputs == expected, "the other run gets the recorded answers"
        # The first call differs only by the per-run ids; the second also by the tool output's chunk id.
        assert rungs == ["volatile", "session"]
        assert proxy.misses == []
        assert dict(proxy.matches) == {"volatile": 1, "session": 1}


def test_the_same_run_replays_on_the_exact_rung(tmp_path: Path) -> None:
    run_id = uuid.uuid4().hex
    recorded = record(tmp_path, run_id)
    outputs, rungs, _ = replay_headers(tmp_path, run_id)
    assert outputs == recorded and rungs == ["exact", "exact"]


def test_without_the_builtin_rules_the_other_run_misses_and_names_the_difference(tmp_path: Path) -> None:
    record(tmp_path, uuid.uuid4().hex)
    with pytest.raises(openai.NotFoundError) as raised:
        replay_headers(tmp_path, uuid.uuid4().hex, match_rules=MatchRules(builtin=False))
    assert "Nearest recorded request" in str(raised.value) and "first difference" in str(raised.value)


def test_the_session_rung_refuses_a_tool_output_with_other_words(tmp_path: Path) -> None:
    record(tmp_path, uuid.uuid4().hex)
    with replaying(tmp_path) as running:
        client = openai.OpenAI(base_url=running.url + "/v1", api_key="k", max_retries=0)
        run_id = uuid.uuid4().hex
        items: list[Any] = [{"id": f"msg_{run_id}", "type": "message", "role": "user",
                             "content": [{"type": "input_text", "text": "What does README.md say?"}]}]  # fmt: skip
        extra = {"client_metadata": {"session_id": run_id}, "prompt_cache_key": run_id}
        first = client.responses.create(model="gpt-test", input=items, tools=TOOLS, extra_body=extra)
        call = first.output[0]
        assert call.type == "function_call"
        items += [call.to_dict(mode="json", exclude_none=True),
                  {"type": "function_call_output", "call_id": call.call_id, "output": "Chunk ID: a1b2c3\ngoodbye"}]
        with pytest.raises(openai.NotFoundError) as raised:
            client.responses.create(model="gpt-test", input=items, tools=TOOLS, extra_body=extra)
        assert "Nearest recorded request" in str(raised.value)
        assert dict(running.proxy.matches) == {"volatile": 1}


def test_the_session_rung_refuses_a_request_of_another_shape(tmp_path: Path) -> None:
    run_id = uuid.uuid4().hex
    record(tmp_path, run_id)
    with replaying(tmp_path) as running:
        client = openai.OpenAI(base_url=running.url + "/v1", api_key="k", max_retries=0)
        first = client.responses.create(model="gpt-test", tools=TOOLS, input=[
            {"id": "msg_other", "type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "What does README.md say?"}]}],
            extra_body={"client_metadata": {"session_id": "x"}, "prompt_cache_key": "x"})  # fmt: skip
        assert first.output[0].type == "function_call"
        with pytest.raises(openai.NotFoundError):  # same session, but two user messages instead of a tool output
            client.responses.create(model="gpt-test", tools=TOOLS, input=[
                {"type": "message", "role": "user", "content": "What does README.md say?"},
                {"type": "message", "role": "user", "content": "Never mind."}])  # fmt: skip


def test_a_users_ignore_pattern_and_replay_yaml(tmp_path: Path) -> None:
    with recording(by_turn([text_reply("hi")]), tmp_path) as (_, proxy):
        openai.OpenAI(base_url=proxy.url + "/v1", api_key="k").chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], extra_body={"trace_tag": "run-1"})
    (tmp_path / "replay.yaml").write_text("ignore: [trace_tag]\n", encoding="utf-8")
    rules = match_rules(tmp_path, ["$.user"])
    assert [pattern.text for pattern in rules.ignore] == ["trace_tag", "$.user"]
    with replaying(tmp_path, match_rules=rules) as running:
        reply = openai.OpenAI(base_url=running.url + "/v1", api_key="k").chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], user="someone",
            extra_body={"trace_tag": "run-2"})  # fmt: skip
        assert reply.choices[0].message.content == "hi"
        assert dict(running.proxy.matches) == {"volatile": 1}
    (records,) = trace_records(tmp_path)
    assert of_kind(records, "model_call")[0]["request"]["trace_tag"] == "run-1", "the recording is unchanged"


def test_a_bad_replay_yaml_or_pattern_is_named(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "replay.yaml").write_text("ignore: client_metadata\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--port", "0"])
    assert result.exit_code == 2 and "replay.yaml" in result.output and "'ignore'" in result.output
    (tmp_path / "replay.yaml").unlink()
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--port", "0", "--ignore", "input[x"])
    assert result.exit_code == 2 and "input[x" in result.output


@pytest.mark.parametrize(
    ("pattern", "body", "expected"),
    [
        ("client_metadata", {"client_metadata": {"a": 1}, "model": "m"}, {"model": "m"}),
        ("$.input[*].id", {"input": [{"id": "msg_1", "t": 1}, "x"]}, {"input": [{"t": 1}, "x"]}),
        ("input[1]", {"input": [1, 2, 3]}, {"input": [1, None, 3]}),
        ("metadata.*", {"metadata": {"a": 1, "b": 2}}, {"metadata": {}}),
        ("a.b", {"a": [1]}, {"a": [1]}),
    ],
)
def test_path_patterns(pattern: str, body: Any, expected: Any) -> None:
    before = json.dumps(body)
    assert remove_paths(body, [PathPattern.parse(pattern)]) == expected
    assert json.dumps(body) == before, "the input is not modified"


@pytest.mark.parametrize("pattern", ["", "a..b", "a[", "$", "a[x]"])
def test_bad_path_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(InputError):
        PathPattern.parse(pattern)
