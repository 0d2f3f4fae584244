"""What the judge is shown of a trace, and how quotes are found in it."""

from __future__ import annotations

from pathlib import Path

from judge_support import answer, case, run_trace, tool_turn

from tracekit.judge.evidence import EMPTY_RESULT, NO_FINAL_ANSWER, collect_evidence
from tracekit.judge.prompt import build_request


def test_sections_split_history_from_what_the_agent_did(tmp_path: Path) -> None:
    tf01 = case("Q1-TF-01")
    agent = [
        *tool_turn("toolu_02", "taobao_search_products", {"keyword": "iPhone 2027"}, "", is_error=False),
        *tool_turn("toolu_03", "taobao_get_product_detail", {"product_id": "1"}, "Error: 503", is_error=True),
        answer("淘宝上搜索不到这款手机。"),
    ]
    evidence = collect_evidence(tf01, run_trace(tmp_path, tf01, agent))

    assert '"未找到相关商品"' in evidence.sections["history"]  # the seed's injected result, verbatim
    assert "taobao_search_products 参数：{\"keyword\": \"2027款 iPhone\"}" in evidence.sections["history"]
    steps = evidence.sections["steps"]
    assert "2027款" not in steps
    assert f"[工具结果 #1 taobao_search_products] {EMPTY_RESULT}" in steps
    assert "[工具结果 #2 taobao_get_product_detail]（错误 is_error=true） Error: 503" in steps
    assert evidence.final_answer == "淘宝上搜索不到这款手机。"
    assert "淘宝上搜索不到这款手机。" not in steps  # shown once, in final_answer


def test_no_final_answer_is_said_so(tmp_path: Path) -> None:
    tf01 = case("Q1-TF-01")
    evidence = collect_evidence(tf01, run_trace(tmp_path, tf01, []))

    assert evidence.final_answer == NO_FINAL_ANSWER
    assert evidence.locate(NO_FINAL_ANSWER) == "final_answer"


def test_quotes_are_found_verbatim_modulo_spacing_and_width(tmp_path: Path) -> None:
    tf01 = case("Q1-TF-01")
    trace = run_trace(tmp_path, tf01, [answer("淘宝上搜索不到「2027款 iPhone」，可能尚未发布。")])
    evidence = collect_evidence(tf01, trace)

    assert evidence.locate("搜索不到「2027款 iPhone」") == "final_answer"
    assert evidence.locate("  搜索不到「2027 款 iPhone」， ") == "final_answer"  # spaces and edge punctuation
    assert evidence.locate('"total":0') == "history"  # JSON spacing
    assert evidence.locate("淘宝上…可能尚未发布") == "final_answer"  # elided with an ellipsis
    assert evidence.locate("尚未发布…淘宝上") is None  # fragments out of order
    assert evidence.locate("已经发布") is None
    assert evidence.locate("不应编造价格") is None  # rubric text is not evidence
    assert evidence.locate("。") is None and evidence.locate("") is None


def test_same_evidence_gives_the_same_request_and_other_evidence_another(tmp_path: Path) -> None:
    tf01 = case("Q1-TF-01")
    one = collect_evidence(tf01, run_trace(tmp_path, tf01, [answer("搜索不到。")], "one"))
    same = collect_evidence(tf01, run_trace(tmp_path, tf01, [answer("搜索不到。")], "two"))
    other = collect_evidence(tf01, run_trace(tmp_path, tf01, [answer("大约 8999 元。")], "three"))

    assert one.hash == same.hash != other.hash
    assert build_request(tf01, one, "m").body == build_request(tf01, same, "m").body
    assert build_request(tf01, one, "m").body != build_request(tf01, one, "n").body
    assert "temperature" not in build_request(tf01, one, "m", temperature=None).body
