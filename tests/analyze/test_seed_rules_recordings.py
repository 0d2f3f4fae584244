"""``tracekit analyze recordings --cases cases`` reports no finding that contradicts the trace's own case
(issue 16, item 9).

A finding contradicts its case when it tells the agent to call a tool the case forbids or discourages, or
when it flags as an error a call that a passing check of the case credits as right (the required call,
the order, the data flow). The recordings are the repository's own ``recordings/`` (the demo's runs).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracekit.cases.loader import load_cases
from tracekit.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
CREDITING = re.compile(r"^(calls\[\d+\]|order:|data_flow:|either)")
ADVICE = re.compile(r"\bcall (\w+) first\b")


def contradictions(entry: dict[str, Any], forbidden: set[str]) -> list[str]:
    """How the findings of one analyzed trace contradict its case's verdict (empty: they do not)."""
    verdict = entry["verdict"]
    if verdict is None:
        return []
    credited = {
        index
        for check in verdict["checks"]
        if check["result"] == "pass" and CREDITING.match(check["check"])
        for index in check.get("calls", [])
    }
    found = []
    for finding in entry["findings"]:
        advised = set(ADVICE.findall(finding["message"]))
        if advised & forbidden:
            found.append(f"{finding['kind']} advises {sorted(advised & forbidden)}, which the case forbids")
        if finding["severity"] == "error" and credited & set(finding["calls"]):
            found.append(f"{finding['kind']} flags call(s) {sorted(credited & set(finding['calls']))} the case credits")
    return found


def test_the_predicate_catches_the_old_order_violation_on_q3_st_02() -> None:
    # What analysis said before issue 16 on the passing reference run of Q3-ST-02 (and B2-PC-05).
    entry: dict[str, Any] = {
        "verdict": {"checks": [{"check": "calls[1]:weibo_get_post_detail", "result": "pass", "calls": [1]}]},
        "findings": [{"kind": "order_violation", "severity": "error", "calls": [1],
                      "message": "weibo_get_post_detail (call #1) was called before any successful weibo_search_posts "
                                 "call, but post_id comes from weibo_search_posts.posts[].post_id; call "
                                 "weibo_search_posts first and pass on its result."}],
    }  # fmt: skip
    assert contradictions(entry, set()) == ["order_violation flags call(s) [1] the case credits"]
    advice = {**entry, "findings": [{**entry["findings"][0], "calls": [0]}]}
    assert contradictions(advice, {"weibo_search_posts"}) == [
        "order_violation advises ['weibo_search_posts'], which the case forbids"
    ]


def test_no_finding_on_the_recordings_contradicts_its_case(tmp_path: Path) -> None:
    recordings, cases = ROOT / "recordings", ROOT / "cases"
    if not recordings.is_dir():
        pytest.skip("no recordings/ beside the tests")
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        cli, ["analyze", str(recordings), "--cases", str(cases), "--json", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    library = load_cases(cases)
    traces = json.loads(out.read_text(encoding="utf-8"))["traces"]
    assert len([entry for entry in traces if entry["verdict"] is not None]) >= 100
    problems = []
    for entry in traces:
        case = library.cases.get(entry["case_id"] or "")
        if case is None:
            continue
        forbidden = set(case.expect.forbidden_tools) | case.discouraged_tool_names()
        problems += [f"{entry['source']}: {why}" for why in contradictions(entry, forbidden)]
    assert problems == []
