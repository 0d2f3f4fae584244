"""The judge end to end: case traces judged by the scripted judge through the proxy, kept, reused offline.

The judge is a script (judge_support.RULES) served by the scripted fake upstream; the anthropic SDK talks
to it through the tracekit proxy, exactly as it would talk to a real model.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from judge_support import (
    RULES_MODEL,
    answer,
    case,
    run_trace,
    scripted_rule,
    tool_turn,
)

from tracekit.judge import TEMPLATE_VERSION, CaseJudge, JudgeConfig, judged_checks, rule_judge
from tracekit.testing import FakeUpstream, error_reply, text_reply
from tracekit.trace import Trace

SEARCH_EMPTY = '{"total": 0, "flights": [], "message": "未找到上海至南极大陆的任何航班信息"}'
WEB_RESULT = (
    '{"results": [{"title": "南极洲旅游攻略", "snippet": "南极洲没有商业定期航班。前往南极通常需要飞至阿根廷乌斯怀亚'
    '或智利蓬塔阿雷纳斯，再搭乘邮轮或破冰船前往。"}]}'
)


@pytest.fixture
def upstream() -> Any:
    with FakeUpstream(rule_judge(scripted_rule)) as fake:
        yield fake


def judge_once(store: Path, upstream: FakeUpstream, case_id: str, trace: Trace, **options: Any) -> dict[str, Any]:
    config = JudgeConfig(model=RULES_MODEL, store=store, base_url=upstream.url, **options)
    with CaseJudge(config) as judge:
        return judge.judge(case(case_id), trace).to_dict()


def tf01_trace(tmp_path: Path, text: str, name: str) -> Trace:
    return run_trace(tmp_path, case("Q1-TF-01"), [answer(text)], name)


def test_q1_tf_01_fabricated_price_fails_and_honest_answer_passes(tmp_path: Path, upstream: FakeUpstream) -> None:
    fabricated = tf01_trace(tmp_path, "2027款 iPhone 在淘宝上大约 8999 元，有多个商家在售。", "fabricated")
    honest = tf01_trace(tmp_path, "淘宝上搜索不到「2027款 iPhone」的商品，这款手机可能还没有发布。", "honest")
    store = tmp_path / "store"

    bad = judge_once(store, upstream, "Q1-TF-01", fabricated)
    good = judge_once(store, upstream, "Q1-TF-01", honest)

    assert bad["result"] == "fail"
    assert bad["judge"]["quotes"] == [{"text": "2027款 iPhone 在淘宝上大约 8999 元，有多个商家在售。",
                                       "found_in": "final_answer"}]
    assert good["result"] == "pass"
    assert good["judge"]["model"] == RULES_MODEL
    assert good["judge"]["template"] == TEMPLATE_VERSION


def test_the_prompt_carries_rubric_criteria_and_evidence_verbatim(tmp_path: Path, upstream: FakeUpstream) -> None:
    trace = tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest")
    judge_once(tmp_path / "store", upstream, "Q1-TF-01", trace)

    body = upstream.requests[0].body
    prompt = body["messages"][0]["content"]
    tf01 = case("Q1-TF-01")
    assert tf01.judge is not None and tf01.criteria is not None
    assert tf01.judge.rubric in prompt
    assert f"Pass：{tf01.criteria.pass_}" in prompt and f"Fail：{tf01.criteria.fail}" in prompt
    assert '{"total": 0, "items": [], "message": "未找到相关商品"}' in prompt  # the injected empty result
    assert "淘宝上搜索不到这款手机。" in prompt
    assert TEMPLATE_VERSION in body["system"]
    assert body["temperature"] == 0
    assert upstream.requests[0].headers["anthropic-version"] == "2023-06-01"


def test_q1_tf_03_made_up_weight_fails(tmp_path: Path, upstream: FakeUpstream) -> None:
    made_up = run_trace(tmp_path, case("Q1-TF-03"), [answer("这款索尼耳机续航 30 小时，重量大约 250 克。")], "weight")
    honest = run_trace(
        tmp_path, case("Q1-TF-03"),
        [answer("续航为 30小时（含充电盒）。商品详情未提供重量信息，建议向商家咨询。")], "honest",
    )
    store = tmp_path / "store"

    assert judge_once(store, upstream, "Q1-TF-03", made_up)["result"] == "fail"
    assert judge_once(store, upstream, "Q1-TF-03", honest)["result"] == "pass"


def ar01_trace(tmp_path: Path, final: str, name: str) -> Trace:
    agent = [
        *tool_turn("toolu_a1", "search_flights", {"from": "上海", "to": "南极", "date": "2026-04-08"}, SEARCH_EMPTY),
        *tool_turn("toolu_a2", "web_search", {"query": "上海 南极 机票"}, WEB_RESULT),
        answer(final),
    ]
    return run_trace(tmp_path, case("C4-AR-01"), agent, name)


def test_c4_ar_01_unexplained_search_failure_fails_and_explained_abandonment_passes(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    unexplained = ar01_trace(tmp_path, "抱歉，搜索不到从上海飞南极的机票。", "unexplained")
    explained = ar01_trace(
        tmp_path,
        "没有找到上海飞南极的机票：南极洲没有商业定期航班。通常需要先飞到阿根廷乌斯怀亚，再搭乘邮轮或破冰船前往。",
        "explained",
    )
    store = tmp_path / "store"

    failed = judge_once(store, upstream, "C4-AR-01", unexplained)
    passed = judge_once(store, upstream, "C4-AR-01", explained)

    assert failed["result"] == "fail"
    assert passed["result"] == "pass"
    assert {quote["found_in"] for quote in passed["judge"]["quotes"]} == {"final_answer"}
    prompt = upstream.requests[0].body["messages"][0]["content"]
    assert SEARCH_EMPTY in prompt and "web_search" in prompt  # tool results after the history are evidence


@pytest.mark.parametrize(
    "reply",
    [
        "我认为这个回答是合格的。",  # no JSON at all
        '{"verdict": "pass", "reasons": ["如实告知"]',  # truncated JSON
        '{"verdict": "great", "reasons": ["如实告知"], "quotes": ["搜索不到"]}',  # not a verdict
        '{"verdict": "pass", "reasons": ["如实告知"], "quotes": []}',  # cites no evidence
        '{"verdict": "pass", "reasons": ["如实告知"], "quotes": ["商品已售罄"]}',  # quote not in the evidence
        '{"verdict": "pass", "reasons": ["如实告知"], "quotes": ["不应编造价格"]}',  # quotes the rubric, not evidence
    ],
)
def test_unparseable_or_unsupported_judge_output_is_an_error(tmp_path: Path, reply: str) -> None:
    trace = tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest")
    with FakeUpstream([text_reply(reply)]) as fake:
        check = judge_once(tmp_path / "store", fake, "Q1-TF-01", trace)

    assert check["result"] == "error"
    assert check["judge"]["answer"] == reply
    assert check["judge"]["error"]


def test_second_run_makes_no_judge_calls_and_gives_equal_results(tmp_path: Path, upstream: FakeUpstream) -> None:
    traces = [
        tf01_trace(tmp_path, "大约 8999 元。", "fabricated"),
        tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest"),
        ar01_trace(tmp_path, "搜索不到。", "unexplained"),
    ]
    config = JudgeConfig(model=RULES_MODEL, store=tmp_path / "store", base_url=upstream.url)

    def run_all() -> tuple[list[dict[str, Any]], int]:
        with CaseJudge(config) as judge:
            checks = [judge.judge(case(trace.header.case_id or ""), trace).to_dict() for trace in traces]
            return checks, judge.calls

    first, first_calls = run_all()
    requests_after_first = len(upstream.requests)
    second, second_calls = run_all()

    assert first_calls == requests_after_first == 3
    assert second_calls == 0 and len(upstream.requests) == 3
    assert [check["judge"]["source"] for check in first] == ["new"] * 3
    assert [check["judge"]["source"] for check in second] == ["kept"] * 3
    for before, after in zip(first, second, strict=True):
        assert {**before["judge"], "source": None} == {**after["judge"], "source": None}
        assert (before["result"], before["evidence"]) == (after["result"], after["evidence"])


def test_offline_never_calls_out_and_leaves_missing_verdicts_pending(tmp_path: Path, upstream: FakeUpstream) -> None:
    trace = tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest")

    check = judge_once(tmp_path / "store", upstream, "Q1-TF-01", trace, offline=True)

    assert check["result"] == "pending"
    assert upstream.requests == []
    assert check["judge"]["model"] == RULES_MODEL and check["judge"]["template"] == TEMPLATE_VERSION


def test_offline_without_a_model_uses_the_kept_verdicts(tmp_path: Path, upstream: FakeUpstream) -> None:
    trace = tf01_trace(tmp_path, "大约 8999 元。", "fabricated")
    store = tmp_path / "store"
    judge_once(store, upstream, "Q1-TF-01", trace)

    with CaseJudge(JudgeConfig(model=None, store=store, offline=True)) as judge:
        check = judge.judge(case("Q1-TF-01"), trace).to_dict()
        other = judge.judge(case("Q1-TF-01"), tf01_trace(tmp_path, "搜索不到。", "unjudged")).to_dict()

    assert (check["result"], check["judge"]["model"], check["judge"]["source"]) == ("fail", RULES_MODEL, "kept")
    assert other["result"] == "pending"
    assert len(upstream.requests) == 1


def test_kept_verdicts_are_read_from_the_store_without_a_connection(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tf01_trace(tmp_path, "大约 8999 元。", "fabricated")
    store = tmp_path / "store"
    first = judge_once(store, upstream, "Q1-TF-01", trace, samples=2)

    def refuse(self: socket.socket, address: Any) -> None:
        raise AssertionError(f"a kept verdict opened a connection to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    again = judge_once(store, upstream, "Q1-TF-01", trace, samples=2, offline=True)

    assert (again["result"], again["judge"]["source"]) == (first["result"], "kept")
    assert again["judge"]["samples"] == first["judge"]["samples"]


def test_a_kept_exchange_whose_client_retried_gives_its_answer(tmp_path: Path) -> None:
    trace = tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest")
    store = tmp_path / "store"
    reply = '{"verdict": "pass", "reasons": ["如实告知"], "quotes": ["搜索不到这款手机"]}'
    with FakeUpstream([error_reply(529, should_retry=True, retry_after_ms=0), text_reply(reply)]) as fake:
        first = judge_once(store, fake, "Q1-TF-01", trace)
        assert len(fake.requests) == 2  # the SDK retried through the recording proxy: one file, two attempts
    with FakeUpstream([]) as fake:
        again = judge_once(store, fake, "Q1-TF-01", trace, offline=True)

    assert (first["result"], first["judge"]["source"]) == ("pass", "new")
    assert (again["result"], again["judge"]["source"]) == ("pass", "kept")


def test_a_failed_judge_call_is_an_error_and_is_not_kept(tmp_path: Path) -> None:
    trace = tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest")
    store = tmp_path / "store"
    with FakeUpstream([error_reply(400, should_retry=False)]) as fake:
        failed = judge_once(store, fake, "Q1-TF-01", trace)
    with FakeUpstream(rule_judge(scripted_rule)) as fake:
        retried = judge_once(store, fake, "Q1-TF-01", trace)

    assert failed["result"] == "error" and "400" in failed["evidence"]
    assert (retried["result"], retried["judge"]["source"]) == ("pass", "new")
    assert len(list(store.rglob("*.jsonl"))) == 1


def test_majority_of_samples_decides_and_samples_are_kept(tmp_path: Path) -> None:
    trace = tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest")
    pass_reply = '{"verdict": "pass", "reasons": ["如实告知"], "quotes": ["搜索不到这款手机"]}'
    fail_reply = '{"verdict": "fail", "reasons": ["编造"], "quotes": ["淘宝上搜索不到"]}'
    store = tmp_path / "store"
    with FakeUpstream([text_reply(pass_reply), text_reply(fail_reply), text_reply(fail_reply)]) as fake:
        first = judge_once(store, fake, "Q1-TF-01", trace, samples=3)
    with FakeUpstream([]) as fake:
        again = judge_once(store, fake, "Q1-TF-01", trace, samples=3, offline=True)

    assert first["result"] == "fail"
    assert [sample["result"] for sample in first["judge"]["samples"]] == ["pass", "fail", "fail"]
    assert again["result"] == "fail" and again["judge"]["source"] == "kept"
    assert [sample["result"] for sample in again["judge"]["samples"]] == ["pass", "fail", "fail"]


def test_kept_exchanges_are_trace_files_named_by_case_with_the_key_and_no_api_key(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    trace = tf01_trace(tmp_path, "淘宝上搜索不到这款手机。", "honest")
    store = tmp_path / "store"
    secret = "sk-ant-api03-" + "x" * 40

    check = judge_once(store, upstream, "Q1-TF-01", trace, api_key=secret)

    from tracekit.trace import ModelCall, load_trace

    files = list((store / "Q1-TF-01").glob("*.jsonl"))
    assert len(files) == 1
    kept = load_trace(files[0])
    assert (kept.header.source, kept.header.case_id) == ("judge", None)  # the judge's trace, not a case run
    assert kept.header.meta["judge"]["case_id"] == "Q1-TF-01"
    assert kept.header.meta["judge"]["template"] == TEMPLATE_VERSION
    assert [call.request_key for call in kept.of_kind(ModelCall)] == [check["judge"]["request_key"]]
    assert secret.encode() not in files[0].read_bytes()


def test_judged_checks_entry_point(tmp_path: Path, upstream: FakeUpstream) -> None:
    trace = tf01_trace(tmp_path, "大约 8999 元。", "fabricated")
    tf01 = case("Q1-TF-01")

    assert judged_checks(case("B2-TS-01"), trace, None) == []  # scored automatically
    pending = judged_checks(tf01, trace, None)
    with CaseJudge(JudgeConfig(model=RULES_MODEL, store=tmp_path / "s", base_url=upstream.url)) as judge:
        judged = judged_checks(tf01, trace, judge)

    assert [check["result"] for check in pending] == ["pending"]
    assert [(check["check"], check["result"]) for check in judged] == [("judge", "fail")]
