"""The pytest plugin, run with pytester: cases become items, the recordings' verdicts become outcomes.

The case library and the recordings are made here: three small cases written after seed B2's format
(one passing recording, one failing recording that calls a forbidden tool, one case with no
recording) and one judge-scored case with no cached verdict (pending).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

# Imported here, before pytester runs pytest in this process: pytester drops the modules an inner run
# imported, and PyYAML's C parser does not survive being imported twice.
import tracekit.analyze.results
import tracekit.cases.loader
import tracekit.pytest_plugin
import tracekit.report.runs  # noqa: F401
from tracekit.trace import Header, TraceBuilder, write_trace

pytest_plugins = ("pytester",)

_CASE = """\
id: {id}
dimension: {dim}
category: {cat}
title: 查{city}天气
seed: {{file: 000_649a87b897009fb0.txt, section: 工具选择准确率, number: {number}}}
context: {{now: '2026-04-07', tools: [maps_weather, web_search]}}
input: {{user: 查一下{city}今天的天气}}
expect:
  calls:
  - tool: maps_weather
    args: {{city: {{exact: {city}}}}}
  forbidden_tools: [web_search]
scoring: {scoring}
{judge}"""


def _case(root: Path, case_id: str, city: str, number: int, scoring: str = "auto") -> None:
    dim, cat = case_id.split("-")[:2]
    judge = "judge: {rubric: 回答是否忠实于工具结果}\n" if "judge" in scoring else ""
    path = root / "cases" / dim.lower() / f"{case_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_CASE.format(id=case_id, dim=dim, cat=cat, city=city, number=number, scoring=scoring,
                                 judge=judge), encoding="utf-8")


def _recording(root: Path, name: str, case_id: str, city: str, tool: str, group: str = "A") -> None:
    builder = TraceBuilder(Header(trace_id=name, case_id=case_id, group=group, repeat=0))
    builder.add_conversation([
        {"role": "user", "content": f"查一下{city}今天的天气"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_1", "name": tool,
                                           "input": {"city": city} if tool == "maps_weather" else {"query": city}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": '{"weather": "晴"}'}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"{city}今天晴。"}]},
    ])
    write_trace(root / "recordings" / f"{name}.jsonl", builder.records)


@pytest.fixture
def library(pytester: pytest.Pytester) -> pytest.Pytester:
    root = pytester.path
    _case(root, "B2-TS-01", "北京", 1)
    _case(root, "B2-TS-02", "上海", 2)
    _case(root, "B2-TS-03", "广州", 3)
    _case(root, "Q1-TF-01", "深圳", 1, scoring="auto+judge")
    _recording(root, "ts01-a", "B2-TS-01", "北京", "maps_weather")
    _recording(root, "ts01-b", "B2-TS-01", "北京", "maps_weather", group="B")
    _recording(root, "ts02-a", "B2-TS-02", "上海", "web_search")
    _recording(root, "tf01-a", "Q1-TF-01", "深圳", "maps_weather")
    pytester.makepyfile(test_ordinary="def test_ordinary():\n    assert True\n")
    return pytester


def _plugin_args() -> list[str]:
    """Load the plugin by module unless the installed package already registers it (pytest11). The
    hypothesis plugin is left out of the inner runs: its summary imports hypothesis, which pytester
    unloads after every run, so each run would pay for the import again."""
    installed = any(ep.value == "tracekit.pytest_plugin" for ep in entry_points(group="pytest11"))
    return ["-p", "no:hypothesispytest", *([] if installed else ["-p", "tracekit.pytest_plugin"])]


def test_cases_become_items_with_verdicts_as_outcomes(library: pytest.Pytester) -> None:
    result = library.runpytest(*_plugin_args(), "--tracekit-cases", "cases", "--tracekit-recordings", "recordings",
                               "-rs", "-v")
    result.assert_outcomes(passed=2, failed=1, skipped=2)
    result.stdout.fnmatch_lines([
        "*test_ordinary.py::test_ordinary PASSED*",
        "cases/b2/B2-TS-01.yaml::B2-TS-01 PASSED*",
        "cases/b2/B2-TS-02.yaml::B2-TS-02 FAILED*",
        "cases/b2/B2-TS-03.yaml::B2-TS-03 SKIPPED*",
        "cases/q1/Q1-TF-01.yaml::Q1-TF-01 SKIPPED*",
    ])
    output = result.stdout.str()
    assert "B2-TS-02 A#0: fail" in output
    assert "[fail] forbidden_tools" in output and "web_search" in output
    assert "ts02-a.jsonl" in output
    assert "no recording bound to B2-TS-03" in output
    assert "Q1-TF-01: verdict pending" in output
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] cases/b2/B2-TS-03.yaml:1: no recording bound to B2-TS-03*"])


def test_keyword_selection_and_fail_on_acceptable(library: pytest.Pytester) -> None:
    root = library.path
    _case(root, "B2-TS-04", "杭州", 4)
    # Two identical successful calls: the required call is made, and the repeat makes the verdict no
    # better than acceptable under the case's call-count tiers.
    tiers = "  call_count: {pass: {max: 1}, acceptable: {max: 2}}\n"
    path = root / "cases" / "b2" / "B2-TS-04.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("scoring:", tiers + "scoring:"), encoding="utf-8")
    builder = TraceBuilder(Header(trace_id="ts04", case_id="B2-TS-04", group="A", repeat=0))
    call = {"type": "tool_use", "name": "maps_weather", "input": {"city": "杭州"}}
    builder.add_conversation([
        {"role": "user", "content": "查一下杭州今天的天气"},
        {"role": "assistant", "content": [{**call, "id": "tu_1"}, {**call, "id": "tu_2"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "晴"},
                                     {"type": "tool_result", "tool_use_id": "tu_2", "content": "晴"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "杭州今天晴。"}]},
    ])
    write_trace(root / "recordings" / "ts04.jsonl", builder.records)
    args = [*_plugin_args(), "--tracekit-cases", "cases", "--tracekit-recordings", "recordings", "-k", "B2-TS-04"]
    library.runpytest(*args).assert_outcomes(passed=1, deselected=5)
    strict = library.runpytest(*args, "--tracekit-fail-on", "acceptable")
    strict.assert_outcomes(failed=1, deselected=5)
    strict.stdout.fnmatch_lines(["*B2-TS-04 A#0: acceptable*"])


def test_plugin_is_inert_without_options(library: pytest.Pytester) -> None:
    result = library.runpytest(*_plugin_args())
    result.assert_outcomes(passed=1)


def test_bad_options_are_usage_errors(library: pytest.Pytester) -> None:
    no_recordings = library.runpytest(*_plugin_args(), "--tracekit-cases", "cases")
    assert no_recordings.ret == pytest.ExitCode.USAGE_ERROR
    no_recordings.stderr.fnmatch_lines(["*--tracekit-cases needs --tracekit-recordings*"])
    missing = library.runpytest(*_plugin_args(), "--tracekit-cases", "nowhere", "--tracekit-recordings", "recordings")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR


def test_cases_scored_by_the_judge_get_the_verdicts_analyze_gives(pytester: pytest.Pytester) -> None:
    """The plugin analyzes through the same door as `tracekit analyze`, kept judge verdicts included (found
    from the recordings, here the repository's recordings/judge, wherever pytest runs): nothing is skipped as
    pending that analyze judges."""
    root = Path(__file__).resolve().parents[1]
    result = pytester.runpytest(*_plugin_args(), "--tracekit-cases", str(root / "cases"),
                                "--tracekit-recordings", str(root / "recordings" / "reference"), "-k", "C4-AR")
    result.assert_outcomes(passed=3)
