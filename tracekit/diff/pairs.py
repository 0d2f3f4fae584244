"""Pairing two analyses of the same case library and judging what changed, pair by pair.

A pair is the same (case id — the trace id for a trace bound to no case —, group, repeat) in both
results, within the same run name when both sides name one. A pair's change is judged on all the
repeats of its task (case × group) together: each side's verdicts count passes as pass^k does
(``tracekit.analyze.reliability.PASSING``). When a side's repeats disagree (some pass, some fail) the
task is ``flaky``, never a regression; otherwise the verdicts are ranked (pass > acceptable > fail) and a
worse one is a ``regression``, a better one an ``improvement``. ``pending`` decides nothing.

Example::

    diff = diff_results(read_results_file("base.json"), read_results_file("new.json"))
    regressed = [pair.key for pair in diff.pairs if pair.change == "regression"]
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

from pydantic import BaseModel, Field

from tracekit.analyze.reliability import PASSING
from tracekit.analyze.results_model import Results, TraceResult
from tracekit.diff.align import AlignedCall, align_calls

Change = Literal["regression", "improvement", "unchanged", "flaky", "added", "removed"]
RANK = {"pass": 2, "acceptable": 1, "fail": 0}
ORDER = {"regression": 0, "improvement": 1, "flaky": 2, "added": 3, "removed": 4, "unchanged": 5}


class PairKey(BaseModel):
    """What pairs a trace of the base with one of the new results."""

    case_id: str = Field(description="The case id, or the trace id of a trace bound to no case.")
    group: str | None = Field(description="Skill group, if any.")
    repeat: int | None = Field(description="Repeat index, if any.")


class Sides(BaseModel):
    """A value before (base) and after (new); null where a side has none."""

    base: Any = Field(description="In the base results.")
    new: Any = Field(description="In the new results.")


class Pair(BaseModel):
    """One case × group × repeat in both results and what changed."""

    key: PairKey = Field(description="case_id, group, repeat.")
    change: Change = Field(description="regression, improvement, unchanged, flaky (repeats disagree), added, removed.")
    verdict: Sides = Field(description="The verdict result on each side (null: no verdict or no trace).")
    task_verdicts: Sides = Field(description="Every repeat's verdict of the task (case × group) on each side.")
    calls: list[AlignedCall] = Field(description="The two call sequences aligned.")
    scores: dict[str, Sides] = Field(description="Seed 003 total and grade, seed 001 steps, where they differ.")
    findings_appeared: list[str] = Field(description="Finding kinds only the new trace has.")
    findings_gone: list[str] = Field(description="Finding kinds only the base trace had.")
    tokens: Sides = Field(description="Input + output tokens on each side.")
    tool_calls: Sides = Field(description="Tool calls on each side.")


class Diff(BaseModel):
    """``tracekit diff``'s JSON: every pair, regressions first, then improvements, flaky, added, removed,
    unchanged; and the counts per change."""

    counts: dict[str, int] = Field(description="Pairs per change.")
    pairs: list[Pair] = Field(description="Every pair, in the order above (then by case id, naturally).")


def diff_results(base: Results, new: Results) -> Diff:
    """Pair the traces of two results and judge each pair (see the module docstring)."""
    before, after = _keyed(base.traces), _keyed(new.traces)
    tasks_before, tasks_after = _tasks(base.traces), _tasks(new.traces)
    pairs = []
    for key in list(before) + [key for key in after if key not in before]:
        old, now = before.get(key), after.get(key)
        task = (key[0], key[1])
        change = _change(old, now, tasks_before.get(task, []), tasks_after.get(task, []))
        pairs.append(_pair(key, change, old, now, tasks_before.get(task, []), tasks_after.get(task, [])))
    pairs.sort(key=lambda pair: (ORDER[pair.change], natural_key(pair.key.case_id), pair.key.group or "",
                                 -1 if pair.key.repeat is None else pair.key.repeat))  # fmt: skip
    counts = {change: sum(1 for pair in pairs if pair.change == change) for change in ORDER}
    return Diff(counts=counts, pairs=pairs)


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key putting task2 before task10."""
    import re

    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


Key = tuple[str, str | None, int | None]


def _key(trace: TraceResult) -> Key:
    return (trace.case_id or trace.trace_id, trace.group or None, trace.repeat)


def _keyed(traces: list[TraceResult]) -> dict[Key, TraceResult]:
    keyed: dict[Key, TraceResult] = {}
    for trace in traces:
        keyed.setdefault(_key(trace), trace)
    return keyed


def _tasks(traces: list[TraceResult]) -> dict[tuple[str, str | None], list[str]]:
    tasks: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    for trace in sorted(traces, key=lambda t: -1 if t.repeat is None else t.repeat):
        tasks[(trace.case_id or trace.trace_id, trace.group or None)].append(trace.result or "pending")
    return tasks


def _change(old: TraceResult | None, now: TraceResult | None, before: list[str], after: list[str]) -> Change:
    if old is None:
        return "added"
    if now is None:
        return "removed"
    decided_before = [v for v in before if v in RANK]
    decided_after = [v for v in after if v in RANK]
    if not decided_before or not decided_after:
        return "unchanged"
    if _mixed(decided_before) or _mixed(decided_after):
        return "flaky" if sorted(decided_before) != sorted(decided_after) else "unchanged"
    rank_before = min(RANK[v] for v in decided_before)
    rank_after = min(RANK[v] for v in decided_after)
    if rank_after < rank_before:
        return "regression"
    if rank_after > rank_before:
        return "improvement"
    return "unchanged"


def _mixed(verdicts: list[str]) -> bool:
    passes = sum(1 for verdict in verdicts if verdict in PASSING)
    return 0 < passes < len(verdicts)


def _pair(key: Key, change: Change, old: TraceResult | None, now: TraceResult | None,
          before: list[str], after: list[str]) -> Pair:  # fmt: skip
    def calls(trace: TraceResult | None) -> list[tuple[str, Any]]:
        return [(call.name, call.input) for call in trace.tool_calls if not call.history] if trace else []

    def kinds(trace: TraceResult | None) -> set[str]:
        return {finding.kind for finding in trace.findings} if trace else set()

    return Pair(
        key=PairKey(case_id=key[0], group=key[1], repeat=key[2]),
        change=change,
        verdict=Sides(base=old.result if old else None, new=now.result if now else None),
        task_verdicts=Sides(base=before, new=after),
        calls=align_calls(calls(old), calls(now)),
        scores={name: sides for name, sides in _scores(old, now).items() if sides.base != sides.new},
        findings_appeared=sorted(kinds(now) - kinds(old)),
        findings_gone=sorted(kinds(old) - kinds(now)),
        tokens=Sides(base=_tokens(old), new=_tokens(now)),
        tool_calls=Sides(base=old.stats.tool_calls if old else None, new=now.stats.tool_calls if now else None),
    )


def _scores(old: TraceResult | None, now: TraceResult | None) -> dict[str, Sides]:
    def get(trace: TraceResult | None, name: str) -> Any:
        if trace is None or trace.verdict is None:
            return None
        scores = trace.verdict.scores
        return {"tool_use.total": scores.tool_use.total, "tool_use.grade": scores.tool_use.grade,
                "efficiency.steps": scores.efficiency.steps}[name]  # fmt: skip

    return {name: Sides(base=get(old, name), new=get(now, name))
            for name in ("tool_use.total", "tool_use.grade", "efficiency.steps")}  # fmt: skip


def _tokens(trace: TraceResult | None) -> int | None:
    return trace.stats.input_tokens + trace.stats.output_tokens if trace else None
