"""pass^k, flakiness and the A/B pairing, checked against brute force over every k-subset of trials."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracekit.analyze.reliability import (
    AB_PASSING,
    PASSING,
    case_reliability,
    paired_groups,
    pass_hat_k,
    reliability_summary,
)


@given(st.lists(st.booleans(), min_size=1, max_size=8), st.integers(min_value=1, max_value=8))
def test_pass_hat_k_is_the_share_of_all_passing_k_subsets(outcomes: list[bool], k: int) -> None:
    n, c = len(outcomes), sum(outcomes)
    estimate = pass_hat_k(n, c, k)
    if k > n:
        assert estimate is None
        return
    subsets = list(itertools.combinations(outcomes, k))
    assert estimate == pytest.approx(sum(all(subset) for subset in subsets) / len(subsets))


def test_known_values_and_bad_input() -> None:
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    assert pass_hat_k(5, 5, 5) == 1.0
    assert pass_hat_k(5, 0, 1) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 0)


def trials(
    case: str, group: str | None, verdicts: list[str | None], run: str | None = None
) -> list[dict[str, object]]:
    return [{"case_id": case, "group": group, "repeat": r, "verdict": v, "run": run} for r, v in enumerate(verdicts)]


def test_pending_trials_are_left_out_and_flaky_cases_marked() -> None:
    runs = [*trials("B2-TS-01", "A", ["pass", "fail", "acceptable", "pending"]),
            *trials("B2-TS-02", "A", ["pass", "pass"]),
            *trials("Q1-KB-01", "A", [None, "pending"])]
    found = {item.case_id: item for item in case_reliability(runs)}
    assert (found["B2-TS-01"].trials, found["B2-TS-01"].passes, found["B2-TS-01"].flaky) == (3, 2, True)
    assert found["B2-TS-02"].flaky is False
    assert found["Q1-KB-01"].trials == 0 and found["Q1-KB-01"].pass_hat(1) is None
    summary = reliability_summary(runs, ks=[1, 2])
    assert summary["flaky"] == [{"case_id": "B2-TS-01", "group": "A", "run": None}]
    assert summary["tasks"] == {"1": 2, "2": 2}  # Q1-KB-01 has no decided trial
    # mean over the cases with at least k decided trials: (2/3 + 1) / 2 for k=1, (1/3 + 1) / 2 for k=2
    assert summary["mean_pass^k"]["1"] == pytest.approx((2 / 3 + 1) / 2)
    assert summary["mean_pass^k"]["2"] == pytest.approx((1 / 3 + 1) / 2)


def test_verdict_objects_from_the_analyze_json_are_accepted() -> None:
    runs = [{"case_id": "C4-LD-01", "group": None, "repeat": 0, "verdict": {"result": "fail"}}]
    assert case_reliability(runs)[0].verdicts == ["fail"]


def test_groups_are_paired_per_case() -> None:
    runs = [*trials("B2-TS-01", "A", ["fail", "fail"]), *trials("B2-TS-01", "B", ["pass", "fail"]),
            *trials("B2-TS-02", "A", ["pass"]), *trials("B2-TS-02", "B", ["pass"]),
            *trials("Q1-RF-02", "B", ["pass"])]
    pairs = {pair["case_id"]: pair for pair in paired_groups(runs)}
    assert set(pairs) == {"B2-TS-01", "B2-TS-02"}  # Q1-RF-02 has no group A
    assert pairs["B2-TS-01"]["better"] == "B"
    assert pairs["B2-TS-01"]["B"] == {"trials": 2, "passes": 1, "verdicts": ["pass", "fail"]}
    assert pairs["B2-TS-02"]["better"] == "tie"


def test_runs_are_separate_tasks_never_repeats_of_each_other() -> None:
    # Two runs of the library (a reference and a flawed policy), one repeat each: not two repeats of a task.
    runs = [*trials("C4-AR-02", "A", ["pass"], "run:scripted:reference"),
            *trials("C4-AR-02", "A", ["fail"], "run:scripted:flawed")]
    tasks = case_reliability(runs)
    assert [(task.run, task.verdicts, task.flaky) for task in tasks] == [
        ("run:scripted:reference", ["pass"], False), ("run:scripted:flawed", ["fail"], False)]
    summary = reliability_summary(runs, ks=None)
    assert summary["ks"] == [1] and summary["mean_pass^k"] == {"1": 0.5} and summary["flaky"] == []
    pooled = reliability_summary([{**trial, "run": None} for trial in runs], ks=None)
    assert pooled["mean_pass^k"] == {"1": 0.5, "2": 0.0} and len(pooled["flaky"]) == 1  # what pooling would say


def test_ks_default_to_the_most_decided_trials_of_a_task() -> None:
    runs = [*trials("B2-TS-01", "A", ["pass", "pass", "pending"]), *trials("B2-TS-02", "A", ["fail"])]
    summary = reliability_summary(runs, ks=None)
    assert summary["ks"] == [1, 2] and summary["tasks"] == {"1": 2, "2": 1}
    assert summary["mean_pass^k"] == {"1": 0.5, "2": 1.0}
    assert reliability_summary(trials("Q1-KB-01", None, ["pending"]), ks=None)["ks"] == []


def test_acceptable_is_a_decided_trial_even_when_only_pass_counts() -> None:
    [task] = case_reliability(trials("B2-TS-01", "A", ["pass", "acceptable", "pending"]), passed=("pass",))
    assert (task.trials, task.passes) == (2, 1)


def test_groups_are_paired_within_a_run() -> None:
    runs = [*trials("B2-TS-01", "A", ["pass"], "r1"), *trials("B2-TS-01", "B", ["fail"], "r2"),
            *trials("B2-TS-02", "A", ["fail"], "r1"), *trials("B2-TS-02", "B", ["pass"], "r1")]
    pairs = paired_groups(runs)
    assert [(pair["run"], pair["case_id"], pair["better"]) for pair in pairs] == [("r1", "B2-TS-02", "B")]


def test_ab_counts_pass_only_and_pass_k_counts_acceptable_too() -> None:
    # The one rule: a skill that turns acceptable into pass is better (A/B); acceptable still did the task (pass^k).
    runs = [*trials("Q3-ST-01", "A", ["acceptable"]), *trials("Q3-ST-01", "B", ["pass"]),
            *trials("Q3-ST-02", "A", ["acceptable"]), *trials("Q3-ST-02", "B", ["fail"])]
    assert (AB_PASSING, PASSING) == (("pass",), ("pass", "acceptable"))
    better = {pair["case_id"]: pair["better"] for pair in paired_groups(runs)}
    assert better == {"Q3-ST-01": "B", "Q3-ST-02": "tie"}
    assert reliability_summary(runs, ks=[1])["mean_pass^k"]["1"] == 0.75
