"""Hostile transcripts for every importer: random JSON, and near-valid message lists whose roles, blocks and
fields take random values and types. Only ``ImportFormatError`` may come out, naming the file; whatever is
imported is written and reads back without problems. Files that are not JSON, not UTF-8 or too deep for the
JSON parser are refused the same way, and ``tracekit import`` exits 2 on them without a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracekit.cli.main import cli
from tracekit.errors import ImportFormatError
from tracekit.importers import (
    ImportedTrace,
    import_anthropic_messages,
    import_openai_messages,
    import_tau_bench,
    write_traces,
)
from tracekit.trace import load_trace

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

IMPORTERS: dict[str, Callable[[Path], list[ImportedTrace]]] = {
    "anthropic-messages": lambda path: import_anthropic_messages([path]),
    "openai-messages": lambda path: import_openai_messages([path]),
    "tau-bench": lambda path: import_tau_bench(path),
}

text = st.text(max_size=12) | st.sampled_from(["", "北京", "<script>", "{", '{"a": 1}', "\x00", "a" * 50])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=15,
)
ids = st.sampled_from(["tu_1", "tu_2", "call_1", "", None, 7]) | text


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The value, or a value of any type."""
    return st.one_of(value, value, json_values)


block = st.fixed_dictionaries(
    {"type": _maybe(st.sampled_from(["text", "tool_use", "tool_result", "image", "thinking", "redacted_thinking"]))},
    optional={
        "text": _maybe(text),
        "id": _maybe(ids),
        "name": _maybe(st.sampled_from(["search_flights", "get_weather"])),
        "input": _maybe(st.dictionaries(text, json_values, max_size=3)),
        "tool_use_id": _maybe(ids),
        "content": _maybe(text | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": text}), max_size=2)),
        "is_error": _maybe(st.booleans()),
        "thinking": _maybe(text),
        "source": json_values,
    },
)
anthropic_message = st.fixed_dictionaries(
    {
        "role": _maybe(st.sampled_from(["user", "assistant", "system"])),
        "content": _maybe(text | st.lists(block, max_size=4)),
    }
)
tool_call = st.fixed_dictionaries(
    {
        "id": _maybe(ids),
        "type": _maybe(st.just("function")),
        "function": _maybe(
            st.fixed_dictionaries({"name": _maybe(text), "arguments": _maybe(text | st.just('{"city": "北京"}'))})
        ),
    }
)
openai_message = st.fixed_dictionaries(
    {"role": _maybe(st.sampled_from(["user", "assistant", "system", "tool", "developer", "function"]))},
    optional={
        "content": _maybe(
            text | st.lists(st.fixed_dictionaries({"type": _maybe(st.just("text")), "text": _maybe(text)}), max_size=2)
        ),
        "tool_calls": _maybe(st.lists(tool_call, max_size=3)),
        "tool_call_id": _maybe(ids),
        "name": _maybe(text),
    },
)


tau_entry = st.fixed_dictionaries(
    {
        "task_id": _maybe(st.integers(0, 100)),
        "trial": _maybe(st.integers(0, 5)),
        "traj": _maybe(st.lists(openai_message, max_size=5)),
    },
    optional={"reward": json_values, "info": json_values},
)


DOCUMENTS = {
    "anthropic-messages": st.lists(anthropic_message, max_size=6)
    | st.fixed_dictionaries({"messages": st.lists(anthropic_message, max_size=6)}, optional={"system": _maybe(text)}),
    "openai-messages": st.lists(openai_message, max_size=6)
    | st.fixed_dictionaries({"messages": st.lists(openai_message, max_size=6)}),
    "tau-bench": st.lists(tau_entry, max_size=3),
}


def _import(kind: str, path: Path, out: Path) -> None:
    try:
        traces = IMPORTERS[kind](path)
    except ImportFormatError as exc:
        assert str(exc).startswith(str(path)), f"the error does not name the file: {exc}"
        return
    for written in write_traces(traces, out):
        assert load_trace(written).problems == []


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
@FUZZ
@given(document=json_values)
def test_random_json_gives_traces_or_an_import_format_error(tmp_path: Path, kind: str, document: Any) -> None:
    path = tmp_path / "random.json"
    path.write_bytes(orjson.dumps(document))
    _import(kind, path, tmp_path / "out")


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
@FUZZ
@given(data=st.data())
def test_near_valid_transcripts_give_traces_or_an_import_format_error(
    tmp_path: Path, kind: str, data: st.DataObject
) -> None:
    path = tmp_path / "near.json"
    path.write_bytes(orjson.dumps(data.draw(DOCUMENTS[kind])))
    _import(kind, path, tmp_path / "out")


UNREADABLE = {
    "not_json": b"[{'role': 'user'}]",
    "not_utf8": b'[{"role": "user", "content": "\xff\xfe"}]',
    "too_deep": b"[" * 100_000 + b"]" * 100_000,
    "huge_int": b'[{"role": "user", "content": 1' + b"0" * 400 + b"}]",
    "empty": b"",
    "truncated": b'[{"role": "user", "content": "hi"}',
    "nul_bytes": b"\x00" * 64,
}


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_unreadable_files_are_refused_by_the_importers_and_the_cli(tmp_path: Path, kind: str, name: str) -> None:
    path = tmp_path / f"{name}.json"
    path.write_bytes(UNREADABLE[name])
    with pytest.raises(ImportFormatError) as caught:
        IMPORTERS[kind](path)
    assert str(caught.value).startswith(str(path))
    result = CliRunner().invoke(cli, ["import", kind, str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert f"{name}.json" in result.output


def test_the_strategies_reach_the_importers_past_their_first_check(tmp_path: Path) -> None:
    """Guard against a fuzz test that only ever feeds garbage: valid documents of each kind import."""
    valid = {
        "anthropic-messages": [{"role": "user", "content": "你好"}, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "tu_1", "name": "search_flights", "input": {"from": "北京"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "[]"}]}],
        "openai-messages": [{"role": "user", "content": "你好"}, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "晴"}],
        "tau-bench": [{"task_id": 1, "trial": 0, "reward": 1.0, "traj": [{"role": "user", "content": "hi"}]}],
    }  # fmt: skip
    for kind, document in valid.items():
        path = tmp_path / f"{kind}.json"
        path.write_bytes(orjson.dumps(document))
        assert IMPORTERS[kind](path), kind


UNCHECKED_OPENAI_FIELDS = {
    "function_tool_call_id_int": {"role": "function", "tool_call_id": 7, "content": "x"},
    "function_tool_call_id_list": {"role": "function", "tool_call_id": [], "content": "x"},
    "function_name_list": {"role": "function", "name": [], "content": "x"},
    "tool_name_list": {"role": "tool", "tool_call_id": "call_1", "name": [], "content": "x"},
    "tool_calls_id_list": {"role": "assistant", "content": None, "tool_calls": [
        {"id": [], "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(UNCHECKED_OPENAI_FIELDS))
@pytest.mark.parametrize("kind", ["openai-messages", "tau-bench"])
def test_openai_fields_of_the_wrong_type_are_refused(tmp_path: Path, kind: str, name: str) -> None:
    messages = [{"role": "user", "content": "hi"}, UNCHECKED_OPENAI_FIELDS[name]]
    document = [{"task_id": 1, "trial": 0, "traj": messages}] if kind == "tau-bench" else messages
    path = tmp_path / "fields.json"
    path.write_bytes(orjson.dumps(document))
    with pytest.raises(ImportFormatError, match=r"messages\[1\]|traj\[1\]"):
        IMPORTERS[kind](path)


@pytest.mark.parametrize("system", [[None], ["文本"], [3, {"type": "text", "text": "x"}]])
def test_a_system_list_with_non_block_items_is_refused(tmp_path: Path, system: list[Any]) -> None:
    path = tmp_path / "system.json"
    path.write_bytes(orjson.dumps({"system": system, "messages": [{"role": "user", "content": "hi"}]}))
    with pytest.raises(ImportFormatError, match="system"):
        import_anthropic_messages([path])
