"""Pairing two analyses of the same case library and judging what changed, pair by pair.

A pair is the same (case, group, repeat) in both results. The case is the case id; an imported trace bound
to no case is keyed by the task its importer names (``meta.task_id``, e.g. tau-bench's, or an inspect_ai
``sample_id``), its k-th trial on one side paired with its k-th on the other (so trial 0 of one import
pairs with trial 1 of another); any other trace by its trace id. Traces are paired within the same run
name when the two results share run names (two analyses of the same runs); across runs otherwise
(``reference`` against ``flawed``).

A pair's change is judged on all the repeats of its task (case × group) together: each side's verdicts
count passes as pass^k does (``tracekit.analyze.reliability.PASSING``). When a side's repeats disagree
(some pass, some fail) the task is ``flaky``, never a regression; otherwise the verdicts are ranked
(pass > acceptable > fail) and a worse one is a ``regression``, a better one an ``improvement``.
``pending`` decides nothing. A trace without a verdict is judged by its importer's outcome
(``outcome_result``: tau-bench ``reward`` 1 is a pass, 0 a fail).

The results JSON holds no times: the model latency deltas come from the trace files (``tracekit.diff.latency``),
``traces[].trace_file`` relative to each results file's folder; a trace that cannot be read, or whose model
calls carry no latency, has an unknown latency (null), never 0.

Example::

    diff = diff_results(read_results_file("old/results.json"), read_results_file("new/results.json"),
                        latency=latency_reader("old", "new"))
    regressed = [pair.key for pair in diff.pairs if pair.change == "regression"]
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from tracekit.analyze.reliability import PASSING
from tracekit.diff.align import AlignedCall, align_calls
from tracekit.diff.latency import LatencyReader
from tracekit.results.model import Results, TraceResult

Change = Literal["regression", "improvement", "unchanged", "flaky", "added", "removed"]
RANK = {"pass": 2, "acceptable": 1, "fail": 0}
ORDER = {"regression": 0, "improvement": 1, "flaky": 2, "added": 3, "removed": 4, "unchanged": 5}
#: Changes a reviewer looks at (the HTML writes a page for each pair with one of them).
CHANGED = ("regression", "improvement", "flaky", "added", "removed")
#: ``meta`` keys naming an imported trace's task and its trial: (task key, trial key, label prefix).
TASK_KEYS = (("task_id", "trial", "task"), ("sample_id", "epoch", "sample"))



class PairKey(BaseModel):
    """What pairs a trace of the base with one of the new results."""

    case_id: str = Field(description="The case id; for a trace bound to no case, its importer's task "
                         "(``airline/task3``) or its trace id.")  # fmt: skip
    group: str | None = Field(description="Skill group, if any.")
    repeat: int | None = Field(description="Repeat index, if any (an imported task's trials: 0, 1, ... per side).")


class Sides(BaseModel):
    """A value before (base) and after (new); null where a side has none."""

    base: Any = Field(description="In the base results.")
    new: Any = Field(description="In the new results.")


class CriticalStep(BaseModel):
    """Where each side went wrong first (``traces[].diagnosis``), and how that changed."""

    change: Literal["moved", "category", "moved_and_category", "appeared", "gone"] = Field(
        description="moved (another step), category (same step, another AgentRx category), both, appeared "
        "(only the new trace went wrong somewhere), gone (only the base trace did)."
    )
    step: Sides = Field(description="The critical step (message index) on each side (null: none).")
    category: Sides = Field(description="Its AgentRx category on each side (null: no diagnosis).")
    rule: Sides = Field(description="The invariant or finding that decided it on each side.")


def _none(value: Any) -> bool:
    return value is None


class Pair(BaseModel):
    """One case × group × repeat in both results and what changed."""

    key: PairKey = Field(description="case_id, group, repeat.")
    change: Change = Field(description="regression, improvement, unchanged, flaky (repeats disagree), added, removed.")
    verdict: Sides = Field(description="The verdict result on each side (null: no verdict or no trace); for a "
                           "trace bound to no case, the one its importer's outcome gives.")  # fmt: skip
    task_verdicts: Sides = Field(description="Every repeat's verdict of the task (case × group) on each side.")
    trace_id: Sides = Field(description="The trace paired on each side.")
    run: Sides = Field(description="The run (traces[].run) of each side's trace.")
    outcome: Sides = Field(description="The importer's own outcome (``reward 1.0``), where a trace has one.")
    calls: list[AlignedCall] = Field(description="The two call sequences aligned.")
    scores: dict[str, Sides] = Field(description="Seed 003 total and grade, seed 001 steps, where they differ.")
    findings_appeared: list[str] = Field(description="Finding kinds only the new trace has.")
    findings_gone: list[str] = Field(description="Finding kinds only the base trace had.")
    tokens: Sides = Field(description="Input + output tokens on each side.")
    tool_calls: Sides = Field(description="Tool calls on each side.")
    latency_ms: Sides = Field(description="Model latency summed over the trace's model calls (null: unknown, "
                              "e.g. the trace file was not read).")  # fmt: skip
    critical_step: CriticalStep | None = Field(
        default=None,
        exclude_if=_none,
        description="When the critical step of a failed trace moved or changed category (tracekit.diagnose); left "
        "out when it did not change.",
    )
    _traces: tuple[TraceResult | None, TraceResult | None] = PrivateAttr(default=(None, None))

    @property
    def traces(self) -> tuple[TraceResult | None, TraceResult | None]:
        """The base and new entries of the results (not in the JSON)."""
        return self._traces

    @property
    def label(self) -> str:
        """``CASE-01 A#1``: the case with its group and repeat."""
        key = self.key
        return key.case_id + (f" {key.group}" if key.group else "") + ("" if key.repeat is None else f"#{key.repeat}")


class Diff(BaseModel):
    """``tracekit diff``'s JSON: every pair, regressions first, then improvements, flaky, added, removed,
    unchanged; and the counts per change."""

    counts: dict[str, int] = Field(description="Pairs per change.")
    pairs: list[Pair] = Field(description="Every pair, in the order above (then by case id, naturally).")


def diff_results(base: Results, new: Results, latency: LatencyReader | None = None) -> Diff:
    """Pair the traces of two results and judge each pair (see the module docstring). ``latency`` reads a
    trace's model latency (``latency_reader``); without it the latency deltas are null."""
    plan = plan_pairs([SideKey.of(i, t) for i, t in enumerate(base.traces)],
                      [SideKey.of(i, t) for i, t in enumerate(new.traces)])  # fmt: skip
    pairs = [planned.build(base.traces.__getitem__, new.traces.__getitem__, latency) for planned in plan]
    return Diff(counts=count_changes(plan), pairs=pairs)


@dataclass(frozen=True, slots=True)
class SideKey:
    """What pairing needs of one trace of a side: where it is in ``traces[]``, what pairs it, its result
    (the verdict's, else its importer's outcome: ``pending`` when neither). Small, so that two large results
    are paired without their entries in memory (``tracekit.diff.stream``)."""

    position: int
    case_id: str | None
    group: str | None
    run: str | None
    repeat: int | None
    trace_id: str
    task: tuple[str, Any] | None
    """An unbound imported trace's task label and trial (``_task``)."""
    result: str

    @classmethod
    def of(cls, position: int, trace: TraceResult) -> SideKey:
        """The key of the entry at ``position``."""
        return cls(position, trace.case_id, trace.group, trace.run, trace.repeat, trace.trace_id,
                   _task(trace) if trace.case_id is None else None, _result(trace))  # fmt: skip


@dataclass(frozen=True, slots=True)
class PlannedPair:
    """A pair before its entries are read: its key, each side's trace, the task's verdicts, its change."""

    key: Key
    old: SideKey | None
    now: SideKey | None
    before: list[str]
    after: list[str]
    change: Change

    def build(self, base: Callable[[int], TraceResult], new: Callable[[int], TraceResult],
              latency: LatencyReader | None) -> Pair:  # fmt: skip
        """The pair, each side's entry read by its side's function of the position (``traces[].__getitem__``)."""
        old = base(self.old.position) if self.old is not None else None
        now = new(self.now.position) if self.now is not None else None
        return _pair(self.key, old, now, self.before, self.after, self.change, latency)


def plan_pairs(base: list[SideKey], new: list[SideKey]) -> list[PlannedPair]:
    """Every pair of the two sides, judged and in the order of ``Diff.pairs``, without their entries."""
    with_run = bool({t.run for t in base if t.run} & {t.run for t in new if t.run})
    before, after = _keyed(base, with_run), _keyed(new, with_run)
    tasks_before, tasks_after = _tasks(before), _tasks(after)
    plan = []
    for key in list(before) + [key for key in after if key not in before]:
        old, now = before.get(key), after.get(key)
        task_before, task_after = tasks_before.get(key[:4], []), tasks_after.get(key[:4], [])
        plan.append(PlannedPair(key, old, now, task_before, task_after, _change(old, now, task_before, task_after)))

    def order(planned: PlannedPair) -> tuple[Any, ...]:
        run = (planned.now.run if planned.now else None) or (planned.old.run if planned.old else None)
        key = planned.key
        return (ORDER[planned.change], natural_key(key[0]), key[1] or "", -1 if key[4] is None else key[4], run or "")

    plan.sort(key=order)
    return plan


def count_changes(plan: Iterable[PlannedPair]) -> dict[str, int]:
    """Pairs per change, every change named (``Diff.counts``)."""
    counts = dict.fromkeys(ORDER, 0)
    for planned in plan:
        counts[planned.change] += 1
    return counts


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key putting task2 before task10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def outcome_result(trace: TraceResult) -> str | None:
    """A verdict from an importer's own outcome in ``meta``, for a trace bound to no case: ``reward`` or
    ``score`` 1 is a pass and 0 a fail, ``success`` true or false, ``outcome`` pass/acceptable/fail as is;
    None for anything else (no judgement)."""
    meta = trace.meta
    for name in ("reward", "score"):
        value = meta.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value in (0, 1):
            return "pass" if value == 1 else "fail"
    if isinstance(meta.get("success"), bool):
        return "pass" if meta["success"] else "fail"
    outcome = meta.get("outcome")
    return outcome if isinstance(outcome, str) and outcome in RANK else None


Key = tuple[str, str | None, str, int, int | None]
"""(case, group, run or "", occurrence, repeat): the occurrence keeps apart traces that would share a key
(two runs of one side when the sides share no run name: the first pairs with the other side's first)."""


def _task(trace: TraceResult) -> tuple[str, Any] | None:
    """An unbound imported trace's task label and its trial (for ordering), when its importer names them."""
    for task_key, trial_key, prefix in TASK_KEYS:
        task = trace.meta.get(task_key)
        if task is not None and not isinstance(task, dict | list):
            scope = trace.meta.get("domain") or trace.meta.get("task")
            label = f"{prefix}{task}" if str(task).isdigit() else str(task)
            return (f"{scope}/{label}" if scope and isinstance(scope, str) else label), trace.meta.get(trial_key)
    return None


def _keyed(traces: list[SideKey], with_run: bool) -> dict[Key, SideKey]:
    keyed: dict[Key, SideKey] = {}
    seen: dict[tuple[Any, ...], int] = defaultdict(int)

    def put(case: str, group: str | None, run: str, repeat: int | None, trace: SideKey) -> None:
        occurrence = seen[(case, group, run, repeat)]
        seen[(case, group, run, repeat)] += 1
        keyed[(case, group, run, occurrence, repeat)] = trace

    trials: dict[tuple[str, str], list[tuple[Any, str, SideKey]]] = defaultdict(list)
    for trace in traces:
        run = (trace.run or "") if with_run else ""
        task = trace.task
        if task is not None:
            trials[(task[0], run)].append((str(task[1]), trace.trace_id, trace))
            continue
        put(trace.case_id or trace.trace_id, trace.group or None, run, trace.repeat, trace)
    for (label, run), found in trials.items():
        found.sort(key=lambda item: (natural_key(item[0]), item[1]))
        for number, (_, _, trace) in enumerate(found):
            put(label, None, run, number, trace)
    return keyed


def _result(trace: TraceResult) -> str:
    if trace.verdict is not None:
        return trace.verdict.result
    return outcome_result(trace) or "pending"


def _tasks(keyed: dict[Key, SideKey]) -> dict[tuple[Any, ...], list[str]]:
    tasks: dict[tuple[Any, ...], list[tuple[int, str]]] = defaultdict(list)
    for key, trace in keyed.items():
        tasks[key[:4]].append((-1 if key[4] is None else key[4], trace.result))
    return {task: [result for _, result in sorted(found)] for task, found in tasks.items()}


def _change(old: SideKey | None, now: SideKey | None, before: list[str], after: list[str]) -> Change:
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


def _pair(key: Key, old: TraceResult | None, now: TraceResult | None, before: list[str], after: list[str],
          change: Change, latency: LatencyReader | None) -> Pair:  # fmt: skip
    def calls(trace: TraceResult | None) -> list[tuple[str, Any]]:
        return [(call.name, call.input) for call in trace.tool_calls if not call.history] if trace else []

    def kinds(trace: TraceResult | None) -> set[str]:
        return {finding.kind for finding in trace.findings} if trace else set()

    def sides(read: Callable[[TraceResult], Any]) -> Sides:
        return Sides(base=read(old) if old else None, new=read(now) if now else None)

    def outcome(trace: TraceResult) -> str | None:
        found = [f"{name} {trace.meta[name]}" for name in ("reward", "outcome", "score", "success")
                 if trace.meta.get(name) is not None and not isinstance(trace.meta[name], dict | list)]  # fmt: skip
        return found[0] if found else None

    pair = Pair(
        key=PairKey(case_id=key[0], group=key[1], repeat=key[4]),
        change=change,
        verdict=Sides(base=_verdict(old), new=_verdict(now)),
        task_verdicts=Sides(base=before, new=after),
        trace_id=sides(lambda trace: trace.trace_id),
        run=sides(lambda trace: trace.run),
        outcome=sides(outcome),
        calls=align_calls(calls(old), calls(now)),
        scores={name: value for name, value in _scores(old, now).items() if value.base != value.new},
        findings_appeared=sorted(kinds(now) - kinds(old)),
        findings_gone=sorted(kinds(old) - kinds(now)),
        tokens=sides(lambda trace: trace.stats.input_tokens + trace.stats.output_tokens),
        tool_calls=sides(lambda trace: trace.stats.tool_calls),
        latency_ms=Sides(
            base=latency(old, "base") if latency and old else None, new=latency(now, "new") if latency and now else None
        ),
        critical_step=critical_change(old, now),
    )
    pair._traces = (old, now)
    return pair


def critical_change(old: TraceResult | None, now: TraceResult | None) -> CriticalStep | None:
    """How the critical step changed between two paired traces (None: unchanged, or a side is missing)."""
    if old is None or now is None:
        return None
    before, after = getattr(old, "diagnosis", None), getattr(now, "diagnosis", None)
    step = Sides(base=before.step if before else None, new=after.step if after else None)
    category = Sides(base=before.category if before else None, new=after.category if after else None)
    if step.base is None and step.new is None:
        return None
    if step.base is None or step.new is None:
        change = "appeared" if step.base is None else "gone"
    else:
        moved, recategorized = step.base != step.new, category.base != category.new
        if not (moved or recategorized):
            return None
        change = "moved_and_category" if moved and recategorized else "moved" if moved else "category"
    rule = Sides(base=before.rule if before else None, new=after.rule if after else None)
    return CriticalStep(change=change, step=step, category=category, rule=rule)


def _verdict(trace: TraceResult | None) -> str | None:
    if trace is None:
        return None
    return trace.verdict.result if trace.verdict is not None else outcome_result(trace)


def _scores(old: TraceResult | None, now: TraceResult | None) -> dict[str, Sides]:
    def get(trace: TraceResult | None, name: str) -> Any:
        if trace is None or trace.verdict is None:
            return None
        scores = trace.verdict.scores
        return {"tool_use.total": scores.tool_use.total, "tool_use.grade": scores.tool_use.grade,
                "efficiency.steps": scores.efficiency.steps}[name]  # fmt: skip

    return {name: Sides(base=get(old, name), new=get(now, name))
            for name in ("tool_use.total", "tool_use.grade", "efficiency.steps")}  # fmt: skip
