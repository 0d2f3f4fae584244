"""Tool errors talked past: a failed call followed by an answer that claims success or states made-up values.

After a tool result that is an error, the agent's next answer to the user (a message with text and no tool
call, before any successful call of the same tool) is read:

- ``talked_past:success``: it says the action succeeded ("has been successfully booked", "已成功") although
  the call that would have done it failed (Misinterpretation of Tool Output);
- ``talked_past:values``: it states values (identifiers, amounts, dates: tokens with digits) that occur in no
  earlier tool result, user message, system prompt or call argument, and so can only be what the failed
  call was meant to fetch, made up (Invention of New Information).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tracekit.diagnose.conversation import CallStep, Conversation
from tracekit.diagnose.violation import INVENTION, MISREAD, Category, Violation

if TYPE_CHECKING:
    from tracekit.trace import Trace

#: An answer that claims an action succeeded (English and Chinese).
SUCCESS = re.compile(
    r"\bsuccessfully\b|\bhas been (?:booked|cancel+ed|updated|modified|changed|processed|completed|made|sent|"
    r"returned|exchanged|added)\b|\bis now (?:booked|cancel+ed|confirmed)\b|\ball set\b"
    r"|(?:已|已经)(?:成功|完成|为您|帮您)|成功",
    re.IGNORECASE,
)
#: A value worth checking: a token with a digit, at least three characters (ids, amounts, dates, times).
VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-:./]*\d[A-Za-z0-9_\-:./]*|\d{3,}")


def talked_past_violations(conversation: Conversation, known_texts: list[str]) -> list[Violation]:
    """Answers that talk past a failed call; ``known_texts``: the system prompts (known from the start)."""
    violations: list[Violation] = []
    answered: set[int] = set()
    for call in conversation.calls:
        if not call.failed or call.result_step is None:
            continue
        answer = next((turn for turn in conversation.answers_after(call.result_step) if not turn.calls), None)
        if answer is None or answer.step in answered or _retried(conversation, call, answer.step):
            continue
        said = _talked_past(conversation, call, answer.step, answer.text, known_texts)
        if said is not None:
            rule, message, category = said
            answered.add(answer.step)
            violations.append(Violation("error_talked_past", rule, answer.step, None, message, category,
                                        (call.result_step,)))  # fmt: skip
    return violations


def _talked_past(
    conversation: Conversation, call: CallStep, step: int, text: str, known_texts: list[str]
) -> tuple[str, str, Category] | None:
    """How the answer at ``step`` talks past the failed ``call``: its rule, message and category; None when it
    does not (a claimed success is looked for first, then made-up values)."""
    if SUCCESS.search(text):
        return ("talked_past:success", f"message {step} says the action succeeded, but call #{call.index} "
                f"{call.name} failed ({_short(call.result_text or '')}); tell the user what failed.", MISREAD)
    invented = _invented(conversation, step, text, known_texts)
    if not invented:
        return None
    return ("talked_past:values", f"message {step} states {', '.join(invented[:3])}, found in no tool result or "
            f"message, after call #{call.index} {call.name} failed; report what is known only.", INVENTION)


def _retried(conversation: Conversation, failed: CallStep, before: int) -> bool:
    """Whether the same tool succeeded between the failure and the answer."""
    return any(
        call.name == failed.name and call.succeeded and failed.index < call.index and call.step < before
        for call in conversation.calls
    )


def may_talk_past(trace: Trace) -> bool:
    """A cheap test that ``talked_past_violations`` can find something: a failed tool result followed by an
    answer that claims success or holds a value worth checking (analyze skips the rest without one)."""
    failed = [result.message_index for result in trace.kind("tool_result") if result.is_error]
    if not failed:
        return False
    first = min(failed)
    for message in reversed(trace.kind("assistant_message")):
        if message.message_index <= first:
            return False
        for block in message.content:
            if block.get("type") == "tool_use":
                break
        else:  # an answer (no tool call): does it claim success or state a value?
            text = message.text
            if text and (SUCCESS.search(text) or VALUE.search(text)):
                return True
    return False


def _invented(conversation: Conversation, step: int, text: str, known_texts: list[str]) -> list[str]:
    known = [*known_texts]
    known.extend(turn.text for turn in conversation.turns if turn.step < step)
    for call in conversation.calls:
        if call.step < step:
            known.append(str(call.arguments))
            if call.result_text is not None and (call.result_step or call.step) < step:
                known.append(call.result_text)
    corpus = "\n".join(known).lower()
    values = dict.fromkeys(token.strip(".:/-") for token in VALUE.findall(text))
    return [value for value in values if len(value) >= 3 and value.lower() not in corpus and not _plain_number(value)]


def _plain_number(value: str) -> bool:
    """A bare small number or ordinal (counts, list positions), not worth a finding."""
    return re.fullmatch(r"\d{1,3}(?:st|nd|rd|th)?", value) is not None


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
