"""Detectors on the real tau-bench airline trajectories (../shared/data from the repository root, skipped when absent).

The expected sets are computed here from the raw JSON, independently of tracekit's graph and
detectors, straight from DESIGN.md's definitions: a call is its function name plus its parsed arguments
(canonical: sorted keys); a result is an error when its content starts with "Error:" (the file's README).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tracekit.analyze import AnalyzeSettings, build_results
from tracekit.importers import import_tau_bench, write_traces
from tracekit.trace import trace_files

RAW = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"

pytestmark = pytest.mark.skipif(not RAW.exists(), reason="shared tau-bench file absent")


def _calls(traj: list[dict[str, Any]]) -> list[tuple[str, bool | None]]:
    """(canonical call, error?) in order; each tool message answers the oldest unanswered call."""
    calls: list[list[Any]] = []
    pending: list[int] = []
    for message in traj:
        if message["role"] == "assistant":
            for tool_call in message.get("tool_calls") or []:
                function = tool_call["function"]
                arguments = json.loads(function["arguments"] or "{}")
                key = function["name"] + json.dumps(arguments, sort_keys=True, ensure_ascii=False)
                pending.append(len(calls))
                calls.append([key, None])
        elif message["role"] == "tool" and pending:
            calls[pending.pop(0)][1] = str(message["content"]).startswith("Error:")
    return [(key, error) for key, error in calls]


def _has_repeated_call(traj: list[dict[str, Any]]) -> bool:
    succeeded: set[str] = set()
    pending: list[str] = []
    for message in traj:
        if message["role"] == "assistant":
            for tool_call in message.get("tool_calls") or []:
                function = tool_call["function"]
                key = function["name"] + json.dumps(json.loads(function["arguments"] or "{}"), sort_keys=True)
                if key in succeeded:
                    return True
                pending.append(key)
        elif message["role"] == "tool" and pending:
            key = pending.pop(0)
            if not str(message["content"]).startswith("Error:"):
                succeeded.add(key)
    return False


def _has_retry_storm(traj: list[dict[str, Any]], failures: int = 3) -> bool:
    counts = Counter(key for key, error in _calls(traj) if error)
    return any(count >= failures for count in counts.values())


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    raw = json.loads(RAW.read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("tau")
    write_traces(import_tau_bench(RAW), folder)
    return raw, build_results(trace_files([folder]), AnalyzeSettings())


def _flagged(results: dict[str, Any], kind: str) -> set[str]:
    return {t["trace_id"] for t in results["traces"] if any(f["kind"] == kind for f in t["findings"])}


def _trace_id(entry: dict[str, Any]) -> str:
    return f"tau-bench-airline-task{entry['task_id']}-trial{entry['trial']}"


def test_repeated_call_flags_exactly_the_trajectories_the_definition_gives(analyzed: Any) -> None:
    raw, results = analyzed
    expected = {_trace_id(entry) for entry in raw if _has_repeated_call(entry["traj"])}
    assert expected, "the file is known to hold repeated calls"
    assert _flagged(results, "repeated_call") == expected


def test_retry_storm_flags_exactly_the_trajectories_the_definition_gives(analyzed: Any) -> None:
    raw, results = analyzed
    expected = {_trace_id(entry) for entry in raw if _has_retry_storm(entry["traj"])}
    assert _flagged(results, "retry_storm") == expected
    # The same definition with a lower threshold must find more, which shows the computation is live.
    assert {_trace_id(e) for e in raw if _has_retry_storm(e["traj"], 2)} >= expected


def test_no_alternating_loop_where_arguments_differ(analyzed: Any) -> None:
    raw, results = analyzed
    by_id = {_trace_id(entry): [key for key, _ in _calls(entry["traj"])] for entry in raw}
    for trace in results["traces"]:
        for finding in trace["findings"]:
            if finding["kind"] != "alternating_loop":
                continue
            keys = [by_id[trace["trace_id"]][index] for index in finding["calls"]]
            period = next(p for p in (2, 3, 4) if len(keys) % p == 0 and keys[p:] == keys[:-p])
            assert keys[period:] == keys[:-period]
            assert len(set(keys[:period])) > 1


def test_every_trace_is_analyzed_without_problems(analyzed: Any) -> None:
    raw, results = analyzed
    assert results["summary"]["traces"] == len(raw) == 200
    assert results["summary"]["unreadable_lines"] == 0
    assert results["summary"]["tool_calls"] == sum(len(_calls(entry["traj"])) for entry in raw)
