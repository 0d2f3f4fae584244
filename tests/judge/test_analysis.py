"""The judge inside analysis: the hook's checks decide verdicts with the machine checks, stricter wins."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from judge_support import CASES, RULES_MODEL, answer, case, run_trace, scripted_rule, tool_turn

from tracekit.analyze.results import AnalyzeSettings, analyze_trace
from tracekit.application import load_case_set
from tracekit.judge import TEMPLATE_VERSION, JudgeConfig, rule_judge
from tracekit.judge.analysis import judge_hook
from tracekit.testing import FakeUpstream, text_reply
from tracekit.trace import Trace

LISTINGS = '{"total": 1, "listings": [{"listing_id": "bj_ch_001", "bedrooms": 3, "total_price_wan": 680}]}'


def analyze(trace: Trace, config: JudgeConfig) -> dict[str, Any]:
    entry = analyze_trace(trace, AnalyzeSettings(load_case_set(CASES)), judge=judge_hook(config))
    verdict: dict[str, Any] = entry["verdict"]
    return verdict


def pc05_trace(tmp_path: Path, low: int, high: int) -> Trace:
    arguments = {"city_id": 110000, "district": "朝阳区", "room_num": 3, "price_min": low, "price_max": high}
    search = tool_turn("toolu_1", "beike_search_resale_housing", arguments, LISTINGS)
    agent = [*search, answer("找到 1 套：望京花园小区。")]
    return run_trace(tmp_path, case("B2-PC-05"), agent, f"pc05-{low}-{high}")


@pytest.fixture
def upstream() -> Any:
    with FakeUpstream(rule_judge(scripted_rule)) as fake:
        yield fake


def test_auto_plus_judge_shows_both_parts_and_the_stricter_decides(tmp_path: Path, upstream: FakeUpstream) -> None:
    config = JudgeConfig(model=RULES_MODEL, store=tmp_path / "store", base_url=upstream.url)

    fair = analyze(pc05_trace(tmp_path, 500, 700), config)
    narrow = analyze(pc05_trace(tmp_path, 590, 610), config)

    machine = [check for check in narrow["checks"] if check["check"].startswith("calls[0]")]
    assert [check["result"] for check in machine] == ["pass"]  # 590-610 is within the machine check's ranges
    assert [check["result"] for check in narrow["judged_checks"]] == ["fail"]
    assert narrow["result"] == "fail"
    assert fair["result"] == "pass"
    judge = fair["judged_checks"][0]["judge"]
    assert (judge["model"], judge["template"], judge["status"]) == (RULES_MODEL, TEMPLATE_VERSION, "pass")


def test_analysis_offline_reuses_kept_verdicts_and_leaves_the_rest_pending(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    store = tmp_path / "store"
    judged = run_trace(tmp_path, case("Q1-TF-01"), [answer("大约 8999 元。")], "judged")
    unjudged = run_trace(tmp_path, case("Q1-TF-01"), [answer("搜索不到。")], "unjudged")
    analyze(judged, JudgeConfig(model=RULES_MODEL, store=store, base_url=upstream.url))
    calls = len(upstream.requests)

    offline = JudgeConfig(model=None, store=store, offline=True)
    kept = analyze(judged, offline)
    missing = analyze(unjudged, offline)

    assert len(upstream.requests) == calls == 1
    assert kept["result"] == "fail" and kept["judged_checks"][0]["judge"]["source"] == "kept"
    assert missing["result"] == "pending"


def test_a_judge_error_never_passes_the_case(tmp_path: Path) -> None:
    trace = run_trace(tmp_path, case("Q1-TF-01"), [answer("搜索不到。")], "garbled")
    with FakeUpstream([text_reply("通过")]) as fake:
        verdict = analyze(trace, JudgeConfig(model=RULES_MODEL, store=tmp_path / "store", base_url=fake.url))

    assert verdict["result"] == "pending" and verdict["judge"] == "error"
    assert verdict["judged_checks"][0]["result"] == verdict["judged_checks"][0]["judge"]["status"] == "error"


def test_analyzing_twice_calls_the_judge_only_the_first_time_with_equal_results(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    from tracekit.analyze.results import build_results
    from tracekit.judge.analysis import close_judges

    traces = tmp_path / "traces"
    run_trace(traces, case("Q1-TF-01"), [answer("大约 8999 元。")], "fabricated")
    run_trace(traces, case("C4-AR-01"), [answer("搜索不到。")], "unexplained")
    run_trace(traces, case("B2-TS-01"), [answer("好的。")], "auto-only")
    files = sorted(traces.glob("*.jsonl"))
    config = JudgeConfig(model=RULES_MODEL, store=tmp_path / "store", base_url=upstream.url)
    settings = AnalyzeSettings(load_case_set(CASES), judge=partial(judge_hook, config))  # a picklable provider

    def verdicts() -> list[Any]:
        close_judges()  # a new run: nothing remembered but the store
        return [entry["verdict"].to_plain() for entry in build_results(files, settings)["traces"]]

    first = verdicts()
    calls = len(upstream.requests)
    second = verdicts()

    assert calls == 2 and len(upstream.requests) == 2
    assert [verdict["judge"] for verdict in first] == ["not_needed", "new", "new"]
    assert [verdict["judge"] for verdict in second] == ["not_needed", "kept", "kept"]
    for before, after in zip(first, second, strict=True):
        for verdict in (before, after):
            verdict.pop("judge")
            for check in verdict["judged_checks"] or []:
                check["judge"].pop("source")
        assert before == after
    assert [verdict["result"] for verdict in first] == ["fail", "fail", "fail"]  # auto-only: no search_flights


def test_analysis_knows_the_judge_source_without_importing_the_judge() -> None:
    from tracekit.analyze.results import JUDGE_SOURCE as SKIPPED
    from tracekit.judge.transport import JUDGE_SOURCE

    assert SKIPPED == JUDGE_SOURCE
