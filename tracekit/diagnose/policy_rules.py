"""Policy invariants over the calls of a trace: confirmation, proposal, preconditions, transfer, limits.

Each function reads the ``Conversation`` and the ``Policy`` and returns the violations in order. The rules
(``docs/diagnosis.md``):

- ``policy:confirmation``: a call of a confirmed class (a write) needs a user message with an explicit
  confirmation after the previous successful such call (or the start) and before it; or a confirmed
  proposal that named it (every ``proposal_fields`` value of it) along with earlier writes (the same tool on
  the same target again needs a confirmation of its own);
- ``policy:proposal``: the write's ``proposal_fields`` values must appear in what the agent said between the
  last write and the user's confirmation, or be unchanged from the state it read (what was proposed is what
  is done);
- ``policy:precondition``: an earlier successful call of a required tool, with the same values of the
  named arguments; ``policy:precondition_state``: its latest result must satisfy ``holds`` (which may also
  read the call's arguments and the latest result of any tool); ``policy:user_request``: the user asked
  for it (said one of ``user_asked``) before the call;
- ``policy:after_final``: nothing but an answer after a transfer (a ``final`` class);
- ``policy:limit``: at most N calls of a tool (per argument value);
- ``policy:one_at_a_time``: calls of a listed class issued one per message.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from tracekit.diagnose.conversation import CallStep, Conversation, Turn
from tracekit.diagnose.policy import Policy, Precondition
from tracekit.diagnose.violation import ADHERENCE, MISALIGNED, MISREAD, Violation


def policy_violations(conversation: Conversation, policy: Policy) -> list[Violation]:
    """Every policy violation of the conversation, in step order."""
    found = [
        *confirmation_violations(conversation, policy),
        *precondition_violations(conversation, policy),
        *after_final_violations(conversation, policy),
        *limit_violations(conversation, policy),
        *one_at_a_time_violations(conversation, policy),
    ]
    return sorted(found, key=Violation.sort_key)


def confirmation_violations(conversation: Conversation, policy: Policy) -> list[Violation]:
    """``policy:confirmation`` and ``policy:proposal`` of every write."""
    rule = policy.confirmation
    if rule is None:
        return []
    writes = policy.members(rule.classes)
    violations: list[Violation] = []
    confirming = [turn for turn in conversation.turns if turn.role == "user" and confirms(turn.text, rule.phrases)]
    since = -1  # the step of the last write that succeeded (a failed one changed nothing: its retry is covered)
    for call in conversation.calls:
        if call.name not in writes:
            continue
        confirmed = _confirmation(conversation, call, since, confirming, rule.proposal_fields, writes)
        if call.succeeded:
            since = call.step
        if confirmed is None:
            violations.append(Violation(
                "policy_violation", "policy:confirmation", call.step, call.index,
                f"call #{call.index} {call.name} writes without the user's explicit confirmation since the last "
                "write; list the action's details and wait for a yes.", ADHERENCE))  # fmt: skip
            continue
        proposal = conversation.assistant_text_before(confirmed.step)
        # What was proposed: everything the agent said since the last write, up to the confirmation (a
        # proposal is often made, discussed and asked again in a shorter message).
        start = _last_write_before(conversation, writes, confirmed.step)
        said = "\n".join(turn.text for turn in conversation.turns
                         if turn.role == "assistant" and start < turn.step < confirmed.step)  # fmt: skip
        kept = _state_text(conversation.calls, call)
        missing = _not_proposed(call.arguments, rule.proposal_fields, said, kept)
        if missing:
            shown = ", ".join(f"{name}={value!r}" for name, value in missing[:3])
            at = proposal.step if proposal is not None else confirmed.step
            violations.append(Violation(
                "policy_violation", "policy:proposal", call.step, call.index,
                f"call #{call.index} {call.name} does what the user did not confirm: {shown} is not in the proposal "
                f"of message {at} that the user confirmed in message {confirmed.step}.", MISALIGNED,
                (at, confirmed.step)))  # fmt: skip
    return violations


def _last_write_before(conversation: Conversation, writes: set[str], step: int) -> int:
    """The step of the last successful write before ``step`` (-1: none)."""
    return max((call.step for call in conversation.calls
                if call.name in writes and call.succeeded and call.step < step), default=-1)  # fmt: skip


def _confirmation(
    conversation: Conversation, call: CallStep, since: int, confirming_turns: list[Turn], fields: list[str],
    writes: set[str],
) -> Turn | None:
    """The user turn that confirmed ``call``: the last confirming turn since the last successful write, or an
    earlier one whose proposal named this write too, every ``proposal_fields`` value of it (several writes
    proposed and confirmed together). ``confirming_turns``: the user turns that hold a confirmation, in order."""
    confirming = [turn for turn in confirming_turns if turn.step < call.step]
    if not confirming:
        return None
    last = confirming[-1]
    if last.step > since:
        return last
    start = _last_write_before(conversation, writes, last.step)
    said = _normal("\n".join(turn.text for turn in conversation.turns
                              if turn.role == "assistant" and start < turn.step < last.step))  # fmt: skip
    named = [value for _, value in _leaves(call.arguments, set(fields))]
    if not named or _not_proposed(call.arguments, fields, said, _state_text(conversation.calls, call)):
        return None  # not one of the actions that proposal named
    # Proposed together with the writes done since (another action, or another target): the same write on
    # the same target again (same tool, same first proposal field value) needs its own confirmation.
    done = [earlier for earlier in conversation.calls
            if last.step < earlier.step < call.step and earlier.succeeded and earlier.name in writes]  # fmt: skip
    targets = {(earlier.name, next((v for _, v in _leaves(earlier.arguments, set(fields))), None)) for earlier in done}
    return None if (call.name, named[0]) in targets else last


def precondition_violations(conversation: Conversation, policy: Policy) -> list[Violation]:
    """``policy:precondition`` and ``policy:precondition_state`` of every call."""
    violations: list[Violation] = []
    applies = [(pre, policy.tools_of(pre.tool)) for pre in policy.preconditions]
    for position, call in enumerate(conversation.calls):
        for pre, tools in applies:
            if call.name not in tools:
                continue
            violation = _user_request(conversation, call, pre) or _precondition(
                conversation.calls[:position], call, pre, policy
            )
            if violation is not None:
                violations.append(violation)
                break
    return violations


def _user_request(conversation: Conversation, call: CallStep, pre: Precondition) -> Violation | None:
    """``policy:user_request``: no user message before ``call`` holds one of ``pre.user_asked``."""
    if not pre.user_asked:
        return None
    pattern = _stem_pattern(tuple(pre.user_asked))
    if any(pattern.search(turn.text) for turn in conversation.user_turns_between(-1, call.step)):
        return None
    because = f" ({pre.because})" if pre.because else ""
    return Violation("policy_violation", "policy:user_request", call.step, call.index,
                     f"call #{call.index} {call.name} acts on a request the user never made (no user message "
                     f"before it says {' / '.join(pre.user_asked)}){because}.", MISALIGNED)  # fmt: skip


def _latest_results(earlier: list[CallStep], step: int) -> dict[str, Any]:
    """{tool: its latest successful result seen before ``step``} (for ``latest.TOOL`` in expressions)."""
    return {done.name: done.result for done in earlier
            if done.succeeded and (done.result_step is None or done.result_step < step)}  # fmt: skip


def _precondition(earlier: list[CallStep], call: CallStep, pre: Precondition, policy: Policy) -> Violation | None:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    because = f" ({pre.because})" if pre.because else ""
    latest_results = _latest_results(earlier, call.step) if pre.holds is not None and "latest." in pre.holds else {}
    if not pre.required:
        if pre.expression is not None and not pre.expression.evaluate(None, arguments, latest_results):
            return Violation(
                "policy_violation",
                "policy:precondition_state",
                call.step,
                call.index,
                f"call #{call.index} {call.name}: its arguments break `{pre.holds}`{because}.",
                ADHERENCE,
            )
        return None
    required = policy.members(pre.required)
    pairs = [part.partition("=") for part in pre.same]
    matching = [
        done for done in earlier
        if done.name in required and done.succeeded and isinstance(done.arguments, dict)
        and (done.result_step is None or done.result_step < call.step)
        and all(arguments.get(name) == done.arguments.get(other or name) for name, _, other in pairs)
    ]  # fmt: skip
    if not matching:
        same = f" with the same {', '.join(name for name, _, _ in pairs)}" if pairs else ""
        return Violation("policy_violation", "policy:precondition", call.step, call.index,
                         f"call #{call.index} {call.name} needs {' or '.join(pre.required)} to have succeeded "
                         f"earlier{same}{because}.", ADHERENCE)  # fmt: skip
    latest = matching[-1]
    if pre.expression is not None and not pre.expression.evaluate(latest.result, arguments, latest_results):
        step = latest.result_step if latest.result_step is not None else latest.step
        message = (f"call #{call.index} {call.name} acts although the result of call #{latest.index} "
                   f"{latest.name} (message {step}) breaks `{pre.holds}`{because}.")  # fmt: skip
        rule = "policy:precondition_state"
        return Violation("policy_violation", rule, call.step, call.index, message, MISREAD, (step,))
    return None


def after_final_violations(conversation: Conversation, policy: Policy) -> list[Violation]:
    """``policy:after_final``: a call after a successful transfer."""
    finals = policy.members(policy.final)
    transfer: CallStep | None = None
    violations = []
    for call in conversation.calls:
        if transfer is not None and call.step > transfer.step:
            violations.append(Violation(
                "policy_violation", "policy:after_final", call.step, call.index,
                f"call #{call.index} {call.name} comes after the transfer (call #{transfer.index} {transfer.name}); "
                "after a transfer only an answer may follow.", ADHERENCE, (transfer.step,)))  # fmt: skip
        elif transfer is None and call.name in finals and call.succeeded:
            transfer = call
    return violations


def limit_violations(conversation: Conversation, policy: Policy) -> list[Violation]:
    """``policy:limit``: the call past a tool's limit."""
    violations = []
    for limit in policy.limits:
        tools = policy.tools_of(limit.tool)
        seen: Counter[str] = Counter()
        for call in conversation.calls:
            if call.name not in tools:
                continue
            per = call.arguments.get(limit.per) if limit.per and isinstance(call.arguments, dict) else None
            key = repr(per)
            seen[key] += 1
            if seen[key] == limit.limit + 1:
                scope = f" for {limit.per}={per!r}" if limit.per else ""
                because = f" ({limit.because})" if limit.because else ""
                violations.append(Violation(
                    "policy_violation", "policy:limit", call.step, call.index,
                    f"call #{call.index} {call.name} is call {seen[key]} of {limit.tool}{scope}; at most "
                    f"{limit.limit} allowed{because}.", ADHERENCE))  # fmt: skip
    return violations


def one_at_a_time_violations(conversation: Conversation, policy: Policy) -> list[Violation]:
    """``policy:one_at_a_time``: a second call of a listed class in the same message."""
    if not policy.one_at_a_time:
        return []
    every = "*" in policy.one_at_a_time
    tools = policy.members(policy.one_at_a_time)
    violations = []
    for turn in _assistant_turns(conversation.turns):
        listed = [call for call in turn.calls if every or call.name in tools]
        if len(listed) > 1:
            second = listed[1]
            violations.append(Violation(
                "policy_violation", "policy:one_at_a_time", turn.step, second.index,
                f"message {turn.step} issues {len(listed)} calls at once ({', '.join(c.name for c in listed)}); "
                "make one call at a time.", ADHERENCE))  # fmt: skip
    return violations


def confirms(text: str, phrases: list[str]) -> bool:
    """Whether ``text`` holds one of the confirmation ``phrases`` (words for Latin script, substrings else) that
    no negation just before it in the same clause takes back ("I won't be able to proceed", "不确认")."""
    for match in _phrase_pattern(tuple(phrases)).finditer(text):
        clause = _CLAUSE.split(text[max(0, match.start() - 40) : match.start()])[-1]
        if not _NEGATION.search(clause):
            return True
    return False


_CLAUSE = re.compile(r"[.!?;,。！？；，\n]")
_NEGATION = re.compile(r"(?<!\w)(?:not|no|never|don't|won't|can't|cannot|n't)(?!\w)|n't\b|不|别|没", re.IGNORECASE)


@lru_cache(maxsize=256)
def _stem_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return _alternatives(phrases, whole_words=False)


@lru_cache(maxsize=32)
def _phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return _alternatives(phrases, whole_words=True)


def _alternatives(phrases: tuple[str, ...], *, whole_words: bool) -> re.Pattern[str]:
    """One pattern for the phrases: Latin-script ones at a word start (and end, for ``whole_words``), grouped so
    the engine tests the boundary once per position; others (Chinese) as substrings."""
    latin = sorted((re.escape(p) for p in phrases if p and p.isascii()), key=len, reverse=True)
    other = [re.escape(p) for p in phrases if p and not p.isascii()]
    end = r"(?!\w)" if whole_words else ""
    parts = [rf"(?<!\w)(?:{'|'.join(latin)}){end}"] if latin else []
    parts += other
    return re.compile("|".join(parts) or r"(?!x)x", re.IGNORECASE)


def _assistant_turns(turns: list[Turn]) -> Iterator[Turn]:
    return (turn for turn in turns if turn.role == "assistant")


def _not_proposed(arguments: Any, fields: list[str], proposal: str, kept: str) -> list[tuple[str, Any]]:
    """(field, value) of the proposal fields whose value the proposal text does not mention and the state the
    agent read (``kept``: what stays as it was need not be proposed) does not hold."""
    if not fields:
        return []
    text = _normal(proposal)
    return [(name, value) for name, value in _leaves(arguments, set(fields))
            if not _mentioned(value, text) and not _mentioned(value, kept)]  # fmt: skip


def _state_text(calls: list[CallStep], write: CallStep) -> str:
    """The results of the earlier successful calls made with one of the write's own argument values (the
    reservation or order it acts on, as the agent read it), as normalized text."""
    if not isinstance(write.arguments, dict):
        return ""
    own = {(key, repr(value)) for key, value in write.arguments.items() if isinstance(value, (str, int))}
    texts = [
        call.result_text or "" for call in calls
        if call.index < write.index and call.succeeded and isinstance(call.arguments, dict)
        and any((key, repr(value)) in own for key, value in call.arguments.items())
    ]  # fmt: skip
    return _normal("\n".join(texts))


def _leaves(value: Any, fields: set[str], name: str | None = None) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, fields, key)
    elif isinstance(value, list):
        for inner in value:
            yield from _leaves(inner, fields, name)
    elif name in fields and value is not None and not isinstance(value, bool):
        yield name, value


_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]  # fmt: skip


_NUMBER_WORDS = {0: ("zero", "no", "零"), 1: ("one", "a single", "一"), 2: ("two", "二", "两"), 3: ("three", "三"),
                 4: ("four", "四"), 5: ("five", "五"), 6: ("six", "六"), 7: ("seven", "七"), 8: ("eight", "八"),
                 9: ("nine", "九"), 10: ("ten", "十")}  # fmt: skip


def _mentioned(value: Any, text: str) -> bool:
    if isinstance(value, (int, float)):
        number = f"{value:g}" if isinstance(value, float) else str(value)
        if re.search(rf"(?<![\d.]){re.escape(number)}(?:\.0+)?(?!\d)", text.replace(",", "")) is not None:
            return True
        words = _NUMBER_WORDS.get(int(value), ()) if float(value).is_integer() else ()
        return any(re.search(rf"(?<!\w){word}(?!\w)" if word.isascii() else word, text) for word in words)
    if _normal(str(value)) in text:
        return True
    date = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", str(value))
    if date is not None:
        month, day = _MONTHS[int(date.group(2)) - 1], int(date.group(3))
        return re.search(rf"{month}\s+{day}(?!\d)|(?<!\d){day}(?:st|nd|rd|th)?\s+(?:of\s+)?{month}", text) is not None
    return False


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text.lower())


_SPACES = re.compile(r"[\s_]+")
