"""Each policy invariant on hand-written tau-bench-format trajectories, positive and negative."""

from __future__ import annotations

from typing import Any

import pytest

from tracekit.diagnose import Conversation, Policy, load_policy, trace_violations

from .tau_format import say, tau_trace, tool, user

RESERVATION = {"reservation_id": "ZFA04Y", "cabin": "economy", "insurance": "no", "created_at": "2024-05-01T10:00:00",
               "passengers": [{"first_name": "Mia"}], "total_baggages": 1}  # fmt: skip
POLICY = Policy.model_validate({
    "name": "test",
    "classes": {"read": ["get_reservation_details"], "write": ["cancel_reservation", "update_bags"],
                "transfer": ["transfer_to_human_agents"]},
    "confirmation": {"classes": ["write"], "proposal_fields": ["reservation_id", "total_baggages"]},
    "preconditions": [
        {"tool": "cancel_reservation", "requires": "get_reservation_details", "same": ["reservation_id"],
         "holds": 'insurance == "yes" or cabin == "business"'},
        {"tool": "update_bags", "requires": "get_reservation_details", "same": ["reservation_id"],
         "holds": "args.total_baggages >= total_baggages"},
        {"tool": "book", "holds": "len(args.passengers) <= 5"},
    ],
    "limits": [{"tool": "update_bags", "limit": 1, "per": "reservation_id"}],
    "one_at_a_time": ["read"],
    "open_task": {"end_markers": ["###STOP###"]},
})  # fmt: skip


def rules(*messages: Any, policy: Policy = POLICY) -> list[str]:
    trace = tau_trace(*messages)
    return [violation.rule for violation in trace_violations(trace, Conversation.of(trace), policy)]


def read(reservation: dict[str, Any] = RESERVATION) -> list[dict[str, Any]]:
    return tool("get_reservation_details", {"reservation_id": reservation["reservation_id"]}, reservation)


def bags(total: int, reservation_id: str = "ZFA04Y") -> list[dict[str, Any]]:
    return tool("update_bags", {"reservation_id": reservation_id, "total_baggages": total}, {"ok": True})


def test_a_write_confirmed_with_what_was_proposed_breaks_nothing() -> None:
    assert rules(user("Add a bag to ZFA04Y"), read(), say("I will set reservation ZFA04Y to 2 bags. Proceed?"),
                 user("Yes, go ahead."), bags(2), say("Done: 2 bags."), user("Thanks ###STOP###")) == []  # fmt: skip


def test_a_write_without_explicit_confirmation() -> None:
    found = rules(user("Add a bag to ZFA04Y"), read(), say("Setting ZFA04Y to 2 bags."), bags(2), say("Done."),
                  user("###STOP###"))  # fmt: skip
    assert found == ["policy:confirmation"]


def test_a_chinese_confirmation_counts() -> None:
    assert rules(user("ZFA04Y 加一件行李"), read(), say("将预订 ZFA04Y 改为 2 件行李，确认吗？"), user("确认，谢谢"),
                 bags(2), say("已改为 2 件。"), user("###STOP###")) == []  # fmt: skip


def test_each_write_needs_its_own_confirmation_since_the_last_one() -> None:
    found = rules(user("bags"), read(), say("ZFA04Y to 2 bags? Confirm?"), user("yes"), bags(2),
                  say("ZFA04Y now 2 bags; shall I make it 3?"), bags(3), say("Done."), user("###STOP###"))  # fmt: skip
    assert "policy:confirmation" in found


def test_a_write_that_differs_from_the_confirmed_proposal() -> None:
    found = rules(user("Add a bag"), read(), say("I will set ZFA04Y to 2 bags. Confirm?"), user("yes"), bags(3),
                  say("Done."), user("###STOP###"))  # fmt: skip
    assert found == ["policy:proposal"]


def test_a_precondition_missing_and_a_result_in_the_wrong_state() -> None:
    cancel = tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, {"ok": True})
    assert rules(user("cancel ZFA04Y"), say("Cancel ZFA04Y, confirm?"), user("yes"), cancel, say("Cancelled."),
                 user("###STOP###")) == ["policy:precondition"]  # fmt: skip
    assert rules(user("cancel ZFA04Y"), read(), say("Cancel ZFA04Y, confirm?"), user("yes"), cancel,
                 say("Cancelled."), user("###STOP###")) == ["policy:precondition_state"]  # fmt: skip
    insured = {**RESERVATION, "insurance": "yes"}
    assert rules(user("cancel ZFA04Y"), read(insured), say("Cancel ZFA04Y, confirm?"), user("yes"), cancel,
                 say("Cancelled."), user("###STOP###")) == []  # fmt: skip


def test_the_same_argument_value_is_required() -> None:
    other = {**RESERVATION, "reservation_id": "OTHER1"}
    found = rules(user("bags"), read(other), say("ZFA04Y to 2 bags, confirm?"), user("yes"), bags(2), say("Done."),
                  user("###STOP###"))  # fmt: skip
    assert found == ["policy:precondition"]


def test_a_precondition_over_the_arguments_alone() -> None:
    five = [{"first_name": str(n)} for n in range(5)]
    policy = POLICY.model_copy(update={"confirmation": None})
    book = {"passengers": five}
    assert rules(user("book"), tool("book", book, {}), say("Booked."), user("###STOP###"), policy=policy) == []
    six = {"passengers": [*five, {"first_name": "x"}]}
    assert rules(user("book"), tool("book", six, {}), say("Booked."), user("###STOP###"), policy=policy) == [
        "policy:precondition_state"
    ]


def test_removing_bags_breaks_the_state_rule() -> None:
    assert rules(user("bags"), read(), say("ZFA04Y to 0 bags, confirm?"), user("yes"), bags(0), say("Done."),
                 user("###STOP###")) == ["policy:precondition_state"]  # fmt: skip


def test_only_an_answer_after_a_transfer() -> None:
    transfer = tool("transfer_to_human_agents", {"summary": "s"}, "Transfer successful")
    assert rules(user("help"), transfer, say("You are being transferred.")) == []
    assert rules(user("help"), transfer, read(), say("transferred")) == ["policy:after_final"]


def test_at_most_n_calls_per_argument_value() -> None:
    messages = [user("bags"), read(), say("ZFA04Y to 2 bags, confirm?"), user("yes"), bags(2), say("Done"),
                say("ZFA04Y to 3 bags, confirm?"), user("yes"), bags(3), say("Done."), user("###STOP###")]  # fmt: skip
    assert rules(*messages) == ["policy:limit"]
    other = {**RESERVATION, "reservation_id": "B2"}
    assert rules(user("bags"), read(), read(other), say("ZFA04Y to 2 bags and B2 to 2 bags, confirm?"),
                 user("yes"), bags(2), bags(2, "B2"), say("Done."), user("###STOP###")) == []  # fmt: skip


def test_calls_of_a_class_one_at_a_time() -> None:
    both = tool("get_reservation_details", {"reservation_id": "A"}, {}, also=(("get_reservation_details",
                {"reservation_id": "B"}, {}),))  # fmt: skip
    assert rules(user("look"), both, say("Found."), user("###STOP###")) == ["policy:one_at_a_time"]
    assert rules(user("look"), read(), read(), say("Found."), user("###STOP###")) == []


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([user("look"), *read()], ["policy:open_task"]),  # ends on a tool result
        ([user("look"), say("ok"), user("and the bags?")], ["policy:open_task"]),  # last question unanswered
        ([user("look"), say("ok"), user("thanks ###STOP###")], []),  # the user ended it
        ([user("bags"), read(), say("ZFA04Y to 2 bags, confirm?"), user("Yes please."), say("One moment."),
          user("###STOP###")], ["policy:open_task"]),  # confirmed and never done
        ([user("bags"), read(), say("ZFA04Y to 2 bags, confirm?"), user("Can I proceed later?"), say("Sure."),
          user("###STOP###")], []),  # a question is no confirmation
        ([user("help"), tool("transfer_to_human_agents", {"summary": "s"}, "ok")], []),  # handed over
    ],
)  # fmt: skip
def test_the_conversation_must_not_end_with_the_task_open(messages: list[Any], expected: list[str]) -> None:
    assert rules(*messages) == expected


def test_a_tool_the_user_never_asked_for_and_a_rule_over_another_tools_result() -> None:
    policy = Policy.model_validate({
        "name": "asked",
        "classes": {"write": ["send_certificate"]},
        "preconditions": [{"tool": "send_certificate", "user_asked": ["compensat", "补偿"],
                           "holds": 'latest.get_user_details.membership in ["gold"]'}],
        "open_task": {"enabled": False},
    })  # fmt: skip
    user_gold = tool("get_user_details", {"user_id": "u1"}, {"membership": "gold"})
    send = tool("send_certificate", {"user_id": "u1", "amount": 50}, "Certificate added")
    assert rules(user("my flight was late"), user_gold, send, policy=policy) == ["policy:user_request"]
    assert rules(user("I want compensation"), user_gold, send, policy=policy) == []
    assert rules(user("我要补偿"), user_gold, send, policy=policy) == []
    regular = tool("get_user_details", {"user_id": "u1"}, {"membership": "regular"})
    assert rules(user("Compensation, please"), regular, send, policy=policy) == ["policy:precondition_state"]


AIRLINE = load_policy("tau-airline")
USER = {"user_id": "mia_li_3668", "membership": "silver",
        "payment_methods": {"credit_card_1": {"source": "credit_card"}, "certificate_2": {"source": "certificate"},
                            "gift_card_3": {"source": "gift_card"}}}  # fmt: skip


def booking(**changes: Any) -> list[dict[str, Any]]:
    arguments = {"user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way",
                 "cabin": "economy", "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}],
                 "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}] * 2,
                 "payment_methods": [{"payment_id": "credit_card_1", "amount": 300}],
                 "total_baggages": 5, "nonfree_baggages": 1, "insurance": "no", **changes}  # fmt: skip
    return tool("book_reservation", arguments, {"reservation_id": "NEW001"})


@pytest.mark.parametrize(("changes", "expected"), [
    ({}, []),  # silver economy: 2 free bags each, 5 bags for 2 passengers: 1 paid
    ({"nonfree_baggages": 0}, ["policy:precondition_state"]),
    ({"cabin": "business", "nonfree_baggages": 0}, []),  # silver business: 3 each
    ({"payment_methods": [{"payment_id": "credit_card_9", "amount": 300}]}, ["policy:precondition_state"]),
    ({"payment_methods": [{"payment_id": "gift_card_3", "amount": 1}, {"payment_id": "certificate_2", "amount": 1},
                          {"payment_id": "credit_card_1", "amount": 1}]}, []),
])  # fmt: skip
def test_the_shipped_airline_booking_rules(changes: dict[str, Any], expected: list[str]) -> None:
    steps = (user("book it"), tool("get_user_details", {"user_id": "mia_li_3668"}, USER),
             say("Book HAT136 on 2024-05-20, economy, 5 bags, 1 paid, credit_card_1? Please confirm."), user("yes"),
             booking(**changes), say("Booked."), user("###STOP###"))  # fmt: skip
    assert [rule for rule in rules(*steps, policy=AIRLINE) if rule != "policy:proposal"] == expected


def test_two_certificates_in_one_booking_break_the_payment_rule() -> None:
    two = [{"payment_id": "certificate_2", "amount": 1}, {"payment_id": "certificate_7", "amount": 1}]
    profile = {**USER, "payment_methods": {**USER["payment_methods"], "certificate_7": {}}}
    steps = (user("book it"), tool("get_user_details", {"user_id": "mia_li_3668"}, profile),
             say("Confirm?"), user("yes"), booking(payment_methods=two), say("Booked."),
             user("###STOP###"))  # fmt: skip
    assert "policy:precondition_state" in rules(*steps, policy=AIRLINE)


def test_the_shipped_airline_compensation_rules() -> None:
    reservation = {"reservation_id": "ZFA04Y", "cabin": "economy", "insurance": "no", "passengers": [{}, {}]}
    regular = {**USER, "membership": "regular"}

    def compensate(profile: dict[str, Any], amount: int, complaint: str) -> list[str]:
        return rules(user(complaint), tool("get_user_details", {"user_id": "mia_li_3668"}, profile),
                     tool("get_reservation_details", {"reservation_id": "ZFA04Y"}, reservation),
                     say(f"I can send a ${amount} certificate. Confirm?"), user("yes"),
                     tool("send_certificate", {"user_id": "mia_li_3668", "amount": amount}, "Certificate added"),
                     say("Sent."), user("###STOP###"), policy=AIRLINE)  # fmt: skip

    asked = "My flight was cancelled, I want compensation"
    assert compensate(USER, 200, asked) == []  # silver, two passengers, cancelled: $100 each
    assert compensate(USER, 200, "My flight was cancelled.") == ["policy:user_request"]
    assert compensate(regular, 200, asked) == ["policy:precondition_state"]  # regular, economy, no insurance
    assert compensate(USER, 150, asked) == ["policy:precondition_state"]  # neither $50 nor $100 per passenger
