"""import otel: the flattened names of the GenAI conventions up to 1.36 (``gen_ai.system``,
``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``, ``gen_ai.usage.prompt_tokens``), as OpenLLMetry before
0.50 and LiteLLM's callback write them. No producer installed here still writes them, so the spans are
written out in that shape: two calls of one tool loop, each in a trace of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tracekit.importers import import_otel, write_traces
from tracekit.trace import load_trace


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    def value(item: Any) -> dict[str, Any]:
        return {"intValue": str(item)} if isinstance(item, int) else {"stringValue": item}

    return [{"key": key, "value": value(item)} for key, item in values.items()]


def _span(trace: str, start: int, values: dict[str, Any]) -> dict[str, Any]:
    return {"traceId": trace * 32, "spanId": trace * 16, "name": "openai.chat", "kind": 3,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 500_000_000),
            "attributes": _attributes(values), "status": {}}  # fmt: skip


PROMPT = {
    "gen_ai.system": "openai", "gen_ai.request.model": "gpt-test",
    "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "你是天气助手。",
    "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "北京天气怎么样？",
}  # fmt: skip
FIRST = {
    **PROMPT, "gen_ai.usage.prompt_tokens": 40, "gen_ai.usage.completion_tokens": 9,
    "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
    "gen_ai.completion.0.tool_calls.0.id": "call_1", "gen_ai.completion.0.tool_calls.0.name": "get_weather",
    "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "北京"}',
}  # fmt: skip
SECOND = {
    **PROMPT, "gen_ai.usage.prompt_tokens": 60, "gen_ai.usage.completion_tokens": 5,
    "gen_ai.prompt.2.role": "assistant", "gen_ai.prompt.2.tool_calls.0.id": "call_1",
    "gen_ai.prompt.2.tool_calls.0.name": "get_weather", "gen_ai.prompt.2.tool_calls.0.arguments": '{"city": "北京"}',
    "gen_ai.prompt.3.role": "tool", "gen_ai.prompt.3.tool_call_id": "call_1", "gen_ai.prompt.3.content": "晴",
    "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "北京今天晴。",
    "gen_ai.completion.0.finish_reason": "stop",
}  # fmt: skip


def test_flattened_prompt_and_completion_attributes_make_one_trace(tmp_path: Path) -> None:
    spans = [_span("a", 1_000_000_000, FIRST), _span("b", 2_000_000_000, SECOND)]
    document = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}
    path = tmp_path / "spans.json"
    path.write_bytes(orjson.dumps(document))
    problems: list[str] = []
    [imported] = import_otel([path], problems)
    assert problems == []
    [written] = write_traces([imported], tmp_path / "out")
    trace = load_trace(written)
    assert trace.header.provider == "openai" and trace.header.model == "gpt-test"
    assert [r.kind for r in trace.records[:2]] == ["system_message", "user_message"]
    assert [(c.name, c.input, c.result_text) for c in trace.calls()] == [("get_weather", {"city": "北京"}, "晴")]
    assert trace.final_answer() == "北京今天晴。"
    stats = trace.stats()
    assert (stats.llm_calls, stats.input_tokens, stats.output_tokens) == (2, 100, 14)
    calls = [r for r in trace.records if r.kind == "model_call"]
    assert [c.stop_reason for c in calls] == ["tool_calls", "stop"] and trace.problems == []
