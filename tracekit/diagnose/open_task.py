"""The conversation must not end with the task open.

Three ways a conversation ends open (``policy:open_task``):

- its last message is a tool result: the agent acted and never told the user;
- its last message is the user's, not a stop marker (the policy's ``open_task.end_markers``), and the agent
  never answered it (a question left unanswered);
- the user's last message (before any message that ends the conversation) confirms a proposal (the
  confirmation rule's ``phrases``, not a question) that asked for it (its ``requests``), and no call of a
  confirmed class (a write) came after it: what was agreed was never done.

A conversation that ended in a successful transfer (``final``) is handed over, not open.
"""

from __future__ import annotations

from tracekit.diagnose.conversation import Conversation
from tracekit.diagnose.policy import Policy
from tracekit.diagnose.policy_rules import confirms
from tracekit.diagnose.violation import ADHERENCE, MISALIGNED, SYSTEM, Violation


def open_task_violations(conversation: Conversation, policy: Policy) -> list[Violation]:
    """The way the conversation ends open, if it does (at most one violation)."""
    if not policy.open_task.enabled or (not conversation.turns and not conversation.calls):
        return []
    finals = policy.members(policy.final)
    if any(call.name in finals and call.succeeded for call in conversation.calls):
        return []
    markers = policy.open_task.end_markers
    if conversation.last_kind == "tool":
        return [Violation("open_task", "policy:open_task", conversation.last_step, None,
                          f"the conversation ends on a tool result (message {conversation.last_step}): the agent "
                          "never told the user what happened.", SYSTEM)]  # fmt: skip
    users = [turn for turn in conversation.turns if turn.role == "user"]
    last = conversation.turns[-1] if conversation.turns else None
    if last is not None and last.role == "user" and not any(marker in last.text for marker in markers):
        return [
            Violation(
                "open_task",
                "policy:open_task",
                last.step,
                None,
                f"the user's last message (message {last.step}) was never answered.",
                ADHERENCE,
            )
        ]
    rule = policy.confirmation
    if rule is None:
        return []
    writes = policy.members(rule.classes)
    # The user's last word (a message that ends the conversation gives the agent no turn to act on it).
    spoken = [turn for turn in users if not any(marker in turn.text for marker in markers)]
    turn = spoken[-1] if spoken else None
    if turn is None or turn.text.rstrip().endswith(("?", "？")) or not confirms(turn.text, rule.phrases):
        return []
    proposal = conversation.assistant_text_before(turn.step)
    if proposal is None or not confirms(proposal.text, rule.requests):
        return []
    if any(call.name in writes for call in conversation.calls if call.step > turn.step):
        return []
    return [Violation("open_task", "policy:open_task", turn.step, None,
                      f"the user confirmed the proposal of message {proposal.step} in message {turn.step}, and "
                      "nothing was done about it before the conversation ended.", MISALIGNED,
                      (proposal.step,))]  # fmt: skip
    return []
