"""pass^k, flakiness and the A/B pairing, checked against brute force over every k-subset of trials."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracekit.runner.reliability import case_reliability, paired_groups, pass_hat_k, reliability_summary


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


def trials(case: str, group: str | None, verdicts: list[str | None]) -> list[dict[str, object]]:
    return [{"case_id": case, "group": group, "repeat": r, "verdict": v} for r, v in enumerate(verdicts)]


def test_pending_trials_are_left_out_and_flaky_cases_marked() -> None:
    runs = [*trials("B2-TS-01", "A", ["pass", "fail", "acceptable", "pending"]),
            *trials("B2-TS-02", "A", ["pass", "pass"]),
            *trials("Q1-KB-01", "A", [None, "pending"])]
    found = {item.case_id: item for item in case_reliability(runs)}
    assert (found["B2-TS-01"].trials, found["B2-TS-01"].passes, found["B2-TS-01"].flaky) == (3, 2, True)
    assert found["B2-TS-02"].flaky is False
    assert found["Q1-KB-01"].trials == 0 and found["Q1-KB-01"].pass_hat(1) is None
    summary = reliability_summary(runs, ks=[1, 2])
    assert summary["flaky"] == [{"case_id": "B2-TS-01", "group": "A"}]
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
