"""The loop detectors' window and outcome options, the repeated_text detector, and the presets (config + CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracekit.analyze.config import PRESETS, detector_options, preset_options
from tracekit.analyze.detectors import DetectorOptionError, Finding
from tracekit.cli.main import cli

from .factories import build_trace, call, messages_of, user, write
from .peer_scenarios import Step, agent, loop_findings, transcript

POLL = ("job_status", {"job_id": "j1"})


def found(steps: list[Any], kind: str, **options: Any) -> list[Finding]:
    overrides = {kind: options} if options else None
    return [f for f in loop_findings(transcript(steps), None, overrides) if f.kind == kind]


# --------------------------------------------------------------------------- repeated_call


def test_same_outcome_a_poll_whose_answer_changed_is_not_redundant() -> None:
    steps = [call(*POLL, {"state": "running"}), call(*POLL, {"state": "done"}), call(*POLL, {"state": "done"})]
    assert [f.calls for f in found(steps, "repeated_call")] == [[0, 1, 2]]
    [finding] = found(steps, "repeated_call", same_outcome=True)
    assert finding.calls == [1, 2] and "same result" in finding.message


def test_consecutive_counts_back_to_back_repeats_only() -> None:
    weather = call("maps_weather", {"city": "北京"}, {"weather": "晴"})
    searches = [call("web_search", {"query": query}, "{}") for query in "xy"]
    steps = [weather, searches[0], weather, searches[1], weather]
    assert [f.calls for f in found(steps, "repeated_call")] == [[0, 2, 4]]
    assert found(steps, "repeated_call", consecutive=True) == []
    assert [f.calls for f in found([weather, weather, searches[0]], "repeated_call", consecutive=True)] == [[0, 1]]


def test_without_require_success_failed_calls_count_and_the_message_says_so() -> None:
    steps = [call("lookup", {"q": "x"}, "Error", error=True) for _ in range(3)]
    assert found(steps, "repeated_call") == []
    [finding] = found(steps, "repeated_call", require_success=False)
    assert finding.calls == [0, 1, 2] and "3 times" in finding.message


def test_restart_after_flag_splits_a_long_run() -> None:
    steps = [call("read_file", {"path": "a"}, "x") for _ in range(8)]
    options = {"consecutive": True, "min_repeats": 3, "require_success": False}
    assert [f.calls for f in found(steps, "repeated_call", **options)] == [list(range(8))]
    runs = found(steps, "repeated_call", **options, restart_after_flag=True)
    assert [f.calls for f in runs] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_ignore_hides_matching_calls_from_the_detector() -> None:
    page = call("browser_action", {"action": "scroll_down"}, "page")
    rule = [{"tool": "browser_action", "args": {"action": "scroll_down"}}]
    assert [f.calls for f in found([page, page], "repeated_call")] == [[0, 1]]
    assert found([page, page], "repeated_call", ignore=rule) == []
    click = call("browser_action", {"action": "click", "x": 1}, "ok")  # same tool, other arguments: seen
    assert [f.calls for f in found([click, click], "repeated_call", ignore=rule)] == [[0, 1]]
    back_to_back = {"consecutive": True, "ignore": rule}  # hidden calls do not break a run either
    assert [f.calls for f in found([click, page, click], "repeated_call", **back_to_back)] == [[0, 2]]


@pytest.mark.parametrize("rule", ["browser_action", {"tool": 3}, {"tool": "x", "args": []}, {"tool": "x", "arg": {}}])
def test_a_malformed_ignore_rule_is_an_option_error(rule: Any) -> None:
    with pytest.raises(DetectorOptionError, match=r"repeated_call\.ignore: expected \{tool: NAME"):
        detector_options(options=[f"repeated_call.ignore={json.dumps([rule])}"])


def test_reset_on_user_message_separates_windows() -> None:
    weather = call("maps_weather", {"city": "北京"}, {"weather": "晴"})
    steps = [weather, user("再查一次"), weather]
    assert [f.calls for f in found(steps, "repeated_call")] == [[0, 1]]
    assert found(steps, "repeated_call", reset_on_user_message=True) == []


def test_agent_text_breaks_a_back_to_back_run() -> None:
    ls = call("execute_bash", {"command": "ls"}, "")
    steps = [ls, ls, agent("Let me look again."), ls, ls]
    options = {"consecutive": True, "min_repeats": 3, "require_success": False}
    assert [f.calls for f in found(steps, "repeated_call", **options)] == [[0, 1, 2, 3]]
    assert found(steps, "repeated_call", **options, agent_text_breaks=True) == []


# --------------------------------------------------------------------------- retry_storm and alternating_loop


def test_retry_storm_consecutive() -> None:
    failing = call("search_flights", {"date": "下周五"}, "Error", error=True)
    steps = [failing, failing, call("web_search", {"query": "机票"}, "{}"), failing]
    assert [f.calls for f in found(steps, "retry_storm")] == [[0, 1, 3]]
    assert found(steps, "retry_storm", consecutive=True) == []
    assert [f.calls for f in found([failing] * 3, "retry_storm", consecutive=True)] == [[0, 1, 2]]


def test_alternating_loop_same_outcome() -> None:
    steps = []
    for n in range(2):
        steps += [call("get_post", {"post_id": "p1"}, {"likes": n}), call("get_comments", {"post_id": "p1"}, "[]")]
    assert [f.calls for f in found(steps, "alternating_loop")] == [[0, 1, 2, 3]]
    assert found(steps, "alternating_loop", same_outcome=True) == []


# --------------------------------------------------------------------------- repeated_text


def test_repeated_message_three_times_with_no_tool_result_between() -> None:
    same = "我再确认一下您的需求。"
    [finding] = found([user("帮我订票"), agent(same), agent(same), agent(same)], "repeated_text")
    assert finding.messages == [1, 2, 3] and finding.calls == []
    assert found([user("帮我订票"), agent(same), agent(same)], "repeated_text") == []
    between = [user("帮我订票"), agent(same), call("search", {"q": "x"}, "{}"), agent(same), agent(same)]
    assert found(between, "repeated_text") == []


def test_repeated_message_and_user_turns() -> None:
    same = "好的。"
    steps = [user("a"), agent(same), user("b"), agent(same), user("c"), agent(same)]
    assert found(steps, "repeated_text") == []  # an answer to each user message
    assert len(found(steps, "repeated_text", reset_on_user_message=False)) == 1


def test_the_chunk_rule_is_off_by_default_and_finds_a_content_loop_when_on() -> None:
    text = "温馨提示：以上信息仅供参考，具体情况请以官方发布为准。如果您还有任何其他问题，欢迎随时向我提问。" * 12
    steps = [user("北京天气"), agent("北京晴。" + text)]
    assert found(steps, "repeated_text") == []
    [finding] = found(steps, "repeated_text", chunk_repeats=10)
    assert finding.messages == [1] and "10 times" in finding.message


def test_repeated_text_in_the_history_alone_is_not_flagged() -> None:
    from tracekit.analyze.detectors import DetectorContext, run_detectors
    from tracekit.analyze.graph import build_graph

    same = "稍等。"
    trace = build_trace(messages_of([user("a"), agent(same), agent(same), agent(same), user("b")]))
    context = DetectorContext(build_graph(trace.calls(5)), trace, history_messages=5)
    options = detector_options()
    assert [f for f in run_detectors(context, options) if f.kind == "repeated_text"] == []
    context = DetectorContext(build_graph(trace.calls(2)), trace, history_messages=2)
    assert [f.kind for f in run_detectors(context, options) if f.kind == "repeated_text"] == ["repeated_text"]


# --------------------------------------------------------------------------- presets


def test_presets_resolve_and_later_settings_win(tmp_path: Path) -> None:
    for name in PRESETS:
        assert detector_options(preset=name)
    assert detector_options(preset="roo")["alternating_loop"]["enabled"] is False
    config = tmp_path / "detectors.yaml"
    config.write_text("detectors:\n  repeated_call: {min_repeats: 5}\n", encoding="utf-8")
    resolved = detector_options(config, ["repeated_call.error_from=9"], preset="roo")
    assert resolved["repeated_call"]["min_repeats"] == 5 and resolved["repeated_call"]["error_from"] == 9
    assert resolved["repeated_call"]["consecutive"] is True  # from the preset
    with pytest.raises(DetectorOptionError, match="unknown detector preset"):
        preset_options("cursor")


def test_cli_choices_are_the_presets() -> None:
    from tracekit.cli.analyze import analyze

    [option] = [param for param in analyze.params if param.name == "detector_preset"]
    assert list(option.type.choices) == list(PRESETS)  # type: ignore[attr-defined]


def test_cli_detector_preset(tmp_path: Path) -> None:
    steps: list[Step] = [user("查一下"), *[call("read_file", {"path": "a"}, "x") for _ in range(4)]]
    path = write(build_trace(messages_of(steps), trace_id="loop"), tmp_path / "traces" / "loop.jsonl")

    def kinds(*extra: str) -> list[tuple[str, list[int]]]:
        out = tmp_path / f"out{len(extra)}.json"
        result = CliRunner().invoke(cli, ["analyze", str(path), "--json", str(out), *extra], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        [trace] = json.loads(out.read_text(encoding="utf-8"))["traces"]
        return [(f["kind"], f["calls"]) for f in trace["findings"]]

    assert kinds() == [("repeated_call", [0, 1, 2, 3])]
    assert kinds("--detector-preset", "roo") == [("repeated_call", [0, 1, 2, 3])]
    assert kinds("--detector-preset", "gemini-cli") == []  # 5 in a row needed
    assert kinds("--detector-preset", "gemini-cli", "--detector-option", "repeated_call.min_repeats=3") == [
        ("repeated_call", [0, 1, 2, 3])
    ]
    result = CliRunner().invoke(cli, ["analyze", str(path), "--detector-preset", "cursor"])
    assert result.exit_code == 2
