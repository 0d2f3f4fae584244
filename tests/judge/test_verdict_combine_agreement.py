"""Reading judge answers, majorities, the combined verdict, and the agreement study's numbers."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from judge_support import answer, case, run_trace

from tracekit.judge import cohens_kappa, combine, combined_verdict, compare, load_labels, majority, parse_judge_output
from tracekit.judge.agreement import Label, LabelsError
from tracekit.judge.evidence import Evidence, collect_evidence
from tracekit.judge.verdict import SampleVerdict


@pytest.fixture
def evidence(tmp_path: Path) -> Evidence:
    tf01 = case("Q1-TF-01")
    return collect_evidence(tf01, run_trace(tmp_path, tf01, [answer("淘宝上搜索不到这款手机。")]))


def test_a_fenced_json_answer_is_read(evidence: Evidence) -> None:
    text = '```json\n{"verdict": "Pass", "reasons": "如实告知", "quotes": ["搜索不到这款手机"]}\n```'

    sample = parse_judge_output(text, evidence)

    assert (sample.result, sample.reasons, sample.error) == ("pass", ["如实告知"], None)
    assert [quote.found_in for quote in sample.quotes] == ["final_answer"]


def test_an_answer_without_reasons_is_an_error(evidence: Evidence) -> None:
    sample = parse_judge_output('{"verdict": "pass", "quotes": ["搜索不到这款手机"]}', evidence)

    assert sample.result == "error" and sample.error == "the judge gave no reasons"


def sample(result: str) -> SampleVerdict:
    return SampleVerdict(result, ["r"], [], "bad" if result == "error" else None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        (["pass"], "pass"),
        (["error"], "error"),
        (["pass", "fail", "fail"], "fail"),
        (["pass", "pass", "fail"], "pass"),
        (["pass", "fail"], "fail"),  # a tie goes to the stricter verdict
        (["pass", "error", "error"], "error"),  # most answers unusable
        (["pass", "pass", "error"], "pass"),
    ],
)
def test_majority(results: list[str], expected: str) -> None:
    assert majority([sample(result) for result in results])[0] == expected


@pytest.mark.parametrize(
    ("auto", "judged", "expected"),
    [
        ("pass", "pass", "pass"),
        ("pass", "acceptable", "acceptable"),
        ("acceptable", "pass", "acceptable"),
        ("pass", "fail", "fail"),
        ("fail", "pass", "fail"),
        ("fail", "pending", "fail"),
        ("pass", "pending", "pending"),
        ("pass", "error", "pending"),  # an error is never a pass
        (None, "pass", "pass"),
        ("acceptable", None, "acceptable"),
        ("pending", "pass", "pending"),
    ],
)
def test_combined_verdict_is_the_stricter_part(auto: str | None, judged: str | None, expected: str) -> None:
    assert combine(auto, judged) == expected


def test_combined_verdict_shows_both_parts() -> None:
    check = {"check": "judge", "result": "fail", "judge": {"model": "scripted:judge", "template": "t1"}}

    assert combined_verdict("pass", check) == {
        "result": "fail",
        "parts": {"auto": "pass", "judge": "fail", "judge_model": "scripted:judge", "judge_template": "t1"},
    }


def test_cohens_kappa_matches_a_hand_computed_table() -> None:
    # 10 pairs: human pass/judge pass 4, pass/fail 1, fail/pass 1, fail/fail 4.
    # p_o = 0.8; p_e = 0.5*0.5 + 0.5*0.5 = 0.5; kappa = (0.8 - 0.5) / 0.5 = 0.6
    pairs = [("pass", "pass")] * 4 + [("pass", "fail")] + [("fail", "pass")] + [("fail", "fail")] * 4

    assert cohens_kappa(pairs) == pytest.approx(0.6)
    assert cohens_kappa([("pass", "pass")] * 3) is None  # one grade only: undefined
    assert cohens_kappa([("pass", "fail"), ("fail", "pass")]) == pytest.approx(-1.0)


def test_compare_counts_agreements_and_sets_aside_undecided_verdicts() -> None:
    labels = [
        Label("t1", "Q1-TF-01", "pass", "pass"),
        Label("t2", "Q1-TF-01", "fail", None),
        Label("t3", "Q1-TF-01", "fail", "pending"),
        Label("t4", "C4-AR-01", "acceptable", None),
    ]

    report = compare(labels, {("t2", "Q1-TF-01"): "pass"})

    assert (report.pairs, report.agreements, report.undecided, report.missing) == (2, 1, 1, ["t4"])
    assert report.confusion["fail"]["pass"] == 1 and report.confusion["pass"]["pass"] == 1
    assert report.disagreements == [{"trace_id": "t2", "case_id": "Q1-TF-01", "human": "fail", "judge": "pass"}]
    assert "human \\ judge" in report.render()


def test_bad_labels_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"trace_id": "t1", "label": "pass"}\n{"trace_id": "t2", "label": "good"}\n', encoding="utf-8")

    with pytest.raises(LabelsError, match=r"labels.jsonl:2: field 'label'"):
        load_labels(path)


def test_verdicts_are_read_from_analyze_results_too(tmp_path: Path) -> None:
    document = {"traces": [
        {"trace_id": "t1", "case_id": "Q1-TF-01", "verdict": {"checks": [], "judged_checks": [
            {"check": "judge", "result": "pending", "judge": {"status": "error"}}]}},
        {"trace_id": "t2", "case_id": "Q1-TF-01", "verdict": {"checks": [], "judged_checks": [
            {"check": "judge", "result": "fail", "judge": {"status": "fail"}}]}},
        {"trace_id": "t3", "case_id": None, "verdict": None},
    ]}
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(document))

    from tracekit.judge.agreement import load_verdicts

    assert load_verdicts([path]) == {("t1", "Q1-TF-01"): "error", ("t1", None): "error",
                                     ("t2", "Q1-TF-01"): "fail", ("t2", None): "fail"}  # fmt: skip
