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

The results JSON holds no times: the model latency deltas come from the trace files (``latency_reader``),
``traces[].trace_file`` relative to each results file's folder; a trace that cannot be read, or whose model
calls carry no latency, has an unknown latency (null), never 0.

Example::

    diff = diff_results(read_results_file("old/results.json"), read_results_file("new/results.json"),
                        latency=latency_reader("old", "new"))
    regressed = [pair.key for pair in diff.pairs if pair.change == "regression"]
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from tracekit.analyze.reliability import PASSING
from tracekit.diff.align import AlignedCall, align_calls
from tracekit.results.model import Results, TraceResult
from tracekit.storage import is_url
from tracekit.trace import load_trace

Change = Literal["regression", "improvement", "unchanged", "flaky", "added", "removed"]
RANK = {"pass": 2, "acceptable": 1, "fail": 0}
ORDER = {"regression": 0, "improvement": 1, "flaky": 2, "added": 3, "removed": 4, "unchanged": 5}
#: Changes a reviewer looks at (the HTML writes a page for each pair with one of them).
CHANGED = ("regression", "improvement", "flaky", "added", "removed")
#: ``meta`` keys naming an imported trace's task and its trial: (task key, trial key, label prefix).
TASK_KEYS = (("task_id", "trial", "task"), ("sample_id", "epoch", "sample"))

LatencyReader = Callable[[TraceResult, str], "float | None"]
"""Model latency (ms) of a trace of one side (``"base"`` or ``"new"``); None when unknown."""


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
    with_run = bool({t.run for t in base.traces if t.run} & {t.run for t in new.traces if t.run})
    before, after = _keyed(base.traces, with_run), _keyed(new.traces, with_run)
    tasks_before, tasks_after = _tasks(before), _tasks(after)
    pairs = []
    for key in list(before) + [key for key in after if key not in before]:
        old, now = before.get(key), after.get(key)
        task = key[:4]
        pair = _pair(key, old, now, tasks_before.get(task, []), tasks_after.get(task, []), latency)
        pairs.append(pair)
    pairs.sort(key=lambda pair: (ORDER[pair.change], natural_key(pair.key.case_id), pair.key.group or "",
                                 -1 if pair.key.repeat is None else pair.key.repeat,
                                 pair.run.new or pair.run.base or ""))  # fmt: skip
    counts = {change: sum(1 for pair in pairs if pair.change == change) for change in ORDER}
    return Diff(counts=counts, pairs=pairs)


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


def _keyed(traces: list[TraceResult], with_run: bool) -> dict[Key, TraceResult]:
    keyed: dict[Key, TraceResult] = {}
    seen: dict[tuple[Any, ...], int] = defaultdict(int)

    def put(case: str, group: str | None, run: str, repeat: int | None, trace: TraceResult) -> None:
        occurrence = seen[(case, group, run, repeat)]
        seen[(case, group, run, repeat)] += 1
        keyed[(case, group, run, occurrence, repeat)] = trace

    trials: dict[tuple[str, str], list[tuple[Any, str, TraceResult]]] = defaultdict(list)
    for trace in traces:
        run = (trace.run or "") if with_run else ""
        task = _task(trace) if trace.case_id is None else None
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


def _tasks(keyed: dict[Key, TraceResult]) -> dict[tuple[Any, ...], list[str]]:
    tasks: dict[tuple[Any, ...], list[tuple[int, str]]] = defaultdict(list)
    for key, trace in keyed.items():
        tasks[key[:4]].append((-1 if key[4] is None else key[4], _result(trace)))
    return {task: [result for _, result in sorted(found)] for task, found in tasks.items()}


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


def _pair(key: Key, old: TraceResult | None, now: TraceResult | None, before: list[str], after: list[str],
          latency: LatencyReader | None) -> Pair:  # fmt: skip
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
        change=_change(old, now, before, after),
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
    )
    pair._traces = (old, now)
    return pair


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


def latency_reader(base_dir: str | Path | None, new_dir: str | Path | None) -> LatencyReader:
    """Reads a trace's summed model latency (ms); ``*_dir``: the folder each side's ``trace_file`` is
    relative to (None: the working directory)."""
    folders = {"base": base_dir, "new": new_dir}

    def read(trace: TraceResult, side: str) -> float | None:
        return model_latency_ms(trace.trace_file, folders.get(side))

    return read


def model_latency_ms(trace_file: str | None, folder: str | Path | None) -> float | None:
    """The sum of the model calls' ``latency_ms`` in a trace file (None: unreadable or no latency recorded)."""
    if not trace_file:
        return None
    where: str | Path = trace_file
    if not is_url(trace_file) and not os.path.isabs(trace_file):
        base = os.fspath(folder) if folder is not None else os.getcwd()
        # results in object storage name local trace files from the root (tracekit.analyze.sources)
        where = Path("/", trace_file) if is_url(base) else Path(base) / trace_file
    try:
        trace = load_trace(where, fast=True)
    except Exception:  # an unreadable trace file: its latency is unknown, the diff goes on
        return None
    latencies = [call.latency_ms for call in trace.kind("model_call") if call.latency_ms is not None]
    return round(sum(latencies), 3) if latencies else None
