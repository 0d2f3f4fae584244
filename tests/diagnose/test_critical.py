"""The critical step: the earliest violation nothing later repaired, its category and evidence chain."""

from __future__ import annotations

from tracekit.diagnose import Category, Conversation, Violation, diagnose

from .tau_format import say, tau_trace, tool, user


def _conversation() -> Conversation:
    return Conversation.of(tau_trace(
        user("book"),
        tool("book_reservation", {"user_id": "u"}, "Error: payment does not add up"),  # call 0, step 1
        tool("book_reservation", {"user_id": "u"}, {"reservation_id": "R1"}),  # call 1, step 3
        say("Booked R1."),  # step 5
    ))  # fmt: skip


def test_the_earliest_unrepaired_violation_is_critical() -> None:
    adherence: Category = "Instruction/Plan Adherence Failure"
    failed_write = Violation("policy_violation", "policy:confirmation", 1, 0, "no confirmation", adherence)
    answer = Violation("error_talked_past", "talked_past:values", 5, None, "made up", "Invention of New Information",
                       (2,))  # fmt: skip
    diagnosis = diagnose([answer, failed_write], _conversation(), ["reward"])
    assert diagnosis is not None
    # The failed write was retried successfully without a violation of its own: repaired.
    assert (diagnosis.step, diagnosis.call, diagnosis.rule) == (5, None, "talked_past:values")
    assert diagnosis.category == "Invention of New Information" and not diagnosis.recovered
    assert diagnosis.evidence[0].depends_on == [2] and diagnosis.violations == 2
    assert diagnosis.headline == "went wrong at step 5: Invention of New Information: made up"


def test_a_violation_at_a_call_that_succeeded_is_never_repaired() -> None:
    late = Violation("policy_violation", "policy:proposal", 3, 1, "not proposed", "Intent-Plan Misalignment")
    diagnosis = diagnose([late], _conversation(), ["violations"])
    assert diagnosis is not None and (diagnosis.step, diagnosis.call, diagnosis.recovered) == (3, 1, False)


def test_all_repaired_gives_the_earliest_one_recovered() -> None:
    first = Violation("schema_violation", "schema:type", 1, 0, "bad type", "Invalid Invocation")
    diagnosis = diagnose([first], _conversation(), ["reward"])
    assert diagnosis is not None and (diagnosis.step, diagnosis.recovered) == (1, True)


def test_no_evidence_is_inconclusive_and_no_failure_is_no_diagnosis() -> None:
    diagnosis = diagnose([], _conversation(), ["reward"])
    assert diagnosis is not None and diagnosis.step is None and diagnosis.category == "Inconclusive"
    assert diagnose([], _conversation(), []) is None
