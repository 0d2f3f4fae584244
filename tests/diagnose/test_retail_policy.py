"""The shipped tau-retail policy on hand-written trajectories in the tau-bench format: authentication first,
order status before acting, one call of the once-only tools per order, confirmation in Chinese too."""

from __future__ import annotations

import json
from typing import Any

from tracekit.diagnose import Conversation, load_policy, trace_violations

from .tau_format import say, tau_trace, tool, user

POLICY = load_policy("tau-retail")
FIND = tool("find_user_id_by_email", {"email": "a@example.com"}, "yusuf_rossi_9620")
PENDING = {"order_id": "#W2378156", "status": "pending", "items": [{"item_id": "1", "name": "Lamp"}],
           "payment_history": [{"transaction_type": "payment", "amount": 120.5, "payment_method_id": "paypal_7"}]}


def rules(*messages: Any) -> list[str]:
    trace = tau_trace(*messages)
    return [v.rule for v in trace_violations(trace, Conversation.of(trace), POLICY)]


def order(status: str = "pending") -> list[dict[str, Any]]:
    return tool("get_order_details", {"order_id": "#W2378156"}, {**PENDING, "status": status})


def cancel() -> list[dict[str, Any]]:
    arguments = {"order_id": "#W2378156", "reason": "no longer needed"}
    return tool("cancel_pending_order", arguments, {"status": "cancelled"})


def test_a_confirmed_cancel_of_a_pending_order_after_authentication() -> None:
    assert rules(user("cancel #W2378156, a@example.com"), FIND, order(),
                 say("Cancel order #W2378156 because it is no longer needed? Please confirm."), user("yes"),
                 cancel(), say("Cancelled."), user("###STOP###")) == []  # fmt: skip
    assert rules(user("取消订单 #W2378156，邮箱 a@example.com"), FIND, order(),
                 say("将取消订单 #W2378156（no longer needed），确认吗？"), user("确认"), cancel(), say("已取消。"),
                 user("###STOP###")) == []  # fmt: skip


def test_acting_without_authentication_or_on_a_delivered_order() -> None:
    assert rules(user("cancel #W2378156"), order(), say("Cancel #W2378156, no longer needed? Confirm?"),
                 user("yes"), cancel(), say("Cancelled."), user("###STOP###")) == [
        "policy:precondition", "policy:precondition"]  # fmt: skip
    assert rules(user("cancel #W2378156, a@example.com"), FIND, order("delivered"),
                 say("Cancel #W2378156, no longer needed? Confirm?"), user("yes"), cancel(), say("Cancelled."),
                 user("###STOP###")) == ["policy:precondition_state"]  # fmt: skip


def test_the_once_only_tools_and_the_schema_of_an_imported_trajectory() -> None:
    modify = tool("modify_pending_order_items", {"order_id": "#W2378156", "item_ids": ["1"], "new_item_ids": ["2"],
                  "payment_method_id": "gift_card_1"}, {"status": "pending (items modified)"})  # fmt: skip
    found = rules(user("a@example.com"), FIND, order(), say("Swap item 1 for 2 on #W2378156, gift_card_1? Confirm?"),
                  user("yes"), modify, say("Swap item 1 for 2 again on #W2378156, gift_card_1? Confirm?"),
                  user("yes"), modify, say("Done."), user("###STOP###"))  # fmt: skip
    assert found == ["policy:limit"]
    bad = tool("cancel_pending_order", {"order_id": "#W2378156", "reason": "too expensive"}, "Error: invalid reason")
    assert "schema:enum" in rules(user("a@example.com"), FIND, order(), bad, say("Could not cancel."),
                                  user("###STOP###"))  # fmt: skip


PROFILE = {"user_id": "yusuf_rossi_9620", "payment_methods": {"paypal_7": {"source": "paypal"},
           "gift_card_1": {"source": "gift_card", "balance": 100}, "credit_card_2": {"source": "credit_card"}}}


def _with_profile(write: list[dict[str, Any]], status: str = "delivered") -> list[str]:
    arguments = json.loads(write[0]["tool_calls"][0]["function"]["arguments"])
    proposal = f"Proceed with #W2378156, items {arguments.get('item_ids')}, {arguments['payment_method_id']}? Confirm?"
    return rules(user("a@example.com"), FIND, tool("get_user_details", {"user_id": "yusuf_rossi_9620"}, PROFILE),
                 order(status), say(proposal), user("yes"), write, say("Done."), user("###STOP###"))  # fmt: skip


def test_a_return_refunds_the_original_method_or_a_gift_card_of_the_users_own() -> None:
    def back(payment: str, items: tuple[str, ...] = ("1",)) -> list[dict[str, Any]]:
        return tool("return_delivered_order_items", {"order_id": "#W2378156", "item_ids": list(items),
                                                     "payment_method_id": payment}, {"status": "return requested"})

    assert _with_profile(back("paypal_7")) == [] and _with_profile(back("gift_card_1")) == []
    assert _with_profile(back("credit_card_2")) == ["policy:precondition_state"]  # neither original nor gift card
    assert _with_profile(back("gift_card_9")) == ["policy:precondition_state"]  # not in the profile
    assert _with_profile(back("paypal_7", ("1", "5"))) == ["policy:precondition_state"]  # item 5 not in the order


def test_a_new_payment_method_differs_and_a_gift_card_covers_the_total() -> None:
    def pay(payment: str) -> list[dict[str, Any]]:
        return tool("modify_pending_order_payment", {"order_id": "#W2378156", "payment_method_id": payment},
                    {"status": "pending"})  # fmt: skip

    assert _with_profile(pay("credit_card_2"), "pending") == []
    assert _with_profile(pay("paypal_7"), "pending") == ["policy:precondition_state"]  # the same method
    assert _with_profile(pay("gift_card_1"), "pending") == ["policy:precondition_state"]  # 100 < 120.5
