"""The trajectory diff on hand-made pairs: inserted call, removed call, swapped order, changed argument,
verdict flip, and repeats judged together (a flaky task is not a regression)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

from report_support import scores, verdict

from tracekit.diff import align_calls, diff_results, natural_key
from tracekit.results.model import Results

LOOKUP = ("lookup_city", {"city": "北京"})
SEARCH = ("search", {"city_id": "110000", "district": "朝阳"})
BOOK = ("book", {"id": "L-1"})


def ops(base: list[Any], new: list[Any]) -> list[tuple[str, str, int | None, int | None]]:
    return [(row.op, row.tool, row.base, row.new) for row in align_calls(base, new)]


def test_identical_sequences_align_as_same_whatever_the_key_order() -> None:
    reordered_keys = ("search", {"district": "朝阳", "city_id": "110000"})
    assert ops([LOOKUP, SEARCH], [LOOKUP, reordered_keys]) == [
        ("same", "lookup_city", 0, 0), ("same", "search", 1, 1)]


def test_inserted_call_is_added() -> None:
    assert ops([LOOKUP, BOOK], [LOOKUP, SEARCH, BOOK]) == [
        ("same", "lookup_city", 0, 0), ("added", "search", None, 1), ("same", "book", 1, 2)]


def test_removed_call_is_removed_in_place() -> None:
    assert ops([LOOKUP, SEARCH, BOOK], [LOOKUP, BOOK]) == [
        ("same", "lookup_city", 0, 0), ("removed", "search", 1, None), ("same", "book", 2, 1)]


def test_swapped_order_is_moved() -> None:
    rows = ops([LOOKUP, SEARCH, BOOK], [SEARCH, LOOKUP, BOOK])
    assert sorted(row[0] for row in rows) == ["moved", "same", "same"]
    moved = [row for row in rows if row[0] == "moved"]
    assert len(moved) == 1 and moved[0][2] is not None and moved[0][3] is not None


def test_changed_argument_is_a_deepdiff_of_the_canonical_arguments() -> None:
    changed = ("search", {"city_id": "110000", "district": "海淀"})
    rows = align_calls([LOOKUP, SEARCH], [LOOKUP, changed])
    assert [row.op for row in rows] == ["same", "changed"]
    assert rows[1].arguments == {
        "values_changed": {"root['district']": {"new_value": "海淀", "old_value": "朝阳"}}}


def _trace(case_id: str, result: str, calls: list[Any], repeat: int = 0, group: str = "A",
           findings: tuple[str, ...] = ()) -> dict[str, Any]:
    value = verdict(case_id, result)
    value["scores"] = scores(total=100.0 if result == "pass" else 40.0)
    return {
        "trace_id": f"{case_id}-{group}-{repeat}-{result}", "session": None, "source": None, "meta": {},
        "case_id": case_id, "group": group, "repeat": repeat,
        "stats": {"llm_calls": 2, "tool_calls": len(calls), "tool_errors": 0, "input_tokens": 100,
                  "output_tokens": 10 * len(calls)},
        "tool_calls": [{"index": i, "name": name, "input": args, "is_error": False, "history": False}
                       for i, (name, args) in enumerate(calls)],
        "findings": [{"kind": kind, "severity": "warning", "calls": [0], "message": kind} for kind in findings],
        "verdict": value,
    }


def _results(*traces: dict[str, Any]) -> Results:
    return Results.model_validate({"tracekit": "test", "traces": list(traces)})


def test_verdict_flip_is_a_regression_with_its_deltas_and_findings() -> None:
    base = _results(_trace("B2-PC-02", "pass", [LOOKUP, SEARCH]))
    new = _results(_trace("B2-PC-02", "fail", [SEARCH], findings=("order_violation",)))
    (pair,) = diff_results(base, new).pairs
    assert pair.change == "regression"
    assert (pair.verdict.base, pair.verdict.new) == ("pass", "fail")
    assert [row.op for row in pair.calls] == ["removed", "same"]
    assert pair.findings_appeared == ["order_violation"] and pair.findings_gone == []
    assert pair.scores["tool_use.total"].base == 100.0 and pair.scores["tool_use.total"].new == 40.0
    assert (pair.tokens.base, pair.tokens.new) == (120, 110)
    flipped_back = diff_results(new, base).pairs[0]
    assert flipped_back.change == "improvement"


def test_repeats_judged_together_mixed_outcomes_are_flaky_not_a_regression() -> None:
    base = _results(*(_trace("C4-LD-01", "pass", [LOOKUP], repeat=r) for r in range(3)))
    new = _results(_trace("C4-LD-01", "pass", [LOOKUP], repeat=0), _trace("C4-LD-01", "fail", [LOOKUP], repeat=1),
                   _trace("C4-LD-01", "pass", [LOOKUP], repeat=2))
    diff = diff_results(base, new)
    assert {pair.change for pair in diff.pairs} == {"flaky"}
    all_fail = _results(*(_trace("C4-LD-01", "fail", [LOOKUP], repeat=r) for r in range(3)))
    assert {pair.change for pair in diff_results(base, all_fail).pairs} == {"regression"}


def test_order_regressions_first_then_improvements_then_unchanged_and_added_removed() -> None:
    base = _results(_trace("task10", "pass", []), _trace("task2", "pass", []), _trace("task3", "fail", []),
                    _trace("gone", "pass", []))
    new = _results(_trace("task10", "fail", []), _trace("task2", "fail", []), _trace("task3", "pass", []),
                   _trace("fresh", "pass", []))
    diff = diff_results(base, new)
    assert [(pair.change, pair.key.case_id) for pair in diff.pairs] == [
        ("regression", "task2"), ("regression", "task10"), ("improvement", "task3"), ("added", "fresh"),
        ("removed", "gone")]
    assert diff.counts["regression"] == 2
    assert sorted(["task10", "task2"], key=natural_key) == ["task2", "task10"]


def _imported(task_id: int, trial: int, reward: float, calls: list[Any]) -> dict[str, Any]:
    """A tau-bench import's entry: bound to no case, its task, trial and reward in meta."""
    return {
        "trace_id": f"tau-bench-airline-task{task_id}-trial{trial}", "session": None, "source": None,
        "meta": {"task_id": task_id, "trial": trial, "reward": reward, "domain": "airline"}, "case_id": None,
        "stats": {"llm_calls": 2, "tool_calls": len(calls), "tool_errors": 0, "input_tokens": 0, "output_tokens": 0},
        "tool_calls": [{"index": i, "name": name, "input": args, "is_error": False, "history": False}
                       for i, (name, args) in enumerate(calls)],
        "findings": [], "verdict": None,
    }


def test_imported_trials_pair_by_task_and_are_judged_by_their_reward() -> None:
    base = _results(_imported(2, 0, 1.0, [LOOKUP]), _imported(10, 0, 0.0, [LOOKUP]), _imported(3, 0, 1.0, []))
    new = _results(_imported(10, 1, 1.0, [LOOKUP]), _imported(2, 1, 0.0, [LOOKUP, BOOK]), _imported(3, 1, 1.0, []))
    diff = diff_results(base, new)
    assert [(pair.change, pair.key.case_id, pair.key.repeat) for pair in diff.pairs] == [
        ("regression", "airline/task2", 0), ("improvement", "airline/task10", 0), ("unchanged", "airline/task3", 0)]
    regression = diff.pairs[0]
    assert (regression.verdict.base, regression.verdict.new) == ("pass", "fail")
    assert (regression.outcome.base, regression.outcome.new) == ("reward 1.0", "reward 0.0")
    assert regression.trace_id.new == "tau-bench-airline-task2-trial1"
    assert [row.op for row in regression.calls] == ["same", "added"]


def test_imported_trials_of_one_task_are_repeats_judged_together() -> None:
    base = _results(_imported(5, 0, 1.0, []), _imported(5, 1, 1.0, []))
    new = _results(_imported(5, 2, 1.0, []), _imported(5, 3, 0.0, []))
    diff = diff_results(base, new)
    assert [(pair.key.repeat, pair.change) for pair in diff.pairs] == [(0, "flaky"), (1, "flaky")]
    assert diff.pairs[0].task_verdicts.new == ["pass", "fail"]


def test_runs_pair_within_their_run_when_both_sides_name_the_same_runs() -> None:
    def in_run(run: str, result: str) -> dict[str, Any]:
        return {**_trace("B2-PC-01", result, [LOOKUP]), "run": run, "trace_id": f"{run}-{result}"}

    base = _results(in_run("run:a", "pass"), in_run("run:b", "fail"))
    new = _results(in_run("run:b", "pass"), in_run("run:a", "fail"))
    assert sorted((pair.run.base, pair.run.new, pair.change) for pair in diff_results(base, new).pairs) == [
        ("run:a", "run:a", "regression"), ("run:b", "run:b", "improvement")]
    # Sides sharing no run name (reference against flawed): paired across runs, duplicates kept apart in order.
    other = _results(in_run("run:c", "fail"), in_run("run:d", "pass"))
    pairs = diff_results(base, other).pairs
    assert sorted((pair.run.base, pair.run.new, pair.change) for pair in pairs) == [
        ("run:a", "run:c", "regression"), ("run:b", "run:d", "improvement")]
