"""Tool errors talked past: an answer after a failed call that claims success or states made-up values."""

from __future__ import annotations

from typing import Any

from tracekit.diagnose import Conversation, trace_violations

from .tau_format import say, tau_trace, tool, user

FAILED = tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, "Error: reservation not found")


def rules(*messages: Any) -> list[tuple[str, int]]:
    trace = tau_trace(*messages)
    return [(v.rule, v.step) for v in trace_violations(trace, Conversation.of(trace)) if v.kind == "error_talked_past"]


def test_claiming_success_after_the_call_failed() -> None:
    assert rules(user("cancel ZFA04Y"), FAILED, say("Your reservation has been successfully cancelled.")) == [
        ("talked_past:success", 3)
    ]
    assert rules(user("取消 ZFA04Y"), FAILED, say("已成功为您取消。")) == [("talked_past:success", 3)]


def test_stating_values_the_failed_call_was_meant_to_fetch() -> None:
    failed = tool("get_reservation_details", {"reservation_id": "ZFA04Y"}, "Error: database unavailable")
    assert rules(user("details of ZFA04Y?"), failed, say("ZFA04Y flies HAT136 on 2024-05-20, total $305.")) == [
        ("talked_past:values", 3)
    ]


def test_reporting_the_failure_or_a_successful_retry_breaks_nothing() -> None:
    assert rules(user("cancel ZFA04Y"), FAILED, say("I could not cancel ZFA04Y: it was not found.")) == []
    retried = tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, {"status": "cancelled"})
    assert rules(user("cancel ZFA04Y"), FAILED, retried, say("ZFA04Y has been successfully cancelled.")) == []
    assert rules(user("cancel ZFA04Y"), tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, {"ok": 1}),
                 say("It has been cancelled successfully.")) == []  # fmt: skip
