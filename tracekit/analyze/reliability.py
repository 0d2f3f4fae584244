"""Reliability over repeats and the Group A vs B pairing: pass^k per task, flaky tasks, which group did better.

pass^k is the chance that k independent trials of a case *all* pass (tau-bench, Yao et al. 2024,
arXiv:2406.12045, section 5). From n trials with c passes the unbiased estimator is
``C(c, k) / C(n, k)``: the share of the k-subsets of the n trials made only of passes. It is the
pass^k counterpart of the pass@k estimator ``1 - C(n-c, k) / C(n, k)`` of Chen et al. 2021
(arXiv:2107.03374).

A task is a case in one skill group of one *run* (``run``: what made the traces, e.g.
``run:reference-agent/my-model``; None when the trials do not say): trials of the same task with different
repeats are its repeats, and two runs of a case library are never pooled into one task. A verdict of
``pending`` (no judge verdict yet) is neither a pass nor a failure: pending trials are left out of n.

What counts as a pass (the one rule, used by the analyze JSON, the reports and ``tracekit run``):

- **pass^k** (``PASSING``): ``pass`` or ``acceptable``. pass^k asks whether the task gets *done* every
  time; an acceptable verdict did the task (the seeds' middle tier: a slower or second-best way), as
  ``--fail-on fail``, JUnit and the pytest plugin also treat it.
- **Group A vs B** (``AB_PASSING``): ``pass`` only. The comparison's figures are pass rates
  (``pass_rate``, ``pass_rate_delta`` in the analyze JSON, "pass" columns in the reports) and ``better``
  follows them. A skill group exists to move the agent to the best behaviour: seed 003 scores tool choice
  in three tiers because "能用但低效" (usable but wasteful) is not the right choice ("能完成任务 ≠
  选对了工具"), and the Q3 tiers make ``acceptable`` the verdict of too many steps or tokens, so a skill that
  turns acceptable into pass must show as better. ``pass_or_acceptable_rate`` stays beside it so an
  acceptable -> fail move is still visible. (Before this rule the HTML report ranked acceptable as half a
  pass when it listed the cases that changed, and disagreed with the JSON's ``better``.)

This module is the one implementation of pass^k and of the pairing; ``tracekit.analyze.summary`` builds
the JSON's statistics from it and every other reader shows those.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from math import comb
from typing import Any

#: Verdicts counted as a passing trial for pass^k (and unless told otherwise).
PASSING = ("pass", "acceptable")
#: Verdicts counted as a pass when Group A is compared with Group B.
AB_PASSING = ("pass",)
#: Verdicts counted as a failing trial.
FAILING = ("fail",)
#: Verdicts that decide a trial (the others, e.g. ``pending``, are left out of n).
DECIDED = ("pass", "acceptable", "fail")


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """The unbiased pass^k estimate ``C(c, k) / C(n, k)`` from ``n`` trials with ``c`` passes.

    None when it cannot be estimated (fewer than ``k`` trials). ``k`` must be at least 1.

    >>> pass_hat_k(4, 3, 1), pass_hat_k(4, 3, 2), pass_hat_k(4, 4, 4), pass_hat_k(2, 2, 3)
    (0.75, 0.5, 1.0, None)
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if n < 0 or c < 0 or c > n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if n < k:
        return None
    return comb(c, k) / comb(n, k)


@dataclass
class CaseReliability:
    """The repeats of one task (a case in one group of one run): how many passed, pass^k, whether it is flaky."""

    case_id: str
    group: str | None
    verdicts: list[str] = field(default_factory=list)
    """The verdict of each trial, in repeat order (``pending`` included)."""
    passed: tuple[str, ...] = PASSING
    run: str | None = None
    """The run the trials belong to (None when the trials name none)."""

    @property
    def trials(self) -> int:
        """n: trials with a decided verdict (pending ones are left out)."""
        return sum(1 for verdict in self.verdicts if verdict in DECIDED or verdict in self.passed)

    @property
    def passes(self) -> int:
        """c: passing trials."""
        return sum(1 for verdict in self.verdicts if verdict in self.passed)

    @property
    def flaky(self) -> bool:
        """Some trials pass and some fail."""
        return 0 < self.passes < self.trials

    def pass_hat(self, k: int) -> float | None:
        """pass^k of this case (None with fewer than k decided trials)."""
        return pass_hat_k(self.trials, self.passes, k)

    def to_dict(self, ks: Iterable[int]) -> dict[str, Any]:
        """The case's entry in a summary: n, c, pass^k for each k, flaky."""
        return {
            "case_id": self.case_id,
            "group": self.group,
            "run": self.run,
            "trials": self.trials,
            "passes": self.passes,
            "pending": len(self.verdicts) - self.trials,
            "pass^k": {str(k): self.pass_hat(k) for k in ks},
            "flaky": self.flaky,
        }


def case_reliability(
    trials: Iterable[Mapping[str, Any]], passed: Iterable[str] = PASSING
) -> list[CaseReliability]:
    """Group trials by task, (run, case, group), in first-seen order.

    Each trial is a mapping with ``case_id``, ``group`` (may be None), ``repeat`` (may be None), ``verdict``
    (a verdict string or the analyze JSON's verdict object ``{"result": ...}`` or None) and optionally
    ``run``. Trials without a case are skipped; a trial without a verdict counts as pending.
    """
    accepted = tuple(passed)
    found: dict[tuple[str | None, str, str | None], list[tuple[int, str]]] = {}
    for number, trial in enumerate(trials):
        case_id = trial.get("case_id")
        if not case_id:
            continue
        verdict = trial.get("verdict")
        if isinstance(verdict, Mapping):
            verdict = verdict.get("result")
        repeat = trial.get("repeat")
        order = repeat if isinstance(repeat, int) else number
        task = (trial.get("run"), case_id, trial.get("group"))
        found.setdefault(task, []).append((order, str(verdict or "pending")))
    return [
        CaseReliability(
            case_id, group, [verdict for _, verdict in sorted(entries, key=lambda item: item[0])], accepted, run
        )
        for (run, case_id, group), entries in found.items()
    ]


def reliability_summary(
    trials: Iterable[Mapping[str, Any]], ks: Iterable[int] | None = (1,), passed: Iterable[str] = PASSING
) -> dict[str, Any]:
    """The ``reliability`` part of a summary: per task (run, case, group) pass^k and flakiness, the mean
    pass^k over the tasks that have at least k decided trials (and how many they are), and the flaky tasks.

    ``ks=None``: k from 1 to the largest number of decided trials of any task (none when nothing is decided).

    Example::

        reliability_summary([{"case_id": "CASE-01", "group": "A", "repeat": r, "verdict": v}
                             for r, v in enumerate(["pass", "fail", "pass"])], ks=[1, 2])
        # cases[0]: trials 3, passes 2, pass^k {"1": 0.667, "2": 0.333}, flaky True; tasks {"1": 1, "2": 1}
    """
    cases = case_reliability(trials, passed)
    if ks is None:
        ks = range(1, max((case.trials for case in cases), default=0) + 1)
    ks = sorted(set(ks))
    means: dict[str, float | None] = {}
    tasks: dict[str, int] = {}
    for k in ks:
        values = [value for value in (case.pass_hat(k) for case in cases) if value is not None]
        means[str(k)] = sum(values) / len(values) if values else None
        tasks[str(k)] = len(values)
    return {
        "ks": ks,
        "cases": [case.to_dict(ks) for case in cases],
        "mean_pass^k": means,
        "tasks": tasks,
        "flaky": [{"case_id": case.case_id, "group": case.group, "run": case.run} for case in cases if case.flaky],
    }


def paired_groups(
    trials: Iterable[Mapping[str, Any]], passed: Iterable[str] = AB_PASSING
) -> list[dict[str, Any]]:
    """Group A vs Group B on the same cases, within each run: for each (run, case) run in both groups, each
    group's passes (``AB_PASSING`` unless told otherwise) out of decided trials, and which group did better
    (``"A"``, ``"B"`` or ``"tie"``; None when a group has no decided trial)."""
    by_case: dict[tuple[str | None, str], dict[str | None, CaseReliability]] = {}
    for case in case_reliability(trials, passed):
        by_case.setdefault((case.run, case.case_id), {})[case.group] = case
    pairs = []
    for (run, case_id), groups in by_case.items():
        a, b = groups.get("A"), groups.get("B")
        if a is None or b is None:
            continue
        rate_a = a.passes / a.trials if a.trials else None
        rate_b = b.passes / b.trials if b.trials else None
        better = None
        if rate_a is not None and rate_b is not None:
            better = "tie" if rate_a == rate_b else ("A" if rate_a > rate_b else "B")
        pairs.append({
            "case_id": case_id,
            "run": run,
            "A": {"trials": a.trials, "passes": a.passes, "verdicts": a.verdicts},
            "B": {"trials": b.trials, "passes": b.passes, "verdicts": b.verdicts},
            "better": better,
        })
    return pairs
