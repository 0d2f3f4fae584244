"""Every invariant of one trace in one call: schema (always), policy and open task (with a policy), errors
talked past (always), reference actions (when the trace has expected calls).

Example::

    conversation = Conversation.of(trace)
    violations = trace_violations(trace, conversation, load_policy("tau-airline"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracekit.diagnose.open_task import open_task_violations
from tracekit.diagnose.policy_rules import policy_violations
from tracekit.diagnose.reference import reference_violations
from tracekit.diagnose.schema_rules import schema_violations
from tracekit.diagnose.talked_past import talked_past_violations
from tracekit.diagnose.violation import Violation
from tracekit.trace import content_text

if TYPE_CHECKING:
    from tracekit.diagnose.conversation import Conversation
    from tracekit.diagnose.policy import Policy
    from tracekit.diagnose.reference import Reference
    from tracekit.trace import Trace


def trace_violations(
    trace: Trace, conversation: Conversation, policy: Policy | None = None, reference: Reference | None = None
) -> list[Violation]:
    """The violations of ``trace`` in step order (the policy's only when one is given; the differences from
    the expected calls when ``reference`` is given: the policy's ``write`` class compared, or every call)."""
    found = schema_violations(trace, conversation, policy.tools if policy is not None else None)
    system = [content_text(record.content) for record in trace.kind("system_message")] if conversation.calls else []
    if conversation.calls:
        found += talked_past_violations(conversation, system)
    if policy is not None:
        found += policy_violations(conversation, policy)
        found += open_task_violations(conversation, policy)
    if reference is not None:  # last: at the same call, a rule broken says why better than a difference
        writes = policy.tools_of("write") if policy is not None else None
        found += reference_violations(conversation, reference, writes, system)
    return sorted(found, key=Violation.sort_key)
