"""A judge store under a URL (the moto S3 server on loopback): a new verdict is kept in the bucket, and the
next run reads it back from there, offline, with the same answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scale_support import CASES

from tracekit.cases.loader import load_case
from tracekit.judge import CaseJudge, JudgeConfig, rule_judge
from tracekit.judge.rules import JudgePrompt
from tracekit.testing import FakeUpstream
from tracekit.trace import Header, TraceBuilder, load_trace, write_trace

MODEL = "judge-rules"


def _honest(prompt: JudgePrompt) -> dict[str, Any]:
    return {"verdict": "pass", "reasons": ["如实告知搜索不到"], "quotes": ["淘宝上搜索不到这款手机。"]}


def _trace(tmp_path: Path) -> Any:
    case = load_case(CASES / "q1" / "Q1-TF-01.yaml")
    builder = TraceBuilder(Header(trace_id="honest", case_id=case.id, source="test:built"))
    messages: list[dict[str, Any]] = list(case.input.messages)
    if case.input.user is not None:
        messages.append({"role": "user", "content": case.input.user})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "淘宝上搜索不到这款手机。"}]})
    builder.add_conversation(messages)
    return case, load_trace(write_trace(tmp_path / "honest.jsonl", builder.records))


def test_a_new_verdict_is_kept_under_the_url_and_read_back_offline(bucket: str, tmp_path: Path) -> None:
    import s3fs

    store = f"s3://{bucket}/recordings/judge"
    case, trace = _trace(tmp_path)
    with FakeUpstream(rule_judge(_honest)) as upstream:
        config = JudgeConfig(model=MODEL, store=store, base_url=upstream.url)
        with CaseJudge(config) as judge:
            first = judge.judge(case, trace).to_dict()
        assert len(upstream.requests) == 1
        with CaseJudge(JudgeConfig(model=None, store=store, offline=True)) as judge:
            again = judge.judge(case, trace).to_dict()
        assert len(upstream.requests) == 1

    kept = s3fs.S3FileSystem().find(f"{bucket}/recordings/judge")
    assert len(kept) == 1 and kept[0].startswith(f"{bucket}/recordings/judge/Q1-TF-01/judge-Q1-TF-01-")
    assert (first["result"], first["judge"]["source"]) == ("pass", "new")
    assert (again["result"], again["judge"]["source"]) == ("pass", "kept")
    assert {**again["judge"], "source": None} == {**first["judge"], "source": None}
