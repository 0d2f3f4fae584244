"""The shipped tau-retail policy on hand-written trajectories in the tau-bench format: authentication first,
order status before acting, one call of the once-only tools per order, confirmation in Chinese too."""

from __future__ import annotations

from typing import Any

from tracekit.diagnose import Conversation, load_policy, trace_violations

from .tau_format import say, tau_trace, tool, user

POLICY = load_policy("tau-retail")
FIND = tool("find_user_id_by_email", {"email": "a@example.com"}, "yusuf_rossi_9620")
PENDING = {"order_id": "#W2378156", "status": "pending", "items": []}


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
