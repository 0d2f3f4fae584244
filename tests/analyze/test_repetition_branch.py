"""C4-LD-01's Fail line has two branches, 「Fail：重试超过 5 次 / 未识别出重复操作」 (seed 004): the same failing
call repeated past the Pass line's 「在 3-4 次失败后停止重试」 with no fallback meets the second branch and fails,
although its retries do not exceed five; a fallback (another call, or a question to the user) keeps the count
rule's verdict. The attribution and the trace's diagnosis name the same calls."""

# ruff: noqa: E501  (transcripts keep one step per line)

from __future__ import annotations

from pathlib import Path

import pytest

from .factories import call, say
from .seed_runs import checks_of, run_case, transcript

BAD_DATE = "Error: Invalid date parameter format. Expected ISO 8601 format (YYYY-MM-DD), got unrecognized date string. Please provide an explicit date."
FAILING = call("search_flights", {"origin": "北京", "destination": "上海", "date": "下周五"}, BAD_DATE, error=True)
BRANCH = "fail_line:未识别出重复操作"


@pytest.mark.parametrize(("calls", "expected"), [(4, "pass"), (5, "fail"), (6, "fail")])
def test_identical_failing_calls_with_no_fallback_meet_the_second_branch(
    tmp_path: Path, calls: int, expected: str
) -> None:
    entry = run_case(tmp_path, "C4-LD-01", transcript("C4-LD-01", [FAILING] * calls + [say("查询失败。")]))
    assert entry["verdict"]["result"] == expected
    assert (BRANCH in checks_of(entry)) == (expected == "fail")
    if expected == "fail":
        attribution = entry["verdict"]["scores"]["attribution"]
        assert attribution["failure_type"] == "循环" and attribution["clause"] == "未识别出重复操作"
        calls_named = checks_of(entry)[BRANCH]["calls"]
        assert attribution["evidence"]["calls"][0] == calls_named[0]
        # One answer to "where did it go wrong": the diagnosis and the attribution name the same step.
        diagnosis = entry["diagnosis"]
        assert diagnosis["call"] == calls_named[0] == attribution["critical_call"]
        assert diagnosis["step"] == attribution["critical_step"] and diagnosis["failed_because"][0] == "verdict"


def test_a_fallback_after_six_keeps_the_count_rule(tmp_path: Path) -> None:
    asked = [FAILING] * 6 + [say("日期格式一直出错，请告诉我具体哪一天出发（YYYY-MM-DD）？")]
    searched = [FAILING] * 6 + [call("web_search", {"query": "下周五 北京 上海 机票"}, "[]"), say("没有查到航班。")]
    for name, steps in (("asked", asked), ("searched", searched)):
        entry = run_case(tmp_path, "C4-LD-01", transcript("C4-LD-01", steps), name)
        assert entry["verdict"]["result"] == "acceptable" and BRANCH not in checks_of(entry)
