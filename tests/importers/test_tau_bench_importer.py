"""tau-bench importer: the real airline file (acceptance), position pairing, errors by prefix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importer_support import assert_refused_at, write_json

from tracekit.importers import import_tau_bench, write_traces
from tracekit.trace import ToolResult, load_trace, trace_files

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"


@pytest.mark.skipif(not REAL.exists(), reason="shared tau-bench file absent")
def test_real_file_counts_add_up(tmp_path: Path) -> None:
    raw = json.loads(REAL.read_text(encoding="utf-8"))
    expected_calls = sum(
        len(m.get("tool_calls") or []) for entry in raw for m in entry["traj"] if m["role"] == "assistant"
    )
    expected_errors = sum(
        1 for entry in raw for m in entry["traj"] if m["role"] == "tool" and str(m["content"]).startswith("Error:")
    )
    write_traces(import_tau_bench(REAL), tmp_path)
    traces = [load_trace(path) for path in trace_files([tmp_path])]
    assert len(traces) == len(raw) == 200
    assert sum(t.stats().tool_calls for t in traces) == expected_calls
    assert sum(t.stats().tool_errors for t in traces) == expected_errors
    assert all(not t.problems for t in traces)
    by_id = {t.trace_id: t for t in traces}
    for entry in raw:
        trace = by_id[f"tau-bench-airline-task{entry['task_id']}-trial{entry['trial']}"]
        assert {k: trace.header.meta[k] for k in ("task_id", "trial", "reward")} == {
            "task_id": entry["task_id"], "trial": entry["trial"], "reward": entry["reward"]}
        # Each result answers the call just before it, by position: compare names in order.
        names = [m["name"] for m in entry["traj"] if m["role"] == "tool"]
        assert [c.result.name if c.result else None for c in trace.calls()] == names


def _write(tmp_path: Path, value: object) -> Path:
    return write_json(tmp_path / "model-x-retail.json", value)


def _call(call_id: str, name: str) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}]}


def test_repeated_ids_pair_by_position(tmp_path: Path) -> None:
    # Written for this test: the first call is never answered and the second reuses its id, so pairing
    # by id would give the result to the wrong call.
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "hi"},
        _call("call_same", "get_user"),
        {"role": "user", "content": "never mind"},
        _call("call_same", "get_order"),
        {"role": "tool", "tool_call_id": "call_same", "name": "get_order", "content": "Error: no such order"},
        {"role": "assistant", "content": "找不到该订单。"},
    ]
    [trace] = import_tau_bench(_write(tmp_path, [{"task_id": 7, "trial": 2, "reward": 1.0, "traj": traj}]))
    assert trace.trace_id == "tau-bench-retail-task7-trial2"
    assert trace.header.model == "model-x"
    [result] = [r for r in trace.records if isinstance(r, ToolResult)]
    assert (result.call_index, result.name, result.is_error) == (1, "get_order", True)


def test_domain_option_names_the_traces(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps([{"task_id": 1, "trial": 0, "reward": 0, "traj": []}]), encoding="utf-8")
    assert import_tau_bench(path)[0].trace_id == "tau-bench-unknown-task1-trial0"
    assert import_tau_bench(path, domain="airline")[0].trace_id == "tau-bench-airline-task1-trial0"


@pytest.mark.parametrize(("value", "where"), [
    ({"task_id": 1}, "expected a list of trajectories, got object"),
    ([{"task_id": "1", "trial": 0, "traj": []}], "[0].task_id: expected an integer, got string"),
    ([{"task_id": 1, "trial": 0}], "[0].traj: expected a list of chat messages, got null"),
    ([{"task_id": 1, "trial": 0, "traj": [{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}]}],
     '[0].traj[1]: tool message without a string "tool_call_id"'),
    ([{"task_id": 1, "trial": 0, "traj": [{"role": "user", "content": "x"},
                                          {"role": "function", "tool_call_id": [], "content": "y"}]}],
     "[0].traj[1].tool_call_id: expected a string, got array"),
])
def test_bad_input_names_file_and_position(tmp_path: Path, value: object, where: str) -> None:
    path = _write(tmp_path, value)
    assert_refused_at(path, where, lambda: import_tau_bench(path))
