"""The critical step of a failed trace: the earliest violation that nothing later repaired.

The rule (``docs/diagnosis.md``), after AgentRx's "first unrecoverable failure" (Barke et al. 2026, arXiv
2602.02475), without a model:

1. the evidence is every violation of the invariants (schema, policy, errors talked past, open task) and,
   for a trace that failed otherwise, the detectors' findings, the seed 004 attribution's signal,
   failures outside the conversation (upstream errors, refusals) and a hand-over (a transfer) that ended it;
2. a violation at a call is *repaired* when that call failed (so it changed nothing) and a later call of the
   same tool succeeded without a violation of its own; a violation of the conversation as a whole (an
   answer, an open end) is never repaired;
3. the critical step is the earliest unrepaired violation (by message index, then call index); when all were
   repaired, the earliest one, with ``recovered`` true; with no evidence, no step and ``Inconclusive``.

Example::

    diagnosis = diagnose(violations, conversation, failed_because=["reward"])
    diagnosis.headline   # 'went wrong at step 19: Instruction/Plan Adherence Failure: call #7 ...'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tracekit.diagnose.violation import (
    ADHERENCE,
    GUARDRAILS,
    INCONCLUSIVE,
    INVENTION,
    NOT_SUPPORTED,
    SYSTEM,
    Category,
    Violation,
)
from tracekit.results.diagnosis import Diagnosis, EvidenceStep

if TYPE_CHECKING:
    from tracekit.diagnose.conversation import Conversation
    from tracekit.diagnose.policy import Policy
    from tracekit.trace import Trace

#: The AgentRx category of each detector finding kind (the ones not named: Instruction/Plan Adherence Failure).
FINDING_CATEGORIES: dict[str, Category] = {
    "ungrounded_argument": INVENTION,
}
#: The AgentRx category of each seed 004 failure kind (tracekit.analyze.attribution.FAILURE_TYPES).
ATTRIBUTION_CATEGORIES: dict[str, Category] = {
    "loop": ADHERENCE,
    "deadlock": ADHERENCE,
    "premature_abandonment": ADHERENCE,
    "unexplained_abandonment": ADHERENCE,
    "fabrication": INVENTION,
}
_REFUSALS = frozenset({"refusal", "content_filter"})


def diagnose(
    violations: Iterable[Violation], conversation: Conversation, failed_because: list[str]
) -> Diagnosis | None:
    """The diagnosis of a trace that failed (``failed_because`` not empty), else None."""
    if not failed_because:
        return None
    ordered = sorted(violations, key=Violation.sort_key)
    if not ordered:
        return Diagnosis(step=None, category=INCONCLUSIVE, failed_because=failed_because)
    broken_calls = {violation.call for violation in ordered if violation.call is not None}
    unrepaired = [violation for violation in ordered if not repaired(violation, conversation, broken_calls)]
    critical = unrepaired[0] if unrepaired else ordered[0]
    chain = [_evidence(critical)]
    for step in critical.depends_on:
        chain.extend(_evidence(other) for other in ordered if other.step == step and other is not critical)
    return Diagnosis(
        step=critical.step,
        call=critical.call,
        category=critical.category,
        rule=critical.rule,
        evidence=chain,
        recovered=not unrepaired,
        failed_because=failed_because,
        violations=len(ordered),
    )


def repaired(violation: Violation, conversation: Conversation, broken_calls: set[int]) -> bool:
    """Whether a later step repaired ``violation`` (rule 2 of the module docstring)."""
    if violation.call is None:
        return False
    calls = conversation.calls
    position = next((i for i, call in enumerate(calls) if call.index == violation.call), None)
    if position is None or not calls[position].failed:
        return False
    name = calls[position].name
    return any(
        call.name == name and call.succeeded and call.index not in broken_calls for call in calls[position + 1 :]
    )


def finding_violations(findings: Iterable[Any], conversation: Conversation) -> list[Violation]:
    """Detector findings (``kind``, ``calls``, ``messages``, ``message``) as evidence at their first step."""
    steps = {call.index: call.step for call in conversation.calls}
    found = []
    for finding in findings:
        if finding.severity == "info":
            continue
        call = finding.calls[0] if finding.calls else None
        step = steps.get(call) if call is not None else (finding.messages[0] if finding.messages else None)
        if step is None:
            continue
        category = FINDING_CATEGORIES.get(finding.kind, ADHERENCE)
        found.append(Violation(finding.kind, finding.kind, step, call, finding.message, category))
    return found


def attribution_violation(record: dict[str, Any] | None, conversation: Conversation) -> Violation | None:
    """The seed 004 attribution's primary signal (its evidence's first call) as evidence, when it names one."""
    if not record:
        return None
    calls = record.get("evidence", {}).get("calls") or []
    steps = {call.index: call.step for call in conversation.calls}
    if not calls or calls[0] not in steps:
        return None
    kind = record["failure_kind"]
    message = f"{record['failure_type']} ({kind}): {record['symptom']}"
    return Violation("attribution", f"attribution:{kind}", steps[calls[0]], calls[0], message,
                     ATTRIBUTION_CATEGORIES.get(kind, ADHERENCE))  # fmt: skip


def outside_violations(trace: Trace) -> list[Violation]:
    """Failures outside the conversation: a model call that failed or was refused, an agent that crashed."""
    found = []
    steps = {message.model_call: message.message_index for message in trace.kind("assistant_message")}
    last = max((message.message_index for message in trace.kind("user_message")), default=0)
    for call in trace.kind("model_call"):
        step = steps.get(call.index, last)
        if call.error is not None or (call.status is not None and call.status >= 400):
            found.append(Violation("system", "system:model_call", step, None,
                                   f"model call {call.index} failed (status {call.status}).", SYSTEM))  # fmt: skip
        elif call.stop_reason in _REFUSALS:
            message = f"model call {call.index} was refused ({call.stop_reason})."
            found.append(Violation("guardrails", "guardrails:refusal", step, None, message, GUARDRAILS))
    for run in trace.kind("agent_run"):
        if run.timed_out or (run.exit_status not in (0, None)):
            why = "timed out" if run.timed_out else f"exited with status {run.exit_status}"
            found.append(Violation("system", "system:agent_run", last, None, f"the agent process {why}.", SYSTEM))
    return found


def handover_violation(conversation: Conversation, policy: Policy | None) -> Violation | None:
    """For a trace that failed otherwise: the successful call of a ``final`` class (a transfer to a human) that
    ended it, the step where the agent judged the request beyond what it supports."""
    if policy is None:
        return None
    finals = policy.members(policy.final)
    call = next((call for call in conversation.calls if call.name in finals and call.succeeded), None)
    if call is None:
        return None
    return Violation("handover", "final:handover", call.step, call.index,
                     f"call #{call.index} {call.name} handed the conversation over, and the task failed: the agent "
                     "judged the request beyond what it supports.", NOT_SUPPORTED)  # fmt: skip


def _evidence(violation: Violation) -> EvidenceStep:
    return EvidenceStep(rule=violation.rule, step=violation.step, call=violation.call, message=violation.message,
                        depends_on=list(violation.depends_on))  # fmt: skip
