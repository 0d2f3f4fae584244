"""Reference actions: the agent's writes compared with the expected calls (tau-bench's ``info.task.actions``
kept by the importer, or ``--expected-actions``), canonically, in the real tau-bench format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tracekit.analyze import AnalyzeSettings
from tracekit.analyze.entry import analyze_trace
from tracekit.cli.main import cli
from tracekit.diagnose import Conversation, load_policy
from tracekit.diagnose.reference import Reference, load_expected_actions, reference_violations
from tracekit.importers import write_traces
from tracekit.importers.common import ImportedTrace
from tracekit.trace import load_trace

from .tau_format import say, tau_trace, tool, user

BOOKING = {"reservation_id": "ZFA04Y", "cabin": "economy", "insurance": "no", "created_at": "2024-05-14T20:00:00",
           "total_baggages": 1, "user_id": "mia_li_3668"}  # fmt: skip
BAGS = {"reservation_id": "ZFA04Y", "total_baggages": 3, "nonfree_baggages": 1, "payment_id": "credit_card_7"}
WRITES = load_policy("tau-airline").tools_of("write")


def _conversation(bags: dict[str, Any], *, answer: str = "Done: you now have 3 bags.") -> Conversation:
    trace = tau_trace(
        user("add two bags to ZFA04Y"),
        tool("get_reservation_details", {"reservation_id": "ZFA04Y"}, BOOKING),
        say("I will set ZFA04Y to 3 bags, 1 paid, with credit_card_7. Confirm?"),
        user("yes"),
        tool("update_reservation_baggages", bags, {"status": "ok"}),
        say(answer),
    )
    return Conversation.of(trace)


def _reference(*calls: dict[str, Any], outputs: tuple[str, ...] = ()) -> Reference:
    return Reference.parse({"actions": list(calls), "outputs": list(outputs)}, "test")


def _expected(**changes: Any) -> dict[str, Any]:
    return {"name": "update_reservation_baggages", "kwargs": {**BAGS, **changes}}


def test_a_write_equal_up_to_key_order_number_forms_and_extra_keys_fires_nothing() -> None:
    reordered = {"payment_id": "credit_card_7", "nonfree_baggages": "1", "total_baggages": 3.0,
                 "reservation_id": " ZFA04Y", "note": "extra key the expected call leaves out"}  # fmt: skip
    reference = _reference({"name": "get_reservation_details", "kwargs": {"reservation_id": "ZFA04Y"}}, _expected(),
                           outputs=("3 bags",))  # fmt: skip
    assert reference_violations(_conversation(reordered), reference, WRITES, []) == []


def test_wrong_arguments_name_the_field_and_both_values_and_the_category_says_whether_it_was_made_up() -> None:
    seen = reference_violations(_conversation({**BAGS, "total_baggages": 1}), _reference(_expected()), WRITES, [])
    assert [(v.rule, v.step, v.call, v.category) for v in seen] == [
        ("reference:arguments", 5, 1, "Intent-Plan Misalignment")]  # 1 is in the reservation the agent read
    assert "at total_baggages: expected 3, got 1" in seen[0].message
    made_up = reference_violations(_conversation({**BAGS, "payment_id": "gift_card_99"}), _reference(_expected()),
                                   WRITES, [])  # fmt: skip
    assert made_up[0].category == "Invention of New Information"
    assert "expected 'credit_card_7', got 'gift_card_99'" in made_up[0].message


def test_an_unexpected_write_a_missing_one_and_a_missing_output() -> None:
    conversation = _conversation(BAGS, answer="All set.")
    cancel = {"name": "cancel_reservation", "kwargs": {"reservation_id": "ZFA04Y"}}
    missing = reference_violations(conversation, _reference(_expected(), cancel, outputs=("42",)), WRITES, [])
    assert [(v.rule, v.step, v.call) for v in missing] == [("reference:missing", 7, None),
                                                          ("reference:output", 7, None)]  # fmt: skip
    assert "cancel_reservation(reservation_id='ZFA04Y')" in missing[0].message
    unexpected = reference_violations(conversation, _reference(cancel), WRITES, [])
    assert [(v.rule, v.call, v.category) for v in unexpected] == [
        ("reference:unexpected", 1, "Intent-Plan Misalignment"), ("reference:missing", None,
                                                                   "Instruction/Plan Adherence Failure")]


def test_a_failed_write_changed_nothing_and_reads_are_not_compared_with_a_policy() -> None:
    trace = tau_trace(
        user("add bags"),
        tool("update_reservation_baggages", {**BAGS, "payment_id": "bad"}, "Error: payment method not found"),
        tool("get_user_details", {"user_id": "mia_li_3668"}, {"user_id": "mia_li_3668"}),
        tool("update_reservation_baggages", BAGS, {"status": "ok"}),
        say("Done."),
    )
    assert reference_violations(Conversation.of(trace), _reference(_expected()), WRITES, []) == []
    # Without a policy every call is compared: the lookup is now an unexpected call.
    rules = [v.rule for v in reference_violations(Conversation.of(trace), _reference(_expected()), None, [])]
    assert rules == ["reference:unexpected"]


def _write(folder: Path, name: str, trace: Any) -> Path:
    records = [trace.header.model_copy(update={"trace_id": name}), *trace.records]
    write_traces([ImportedTrace(name, records)], folder)
    return folder / f"{name}.jsonl"


def _tau(bags: dict[str, Any], reward: float) -> Any:
    info = {"task": {"actions": [{"name": "get_reservation_details", "kwargs": {"reservation_id": "ZFA04Y"}},
                                 _expected()], "outputs": []}}  # fmt: skip
    return tau_trace(user("add two bags to ZFA04Y"),
                     tool("get_reservation_details", {"reservation_id": "ZFA04Y"}, BOOKING),
                     say(f"{bags['total_baggages']} bags, 1 paid, credit_card_7: confirm?"), user("yes"),
                     tool("update_reservation_baggages", bags, {"status": "ok"}), say("Done."), user("###STOP###"),
                     reward=reward, info=info)  # fmt: skip


def test_the_imported_ground_truth_is_read_with_a_policy_only_and_decides_the_critical_step(tmp_path: Path) -> None:
    wrong = load_trace(_write(tmp_path, "wrong", _tau({**BAGS, "total_baggages": 4}, 0.0)))
    with_policy = analyze_trace(wrong, AnalyzeSettings(policy="tau-airline"))
    diagnosis = with_policy["diagnosis"]
    assert (diagnosis["step"], diagnosis["call"], diagnosis["rule"]) == (5, 1, "reference:arguments")
    assert "reference_mismatch" in [f["kind"] for f in with_policy["findings"]]
    without = analyze_trace(wrong)  # no policy: the header's list (lookups included) is not read
    assert not str(without["diagnosis"]["rule"]).startswith("reference:")
    assert "reference_mismatch" not in [f["kind"] for f in without["findings"]]
    right = analyze_trace(load_trace(_write(tmp_path, "right", _tau(BAGS, 1.0))), AnalyzeSettings(policy="tau-airline"))
    assert right["diagnosis"] is None and [f["kind"] for f in right["findings"]] == ["ungrounded_argument"]


def test_an_expected_actions_file_by_trace_id_and_a_bad_one_is_bad_usage(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    _write(folder, "t1", _tau({**BAGS, "total_baggages": 4}, 0.0))
    expected = tmp_path / "expected.yaml"
    expected.write_text("t1:\n  - {name: get_reservation_details, arguments: {reservation_id: ZFA04Y}}\n"
                        "  - {name: update_reservation_baggages, arguments: {reservation_id: ZFA04Y, "
                        "total_baggages: 3}}\n", encoding="utf-8")  # fmt: skip
    out = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["analyze", str(folder), "--expected-actions", str(expected), "--json", str(out)])
    assert result.exit_code == 0, result.output
    (trace,) = json.loads(out.read_text(encoding="utf-8"))["traces"]
    assert trace["diagnosis"]["rule"] == "reference:arguments"
    assert "expected 3, got 4" in trace["diagnosis"]["evidence"][0]["message"]
    expected.write_text("t1:\n  - {arguments: {}}\n", encoding="utf-8")
    bad = CliRunner().invoke(cli, ["analyze", str(folder), "--expected-actions", str(expected)])
    assert bad.exit_code == 2 and f"{expected}: t1[0]: expected a call with a string `name`" in bad.output


def test_a_header_list_in_the_documented_shape_and_a_file_keyed_by_case_id(tmp_path: Path) -> None:
    meta = {"expected_actions": {"actions": [{"name": "cancel_reservation", "arguments": {"reservation_id": "X"}}],
                                 "outputs": ["42"]}}  # fmt: skip
    reference = Reference.of_meta(meta)
    assert reference is not None and reference.from_meta and reference.outputs == ("42",)
    assert Reference.of_meta({"expected_actions": "not a list"}) is None  # another shape: no reference, no error
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps({"CASE-1": [{"name": "t", "input": {"a": 1}}]}), encoding="utf-8")
    assert load_expected_actions(expected)["CASE-1"].calls[0].arguments == {"a": 1}
