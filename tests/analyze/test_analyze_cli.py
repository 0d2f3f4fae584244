"""``tracekit analyze`` end to end: the contract's JSON, exit statuses, problems, options, --jobs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli

from .factories import build_trace, call, messages_of, say, user, write

CASES = Path(__file__).resolve().parents[2] / "cases"
WEATHER = {"city": "北京", "weather": "晴"}


def _write(folder: Path, name: str, steps: list[Any], **header: Any) -> Path:
    prompt = {"B2-TS-02": "北京明天天气怎么样"}.get(header.get("case_id") or "", "帮我查一下")
    return write(build_trace(messages_of([user(prompt), *steps]), trace_id=name, **header), folder / f"{name}.jsonl")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    traces = tmp_path / "traces"
    _write(
        traces, "a-pass", [call("maps_weather", {"city": "北京"}, WEATHER), say("晴")], case_id="B2-TS-02", group="A"
    )
    _write(
        traces, "b-fail", [call("web_search", {"query": "北京天气"}, "{}"), say("晴")], case_id="B2-TS-02", group="B"
    )
    _write(traces, "loop", [call("get_user", {"name": "u1"}, "Error: timeout", error=True) for _ in range(3)])
    return traces


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["analyze", *args], catch_exceptions=False)


def test_results_json_follows_the_contract(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    result = run(str(folder), "--cases", str(CASES), "--json", str(out))
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert set(document) >= {"tracekit", "traces", "summary"}
    by_id = {trace["trace_id"]: trace for trace in document["traces"]}
    assert list(by_id) == ["a-pass", "b-fail", "loop"]
    for trace in document["traces"]:
        assert set(trace) >= {
            "trace_id",
            "session",
            "source",
            "meta",
            "case_id",
            "stats",
            "tool_calls",
            "findings",
            "verdict",
        }
        assert set(trace["stats"]) == {"llm_calls", "tool_calls", "tool_errors", "input_tokens", "output_tokens"}
        for tool_call in trace["tool_calls"]:
            assert set(tool_call) == {"index", "name", "input", "is_error", "history"}
    assert by_id["a-pass"]["verdict"]["result"] == "pass" and by_id["b-fail"]["verdict"]["result"] == "fail"
    assert by_id["loop"]["verdict"] is None and by_id["loop"]["case_id"] is None
    [storm] = by_id["loop"]["findings"]
    assert set(storm) >= {"kind", "severity", "calls", "message"} and storm["kind"] == "retry_storm"
    summary = document["summary"]
    assert summary["verdicts"] == {"pass": 1, "acceptable": 0, "fail": 1, "pending": 0}
    assert summary["by_category"]["B2-TS"]["fail"] == 1 and summary["findings"] == {"retry_storm": 1}
    ab = summary["ab"]
    assert (ab["cases"], ab["A"]["pass_rate"], ab["B"]["pass_rate"], ab["pass_rate_delta"]) == (1, 1.0, 0.0, -1.0)
    assert "verdicts: 1 pass, 1 fail" in result.output


def test_two_runs_of_a_library_are_kept_apart_in_pass_k_and_ab(tmp_path: Path) -> None:
    # A reference run (two repeats in group A) and a flawed run of the same case, as recordings/ holds them.
    traces, out = tmp_path / "traces", tmp_path / "r.json"
    good = [call("maps_weather", {"city": "北京"}, WEATHER), say("晴")]
    bad = [call("web_search", {"query": "北京天气"}, "{}"), say("晴")]
    runs = {"reference": (good, [("A", 0), ("A", 1), ("B", 0)]), "flawed": (bad, [("A", 0), ("B", 0)])}
    for policy, (steps, jobs) in runs.items():
        for group, repeat in jobs:
            _write(traces / policy, f"{policy}-{group}{repeat}", steps, case_id="B2-TS-02", group=group,
                   repeat=repeat, source=f"run:scripted:{policy}", model=f"scripted:{policy}")  # fmt: skip
    assert run(str(traces), "--cases", str(CASES), "--json", str(out)).exit_code == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert {entry["run"] for entry in document["traces"]} == {"run:scripted:reference", "run:scripted:flawed"}

    summary = document["summary"]
    reliability = summary["reliability"]
    assert reliability["ks"] == [1, 2] and reliability["flaky"] == []  # runs are not repeats of each other
    assert reliability["mean_pass^k"]["2"] == 1.0 and reliability["tasks"] == {"1": 4, "2": 1}
    by_run = {entry["run"]: entry for entry in summary["runs"]}
    assert by_run["run:scripted:reference"]["verdicts"] == {"pass": 3, "acceptable": 0, "fail": 0, "pending": 0}
    assert by_run["run:scripted:flawed"]["verdicts"]["fail"] == 2 and by_run["run:scripted:flawed"]["pass_rate"] == 0
    assert by_run["run:scripted:reference"]["mean_pass^k"] == {"1": 1.0, "2": 1.0}
    assert list(by_run["run:scripted:flawed"]["ab"]["per_case"]) == ["B2-TS-02"]
    ab = summary["ab"]  # pairs within each run: both tie, never reference A against flawed B
    assert sorted(ab["per_case"]) == ["B2-TS-02@run:scripted:flawed", "B2-TS-02@run:scripted:reference"]
    assert ab["cases_better"] == {"A": 0, "B": 0, "tie": 2, "undecided": 0}
    assert ab["per_case"]["B2-TS-02@run:scripted:reference"]["A"]["traces"] == 2


def test_fail_on(folder: Path) -> None:
    assert run(str(folder), "--cases", str(CASES), "--fail-on", "fail").exit_code == 1
    passing = folder / "a-pass.jsonl"
    assert run(str(passing), "--cases", str(CASES), "--fail-on", "fail").exit_code == 0
    assert run(str(passing), "--cases", str(CASES), "--fail-on", "acceptable").exit_code == 0
    assert run(str(folder), "--fail-on", "fail").exit_code == 0  # no case library: no verdicts


def test_case_option_binds_every_trace(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert (
        run(str(folder / "loop.jsonl"), "--cases", str(CASES), "--case", "B2-TS-02", "--json", str(out)).exit_code == 0
    )
    [trace] = json.loads(out.read_text(encoding="utf-8"))["traces"]
    assert trace["case_id"] == "B2-TS-02" and trace["verdict"]["result"] == "fail"


def test_unreadable_lines_are_reported_and_never_fatal(folder: Path, tmp_path: Path) -> None:
    damaged = folder / "a-pass.jsonl"
    damaged.write_bytes(damaged.read_bytes() + b'{"kind": "tool_call", "index": 9')  # torn last line
    out = tmp_path / "r.json"
    result = run(str(folder), "--json", str(out))
    assert result.exit_code == 0
    line = len(damaged.read_bytes().splitlines())
    assert f"{damaged}:{line}: torn last line" in result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert any(f"{damaged}:{line}" in problem for problem in document["problems"])
    assert document["summary"]["unreadable_lines"] == 1


def test_unreadable_file_exits_2_after_analyzing_the_rest(folder: Path, tmp_path: Path) -> None:
    (folder / "empty.jsonl").write_bytes(b"")
    out = tmp_path / "r.json"
    result = run(str(folder), "--json", str(out))
    assert result.exit_code == 2
    assert "empty.jsonl" in result.output
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["traces"] == 3


@pytest.mark.parametrize(
    "args",
    [
        ["--detector-option", "retry_storm=3"],
        ["--detector-option", "no_such.x=1"],
        ["--detector-option", "retry_storm.failures=many"],
        ["--case", "B2-TS-02"],
        ["--cases", str(CASES), "--case", "B2-XX-99"],
    ],
)
def test_bad_usage_exits_2(folder: Path, args: list[str]) -> None:
    result = run(str(folder), *args)
    assert result.exit_code == 2, result.output


def test_missing_path_exits_2(tmp_path: Path) -> None:
    assert run(str(tmp_path / "nope")).exit_code == 2


def test_detector_options_from_the_command_line_and_a_config_file(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"

    def kinds() -> list[str]:
        document = json.loads(out.read_text(encoding="utf-8"))
        return [f["kind"] for t in document["traces"] for f in t["findings"]]

    assert run(str(folder), "--json", str(out), "--detector-option", "retry_storm.failures=4").exit_code == 0
    assert kinds() == []
    config = tmp_path / "analyze.yaml"
    config.write_text("detectors:\n  retry_storm: {enabled: false}\n", encoding="utf-8")
    assert run(str(folder), "--json", str(out), "--config", str(config)).exit_code == 0
    assert kinds() == []
    config.write_text("detectors:\n  retry_storm: {failurs: 2}\n", encoding="utf-8")
    result = run(str(folder), "--config", str(config))
    assert result.exit_code == 2 and "failurs" in result.output


def test_jobs_give_the_same_document_in_the_same_order(tmp_path: Path) -> None:
    traces = tmp_path / "many"
    for number in range(12):
        steps = [call("get", {"id": f"u{number}"}, "{}") for _ in range(number % 3 + 1)]
        _write(traces, f"t{number:02d}", steps)
    serial, parallel = tmp_path / "serial.json", tmp_path / "parallel.json"
    assert run(str(traces), "--json", str(serial)).exit_code == 0
    assert run(str(traces), "--json", str(parallel), "--jobs", "2").exit_code == 0
    assert serial.read_bytes() == parallel.read_bytes()
    assert [t["trace_id"] for t in json.loads(serial.read_text())["traces"]] == [f"t{n:02d}" for n in range(12)]


def test_json_to_stdout(folder: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", str(folder / "loop.jsonl"), "--json", "-"])
    assert result.exit_code == 0
    start = result.stdout.index("{")
    document = json.loads(result.stdout[start : result.stdout.rindex("}") + 1])
    assert document["traces"][0]["trace_id"] == "loop"


def test_judged_cases_are_pending_without_a_verdict_and_use_kept_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Independent of the repository's recordings/judge: the working folder has none, every store is a tmp one.
    monkeypatch.chdir(tmp_path)
    from tracekit.cases.loader import load_cases
    from tracekit.judge.analysis import close_judges

    from .factories import case_trace

    case = load_cases(CASES).get("C4-AR-02")  # scored by the LLM judge only
    assert case.scoring == "judge" and not case.expect.model_dump(exclude_defaults=True)
    answer = say("500 元以内买不到能玩《黑神话：悟空》的游戏本：它需要独立显卡，通常 5000 元起。可提高预算或用云游戏。")
    steps = [call("taobao_search_products", {"keyword": "游戏笔记本 500元"}, {"total": 0, "items": []}), answer]
    traces = tmp_path / "traces"
    write(case_trace(case, steps, trace_id="ar1"), traces / "ar1.jsonl")
    store, out = tmp_path / "judge", tmp_path / "r.json"

    def analyzed(*args: str) -> dict[str, Any]:
        assert run(str(traces), "--cases", str(CASES), "--json", str(out), *args).exit_code == 0
        return dict(json.loads(out.read_text(encoding="utf-8")))

    def verdict(*args: str) -> dict[str, Any]:
        return dict(analyzed(*args)["traces"][0]["verdict"])

    no_judge, empty_store = verdict(), verdict("--judge-store", str(store))
    assert (no_judge["result"], no_judge["judge"], no_judge["judged_checks"]) == ("pending", "pending", None)
    assert (empty_store["result"], empty_store["judge"]) == ("pending", "pending")
    assert empty_store["judged_checks"][0]["result"] == "pending" and empty_store["parts"]["judge"] == "pending"
    offline = verdict("--judge-store", str(store), "--judge-model", "scripted:judge", "--judge-offline")
    assert offline["result"] == "pending" and not store.exists()  # named model, but never called
    judged = verdict("--judge-store", str(store), "--judge-model", "scripted:judge")
    assert judged["judge"] == "new" and judged["judged_checks"][0]["check"] == "judge"
    assert judged["parts"]["judge"] == judged["result"] != "pending"
    assert judged["parts"]["judge_model"] == "scripted:judge" and judged["parts"]["auto"] is None  # judge only
    close_judges()  # a new run reads the store afresh, as a new process would
    kept = verdict("--judge-store", str(store))  # offline: the kept verdict, no model named
    assert (kept["result"], kept["judge"]) == (judged["result"], "kept")

    # The kept exchanges are trace files too; in an analyzed folder they are counted apart, not listed.
    (traces / "judge").mkdir()
    for kept_file in store.rglob("*.jsonl"):
        (traces / "judge" / kept_file.name).write_bytes(kept_file.read_bytes())
    document = analyzed("--judge-store", str(store))
    assert [entry["trace_id"] for entry in document["traces"]] == ["ar1"]
    assert document["summary"]["skipped_judge_exchanges"] == 1 and document["summary"]["traces"] == 1
    [named] = sorted((traces / "judge").glob("*.jsonl"))
    assert run(str(named), "--json", str(out)).exit_code == 0  # named on its own: analyzed as a trace
    assert len(json.loads(out.read_text(encoding="utf-8"))["traces"]) == 1


def test_reports_and_progress(folder: Path, tmp_path: Path) -> None:
    html, markdown, junit = tmp_path / "html", tmp_path / "summary.md", tmp_path / "junit.xml"
    result = run(
        str(folder),
        "--cases",
        str(CASES),
        "--html",
        str(html),
        "--markdown",
        str(markdown),
        "--junit",
        str(junit),
        "--progress",
    )
    assert result.exit_code == 0, result.output
    assert (html / "index.html").is_file() and "B2-TS-02" in markdown.read_text(encoding="utf-8")
    assert "<testsuite" in junit.read_text(encoding="utf-8") and "Analyzing" in result.output


def test_trace_paths_match_trace_files(tmp_path: Path) -> None:
    from tracekit.analyze.results import trace_paths
    from tracekit.trace import trace_files

    for name in ["b/2.jsonl", "a-b/1.jsonl", "a/b.jsonl", "a/z/0.jsonl", "c.jsonl", "a/notes.txt", "10.jsonl"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    single = tmp_path / "c.jsonl"
    assert trace_paths([tmp_path, single]) == [str(path) for path in trace_files([tmp_path, single])]
