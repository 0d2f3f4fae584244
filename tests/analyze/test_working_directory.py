"""Results never depend on the working directory (issue 14): the kept judge verdicts are found from the
recordings, sources are named from the PATH's folder, the report finds the traces from the results file, and
the main job gives byte-identical JSON from the repository and from anywhere else with absolute paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli

from .factories import call, case_trace, say, write

CASES = Path(__file__).resolve().parents[2] / "cases"
ANSWER = "南极没有商业定期航班。通常需要先飞到阿根廷乌斯怀亚，再乘邮轮前往。"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with one recording of a case scored by the judge only, and its kept verdict beside it
    (recordings/judge, as the repository's own recordings keep theirs)."""
    from tracekit.cases.loader import load_cases
    from tracekit.judge.analysis import close_judges

    root = tmp_path / "repo"
    case = load_cases(CASES).get("C4-AR-01")
    search = call("search_flights", {"origin": "上海", "destination": "南极"}, {"total": 0, "flights": []})
    steps = [search, say(ANSWER)]
    write(case_trace(case, steps, trace_id="ar1"), root / "recordings" / "ar1.jsonl")
    monkeypatch.chdir(root)
    kept = run("analyze", "recordings", "--cases", str(CASES), "--judge-model", "scripted:judge",
               "--judge-store", "recordings/judge")  # fmt: skip
    assert kept.exit_code == 0, kept.output
    close_judges()  # later runs read the store afresh, as new processes would
    return root


def test_the_main_job_gives_the_same_bytes_from_anywhere(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    out = repo / "reports" / "demo" / "results.json"
    here = run("analyze", "recordings", "--cases", str(CASES), "--json", "reports/demo/results.json")
    assert here.exit_code == 0, here.output
    from_repo = out.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    there = run("analyze", str(repo / "recordings"), "--cases", str(CASES), "--json", str(out))
    assert there.exit_code == 0, there.output
    assert out.read_bytes() == from_repo
    [entry] = json.loads(from_repo)["traces"]
    assert (entry["verdict"]["judge"], entry["verdict"]["result"]) == ("kept", "pass")
    assert (entry["source"], entry["trace_file"]) == ("recordings/ar1.jsonl", "../../recordings/ar1.jsonl")
    assert f"judge verdicts: kept in {repo / 'recordings' / 'judge'}" in there.output


def test_the_report_reads_the_traces_from_the_results_file(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    assert run("analyze", "recordings", "--cases", str(CASES), "--json", "reports/demo/results.json").exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = run("report", str(repo / "reports" / "demo" / "results.json"), "--html", "out")
    assert result.exit_code == 0, result.output
    page = (elsewhere / "out" / "traces" / "C4-AR-01.html").read_text(encoding="utf-8")
    assert "could not be read" not in page and ANSWER in page


def test_a_missing_judge_store_is_said_out_loud(repo: Path) -> None:
    import shutil

    shutil.rmtree(repo / "recordings" / "judge")
    out = repo / "r.json"
    result = run("analyze", "recordings", "--cases", str(CASES), "--json", str(out))
    assert result.exit_code == 0
    assert "no kept judge verdicts" in result.output and "stay pending" in result.output
    [entry] = json.loads(out.read_bytes())["traces"]
    assert entry["verdict"]["result"] == "pending"


def test_the_judge_store_is_found_above_a_subfolder_of_the_recordings(repo: Path) -> None:
    (repo / "recordings" / "runs").mkdir()
    (repo / "recordings" / "ar1.jsonl").rename(repo / "recordings" / "runs" / "ar1.jsonl")
    out = repo / "r.json"
    assert run("analyze", "recordings/runs", "--cases", str(CASES), "--json", str(out)).exit_code == 0
    [entry] = json.loads(out.read_bytes())["traces"]
    assert entry["verdict"]["judge"] == "kept" and entry["source"] == "runs/ar1.jsonl"
