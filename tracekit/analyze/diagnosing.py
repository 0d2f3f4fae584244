"""Analyze's side of the diagnosis: run the invariants on a trace, report violations as findings, and pick
the critical step of a trace that failed (``tracekit.diagnose``).

A trace failed when its verdict is ``fail``, its ``meta.reward`` is a number below 1 (tau-bench and other
imported benchmarks), or an invariant was broken. Only then is a ``diagnosis`` written, so a trace where
nothing fires is written exactly as before. The seed 004 attribution of a failing C4 verdict is one more
piece of evidence, and gets the diagnosis's answer (``critical_step``, ``critical_call``): one answer to
"where did it go wrong".

Example::

    findings, diagnosis = diagnose_entry(trace, findings, verdict, policy)
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tracekit.analyze.detectors import Finding
from tracekit.diagnose import Conversation, Policy, diagnose, load_policy, trace_violations
from tracekit.diagnose.critical import (
    attribution_violation,
    finding_violations,
    handover_violation,
    outside_violations,
)
from tracekit.diagnose.reference import Reference, load_expected_actions
from tracekit.diagnose.talked_past import may_talk_past

if TYPE_CHECKING:
    from tracekit.results.diagnosis import Diagnosis
    from tracekit.trace import Trace


@lru_cache(maxsize=8)
def policy_named(name: str) -> Policy:
    """The policy of ``--policy`` (a file or a shipped name), loaded once per process."""
    return load_policy(name)


@lru_cache(maxsize=4)
def expected_actions_named(path: str) -> dict[str, Reference]:
    """The references of ``--expected-actions`` (by trace id or case id), loaded once per process."""
    return load_expected_actions(path)


def reference_of(trace: Trace, policy: Policy | None, expected_actions: str | None) -> Reference | None:
    """The expected calls of ``trace``: the user's (``--expected-actions``, by trace id, then case id), else
    with a policy (which says which calls change state) the ones its header carries (a benchmark's)."""
    if expected_actions is not None:
        given = expected_actions_named(expected_actions)
        found = given.get(trace.header.trace_id) or given.get(trace.header.case_id or "")
        if found is not None:
            return found
    return Reference.of_meta(trace.header.meta) if policy is not None else None


def failed_by_outcome(trace: Trace, verdict: Any) -> list[str]:
    """Why the trace failed before any invariant is read: ``verdict`` (fail), ``reward`` (below 1)."""
    why = []
    if verdict is not None and verdict.get("result") == "fail":
        why.append("verdict")
    reward = trace.header.meta.get("reward") if isinstance(trace.header.meta, dict) else None
    if isinstance(reward, (int, float)) and not isinstance(reward, bool) and reward < 1:
        why.append("reward")
    return why


def diagnose_entry(
    trace: Trace,
    findings: list[Finding],
    verdict: Any,
    policy: Policy | None,
    reference: Reference | None = None,
) -> tuple[list[Finding], Diagnosis | None]:
    """The violations as findings (appended to ``findings``) and the ``diagnosis`` (None: not failed).
    ``verdict``: the verdict as a dict or a results model (both read with ``[key]`` and ``.get``);
    ``reference``: the expected calls (``reference_of``)."""
    why = failed_by_outcome(trace, verdict)
    if not (why or policy is not None or reference is not None or _worth_reading(trace)):
        return findings, None  # nothing the invariants could read: the trace is written as before
    conversation = Conversation.of(trace)
    violations = trace_violations(trace, conversation, policy, reference)
    if violations:
        why.append("violations")
        findings = findings + [_finding(violation) for violation in violations]
    if not why:
        return findings, None
    evidence = list(violations)
    attribution = verdict["scores"].get("attribution") if verdict is not None else None
    if "verdict" in why or "reward" in why:
        evidence += finding_violations([f for f in findings if f.kind not in _OWN_KINDS], conversation)
        evidence += outside_violations(trace)
        for signal in (attribution_violation(attribution, conversation), handover_violation(conversation, policy)):
            if signal is not None:
                evidence.append(signal)
    diagnosis = diagnose(evidence, conversation, why)
    if diagnosis is None:
        return findings, None
    if attribution is not None:
        _put(attribution, "critical_step", diagnosis.step)
        _put(attribution, "critical_call", diagnosis.call)
    return findings, diagnosis


def _put(record: Any, key: str, value: Any) -> None:
    """Set ``key`` on the attribution record, a plain dict or a results model (an undeclared key)."""
    if isinstance(record, dict):
        record[key] = value
    else:
        setattr(record, key, value)


_OWN_KINDS = frozenset({"schema_violation", "policy_violation", "error_talked_past", "open_task",
                        "reference_mismatch"})  # fmt: skip


def _worth_reading(trace: Trace) -> bool:
    """Whether a trace with no policy and no failed outcome can break an invariant: a request that declared
    tools (schema invariants) or a failed tool result (errors talked past)."""
    for call in trace.kind("model_call"):
        request = call.request
        if isinstance(request, dict) and "tools" in request:
            return True
    return may_talk_past(trace)


def _finding(violation: Any) -> Finding:
    calls = [violation.call] if violation.call is not None else []
    return Finding(violation.kind, "error", calls, f"[{violation.rule}] {violation.message}", messages=[violation.step])
