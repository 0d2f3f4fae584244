"""Outcome checks of a case: counts and their tiers, seed 003's tool tiers, recovery, the final answer.

See ``check`` for the ``Check`` model and ``checks`` for the checks on the calls themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from tracekit.analyze import counts
from tracekit.analyze.check import Check, CheckResult
from tracekit.analyze.recovery import recovery_episodes
from tracekit.analyze.selection import needs_a_tool, none_tier, tool_tier

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.cases import Tiers


# --------------------------------------------------------------------------- tiers


def _tiered(name: str, tiers: Tiers, value: int | float, evidence: str, calls: list[int] | None = None) -> Check:
    grade = tiers.grade(value)
    bounds = {"pass": tiers.pass_.model_dump(exclude_none=True)}
    if tiers.acceptable is not None:
        bounds["acceptable"] = tiers.acceptable.model_dump(exclude_none=True)
    return Check(name, grade, evidence, calls or [], bounds, value)


def _count_tiers(run: CaseRun) -> Iterator[Check]:
    expect = run.case.expect
    judged = run.judged
    if expect.call_count is not None:
        shown = ", ".join(node.tool for node in judged) or "none"
        yield _tiered(
            "call_count",
            expect.call_count,
            len(judged),
            f"{len(judged)} tool calls ({shown})",
            [node.index for node in judged],
        )
    for tool, tiers in expect.tool_counts.items():
        calls = [node.index for node in judged if node.tool == tool]
        yield _tiered(f"tool_counts:{tool}", tiers, len(calls), f"{len(calls)} calls of {tool}", calls)
    if expect.output_tokens is not None:
        count = run.answer_tokens
        yield _tiered(
            "output_tokens", expect.output_tokens, count.tokens, f"final answer: {count.tokens} tokens ({count.method})"
        )
    if expect.retries is not None or expect.max_retries is not None:
        number, calls = counts.retries(judged)
        if expect.retries is not None:
            yield _tiered(
                "retries", expect.retries, number, f"at most {number} re-calls of a tool after an error", calls
            )
        if expect.max_retries is not None:
            ok = number <= expect.max_retries
            yield Check(
                "max_retries",
                "pass" if ok else "fail",
                f"{number} re-calls of a tool after an error (allowed {expect.max_retries})",
                calls,
                expect.max_retries,
                number,
            )
    if expect.asks is not None:
        asked = counts.questions(run.trace, run.history_messages)
        yield _tiered("asks", expect.asks, len(asked), f"{len(asked)} questions to the user after the history")
    if expect.loop_repeats is not None:
        number, calls = counts.loop_repeats(judged)
        yield _tiered(
            "loop_repeats", expect.loop_repeats, number, f"a cycle of calls ran {number} times in a row", calls
        )
    if expect.attempts is not None:
        number = counts.attempts(judged)
        yield _tiered("attempts", expect.attempts, number, f"{number} distinct calls tried")
    if expect.calls_after_failure is not None:
        calls = counts.calls_after_failure(run.graph.nodes)
        tools = ", ".join(sorted({run.graph.node(index).tool for index in calls})) or "none"
        yield _tiered(
            "calls_after_failure",
            expect.calls_after_failure,
            len(calls),
            f"{len(calls)} calls of a tool after it had returned an error ({tools})",
            calls,
        )


def _efficiency_score(run: CaseRun) -> Iterator[Check]:
    """Seed 001's 效率得分 decides the case: (optimal steps / steps) x (optimal tokens / tokens) x 100."""
    rule = run.case.expect.efficiency_score
    if rule is None:
        return
    steps = max(len(run.judged), 1)
    tokens = run.answer_tokens
    if not tokens.tokens:
        yield Check("efficiency_score", "fail", "no final answer: the efficiency score cannot be computed")
        return
    score = (rule.optimal_steps / steps) * (rule.optimal_tokens / tokens.tokens) * 100
    shown = round(score, 1)
    evidence = (
        f"效率得分 = ({rule.optimal_steps}/{steps} 步) × ({rule.optimal_tokens}/{tokens.tokens} tokens, "
        f"{tokens.method}) × 100 = {shown}"
    )
    yield _tiered("efficiency_score", rule.tiers, shown, evidence, [node.index for node in run.judged])


# --------------------------------------------------------------------------- selection, recovery, answer


def _tool_tiers(run: CaseRun) -> Iterator[Check]:
    """Verdict rules of cases/traps/SCORING.md: a wrong-tier call fails (unless it is the injected failure
    of ``recovery.failing_tool`` recovered from within ``max_retries``), an acceptable-tier call is
    acceptable; with no call, the tier of ``none`` decides."""
    tiers = run.case.expect.tool_tiers
    if tiers is None:
        return

    expected = tiers.model_dump()
    if not run.judged:
        tier = none_tier(run) or ("wrong" if needs_a_tool(run) else "best")
        grades: dict[str, CheckResult] = {"best": "pass", "acceptable": "acceptable", "wrong": "fail"}
        result = grades[tier]
        yield Check("tool_tiers", result, f"no tool called ('none' is {tier})", expected=expected, actual={})
        return
    tiers_of = {node.index: tool_tier(run, node.tool)[0] for node in run.judged}
    excused = {index for index in _excused_wrong_calls(run) if tiers_of.get(index) == "wrong"}
    counted = {index: tier for index, tier in tiers_of.items() if not (tier == "wrong" and index in excused)}
    found = set(counted.values())
    shown = ", ".join(f"#{i} {run.graph.node(i).tool}={tier}" for i, tier in tiers_of.items())
    if excused:
        shown += f" (wrong-tier calls {sorted(excused)} are the injected failure, recovered from)"
    result = "fail" if "wrong" in found else "acceptable" if "acceptable" in found or excused else "pass"
    if "none" in tiers.best and found - {"best"}:
        shown += " (over-tooling: answering without a tool was best)"
    yield Check("tool_tiers", result, shown, list(tiers_of), expected, {str(k): v for k, v in tiers_of.items()})


def _excused_wrong_calls(run: CaseRun) -> set[int]:
    recovery = run.case.expect.recovery
    if recovery is None or recovery.failing_tool is None:
        return set()

    allowed = run.case.expect.max_retries
    excused: set[int] = set()
    for episode in recovery_episodes(run, recovery.failing_tool):
        within = allowed is None or len(episode.failures) - 1 <= allowed
        if episode.succeeded_by is not None and within:
            excused.update(episode.failures)
    return excused


def _recovery(run: CaseRun) -> Iterator[Check]:
    recovery = run.case.expect.recovery
    if recovery is None or not recovery.expected:
        return

    episodes = recovery_episodes(run, recovery.failing_tool)
    if not episodes:
        what = f"{recovery.failing_tool} never failed" if recovery.failing_tool else "No failure observed"
        yield Check("recovery", "untested", f"{what}: recovery untested", expected=recovery.accept)
        return
    first = episodes[0]
    calls = first.failures
    accepted = first.accepted([mode for mode in recovery.accept if mode != "explain"])
    if accepted:
        yield Check("recovery", "pass", f"{first.describe()} (accepted: {', '.join(accepted)})", calls, recovery.accept)
    elif "explain" in recovery.accept:
        hint = " (the answer mentions the failure)" if first.reported else ""
        yield Check(
            "recovery",
            "pending",
            f"{first.describe()}; whether it explained the failure with an alternative needs the judge{hint}",
            calls,
            recovery.accept,
        )
    else:
        yield Check(
            "recovery",
            "fail",
            f"{first.describe()}: no accepted recovery ({', '.join(recovery.accept)})",
            calls,
            recovery.accept,
        )


def _answer(run: CaseRun) -> Iterator[Check]:
    answer_check = run.case.expect.answer
    if answer_check is None:
        return
    text = run.final_answer
    problems = [f"missing {s!r}" for s in answer_check.contains_all if s not in text]
    if answer_check.contains_any and not any(s in text for s in answer_check.contains_any):
        problems.append(f"none of {answer_check.contains_any!r}")
    problems += [f"contains {s!r}" for s in answer_check.not_contains if s in text]
    if answer_check.regex is not None and re.search(answer_check.regex, text) is None:
        problems.append(f"does not match /{answer_check.regex}/")
    if answer_check.not_regex is not None:
        found = re.search(answer_check.not_regex, text)
        if found is not None:
            problems.append(f"contains {found[0]!r} (/{answer_check.not_regex}/)")
    shown = text[:160] + ("…" if len(text) > 160 else "")
    if problems:
        yield Check("answer", "fail", f"final answer {'; '.join(problems)}: {shown!r}")
    else:
        yield Check("answer", "pass", f"final answer: {shown!r}")


CHECKS: list[Callable[[CaseRun], Iterator[Check]]] = [
    _count_tiers, _efficiency_score, _tool_tiers, _recovery, _answer
]
"""The outcome checks, in the order they are listed in a verdict."""
