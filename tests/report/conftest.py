"""Fixtures for the report tests: a few small traces written with the trace writer, and the results of
``tracekit analyze`` on them (``analyze_trace``), with verdicts, checks, findings and a judge set by hand in
the analyze JSON's shape (``tests/report/support.py``); the report computes no figure itself, it shows the
summary analyze computes from these traces.

Made by hand in code (no recording): two cases (Chinese text, as in the seeds) in groups A and B with
two repeats each, one hostile tool result (script tag, onerror, javascript: link), one injected
result, one trace bound to no case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from report_support import judged_check, verdict

from tracekit.analyze.results import analyze_trace
from tracekit.trace import (
    AssistantMessage,
    Header,
    Intercept,
    ModelCall,
    SystemMessage,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    load_trace,
    write_trace,
)

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">点我</a>'


def _trace_records(trace_id: str, case_id: str | None, group: str | None, repeat: int | None,
                   *, fail: bool, hostile: bool) -> list[Any]:
    city = {"city_id": "110000", "name": "北京"}
    result_text = HOSTILE if hostile else '{"listings": [{"id": "L-1", "price": 520}]}'
    return [
        Header(trace_id=trace_id, case_id=case_id, group=group, repeat=repeat, provider="anthropic",
               model="claude-test", source="test:fixture", session=f"s-{trace_id}"),
        SystemMessage(content="你是一个房产助手。", t=1000.0),
        UserMessage(message_index=0, content="帮我查一下北京朝阳区的二手房", t=1000.0),
        ModelCall(index=0, provider="anthropic", model="claude-test", status=200, latency_ms=820.0, ttft_ms=300.0,
                  usage=Usage(input_tokens=120, output_tokens=40), stop_reason="tool_use", t=1001.0),
        AssistantMessage(message_index=1, content=[
            {"type": "text", "text": "我先查城市编号。"},
            {"type": "tool_use", "id": "tu_0", "name": "beike_lookup_city_id", "input": {"city": "北京"}},
        ], stop_reason="tool_use", model_call=0, t=1001.0),
        ToolCall(index=0, id="tu_0", name="beike_lookup_city_id", input={"city": "北京"}, message_index=1,
                 model_call=0, t=1001.0),
        ToolResult(call_index=0, tool_use_id="tu_0", name="beike_lookup_city_id",
                   content='{"city_id": "110000", "name": "北京"}', message_index=2, t=1001.5),
        ModelCall(index=1, provider="anthropic", model="claude-test", status=200, latency_ms=640.0,
                  usage=Usage(input_tokens=200, output_tokens=30), stop_reason="tool_use", t=1002.0),
        AssistantMessage(message_index=3, content=[
            {"type": "tool_use", "id": "tu_1", "name": "beike_search_resale_housing",
             "input": {"city_id": city["city_id"], "district": "朝阳"}},
        ], stop_reason="tool_use", model_call=1, t=1002.0),
        ToolCall(index=1, id="tu_1", name="beike_search_resale_housing",
                 input={"city_id": "110000", "district": "朝阳"}, message_index=3, model_call=1, t=1002.0),
        ToolResult(call_index=1, tool_use_id="tu_1", name="beike_search_resale_housing",
                   content=result_text, is_error=fail, injected=fail, message_index=4, t=1002.5),
        *([Intercept(mode="tool_intercept", tool="beike_search_resale_housing", tool_use_id="tu_1", call_index=1,
                     original={"content": "[]"}, injected={"content": result_text, "is_error": True},
                     is_error=True, model_call=2)] if fail else []),
        ModelCall(index=2, provider="anthropic", model="claude-test", status=200, latency_ms=900.0,
                  usage=Usage(input_tokens=260, output_tokens=80), stop_reason="end_turn", t=1003.0),
        AssistantMessage(message_index=5, content=[
            {"type": "text", "text": "朝阳区有一套 520 万的二手房。" if not fail else "抱歉，房源服务暂时不可用。"},
        ], stop_reason="end_turn", model_call=2, t=1003.0),
    ]


def _verdict(case_id: str, result: str, *, hostile: bool) -> dict[str, Any]:
    checks = [
        {"check": "required call beike_lookup_city_id", "result": "pass", "evidence": "call #0", "calls": [0]},
        {"check": "数据流 city_id", "result": "pass" if result != "fail" else "fail",
         "evidence": HOSTILE if hostile else "city_id 110000 from call #0", "calls": [1]},
    ]
    judged = [judged_check(result if result != "acceptable" else "pass", ["回答忠实于工具结果。"],
                           ["朝阳区有一套 520 万的二手房。"])]
    return verdict(case_id, result, checks, judged, failure_kind="premature_abandonment" if result == "fail" else None,
                   scoring="auto+judge")


@pytest.fixture
def report_inputs(tmp_path: Path) -> dict[str, Any]:
    """Trace files under tmp_path/traces and the results dict that names them."""
    plan = [
        ("t-pc02-a0", "B2-PC-02", "A", 0, "pass"),
        ("t-pc02-a1", "B2-PC-02", "A", 1, "fail"),
        ("t-pc02-b0", "B2-PC-02", "B", 0, "pass"),
        ("t-pc02-b1", "B2-PC-02", "B", 1, "pass"),
        ("t-ld01-a0", "C4-LD-01", "A", 0, "acceptable"),
        ("t-ld01-b0", "C4-LD-01", "B", 0, "pending"),
        ("t-free", None, None, None, None),
    ]
    traces = []
    for trace_id, case_id, group, repeat, result in plan:
        hostile = trace_id == "t-pc02-a1"
        path = write_trace(tmp_path / "traces" / f"{trace_id}.jsonl",
                           _trace_records(trace_id, case_id, group, repeat, fail=result == "fail", hostile=hostile))
        entry = analyze_trace(load_trace(path)).to_plain()
        if case_id is not None and result is not None:
            entry["verdict"] = _verdict(case_id, result, hostile=hostile)
        if trace_id in ("t-pc02-a1", "t-ld01-a0"):
            entry["findings"] = [{"kind": "repeated_call", "severity": "warning", "calls": [0, 1],
                                  "message": f"{HOSTILE} 重复调用"}]
        traces.append(entry)
    results = {"tracekit": "0.1.0", "traces": traces}  # the report adds the summary analyze computes
    cases = {
        "B2-PC-02": {"id": "B2-PC-02", "dimension": "B2", "category": "PC", "title": "二手房查询：城市编号来自上一步",
                     "seed": {"file": "000_649a87b897009fb0.txt", "section": "参数构造准确率", "number": 2},
                     "input": {"user": "帮我查一下北京朝阳区的二手房"},
                     "expected_behaviour": ["先调用 beike_lookup_city_id", "再用返回的 city_id 搜索"],
                     "criteria": {"pass": "city_id 来自上一步", "fail": "编造 city_id"},
                     "expect": {"calls": [{"tool": "beike_lookup_city_id"}], "forbidden_tools": []},
                     "scoring": "auto"},
    }
    return {"root": tmp_path, "results": results, "cases": cases}
