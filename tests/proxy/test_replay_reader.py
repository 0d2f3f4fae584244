"""The replay load: the replay-only reader gives the index the models' reader gives (every answer, byte for
byte, every other route, every problem, the same nearest recording and difference for a miss), and files
it cannot read exactly (shared texts, damaged or older files, values it does not take) go to the models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import tracekit.proxy.replayer as replayer
from tracekit.proxy import ReplayIndex
from tracekit.proxy.keys import request_key, route_key
from tracekit.proxy.shared_texts import LONG_TEXT, MARK, digest
from tracekit.trace import (
    AgentRun,
    AssistantMessage,
    ErrorRecord,
    Header,
    HttpExchange,
    Intercept,
    ModelCall,
    ToolCall,
    ToolResult,
    UserMessage,
)
from tracekit.trace.io import write_trace

ROUTES = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "openai_responses": "/v1/responses"}


def _call(index: int, provider: str, request: dict[str, Any] | None, **fields: Any) -> ModelCall:
    key = request_key(ROUTES.get(provider, "/x"), request) if request is not None else f"raw-{index}"
    fields.setdefault("request_key", key)
    return ModelCall(index=index, provider=provider, request=request, **fields)


def _records(tag: str) -> list[BaseModel]:
    """One trace of every record replay reads, and of some it does not."""
    hello = [{"role": "user", "content": f"你好 {tag}"}]
    longer = [*hello, {"role": "assistant", "content": [{"type": "text", "text": "好"}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "晴"}]}]  # fmt: skip
    anthropic = {"model": "m1", "max_tokens": 10, "system": "助手", "messages": hello, "stream": True,
                 "metadata": {"user_id": "u1"}}  # fmt: skip
    retried = {"model": "m1", "max_tokens": 10, "messages": longer}
    retried_key = request_key(ROUTES["anthropic"], retried)
    sse = 'data: {"choices":[{"delta":{"content":"caf\\\\xc3"}}]}\n\ndata: [DONE]\n\n'
    # fmt: off
    return [
        Header(trace_id=f"trace-{tag}", source="proxy", provider="anthropic"),
        UserMessage(message_index=0, content=hello[0]["content"]),
        ErrorRecord(source="upstream", message="overloaded", status=529, body={"type": "error", "n": 1.5},
                    model_call=0, attempt=1, provider="anthropic", request_key=retried_key,
                    response_headers={"retry-after": "1"}, latency_ms=3.0),
        _call(0, "anthropic", anthropic, status=200, response={"content": [{"type": "text", "text": "好"}], "n": 1e-7},
              response_headers={"request-id": "r1", "content-type": "application/json"}, latency_ms=12.5,
              ttft_ms=4),
        AssistantMessage(message_index=1, content=[{"type": "text", "text": "好"}], model_call=0),
        ToolCall(index=0, id="t1", name="weather", input={"city": "北京"}, message_index=1),
        ToolResult(call_index=0, tool_use_id="t1", content="晴", message_index=2),
        Intercept(mode="tool_mock", tool="weather", injected="晴"),
        _call(1, "anthropic", retried, status=200, response={"content": []}, attempts=2),
        _call(2, "anthropic", retried, status=200, response={"content": [], "again": True}),  # same key: FIFO
        _call(3, "openai", {"model": "g", "messages": hello, "stream": True}, status=200, sse=sse,
              event_offsets_ms=[1, 2.5], escaped=["sse"], partial=True, transport="cut"),
        _call(4, "openai_responses", {"model": "r", "input": f"一句话 {tag}"}, status=200, response={"output": []}),
        _call(5, "openai", {"model": "g", "messages": longer}, status=502, response_raw="<html>bad \\xff</html>",
              escaped=["response_raw"], response_headers={"content-type": "text/html"}),
        _call(6, "openai", None, request_raw="not json", status=400, response={"error": {"message": "bad"}}),
        _call(7, "anthropic", {"model": "m1", "messages": [*hello, *hello]}, fault=True),
        _call(8, "anthropic", {"model": "m1", "messages": []}, replay_miss=True),
        _call(9, "anthropic", {"model": "m1", "messages": longer[:2]}, from_attempts=True),
        _call(10, "unknown_wire", {"model": "x", "contents": []}),  # a provider not installed: skipped
        _call(11, "anthropic", {"model": "m1"}, request_key=None),
        ErrorRecord(source="transport", message="timeout", model_call=3, attempt=1, provider="openai",
                    request_key="k-timeout", transport="read_timeout", sse="data: {}\n\n", event_offsets_ms=[5],
                    body="not a dict"),
        ErrorRecord(source="upstream", message="old", status=500, body={"a": [1]}, model_call=1,
                    request_key="k-legacy"),  # no provider: written before error records named it
        ErrorRecord(source="agent", message="not an attempt"),
        HttpExchange(method="POST", path="/v1/messages/count_tokens", status=200,
                     request_key=route_key("POST", "/v1/messages/count_tokens", {"n": tag}), request={"n": tag},
                     response={"input_tokens": 3}, response_headers={"content-type": "application/json"},
                     latency_ms=1.0),
        HttpExchange(method="GET", path="/v1/models", status=200, request_key=route_key("GET", "/v1/models", None),
                     response_raw="data: x\n\n", response_headers={"content-type": "text/event-stream"}),
        HttpExchange(method="DELETE", path="/v1/x", status=204, request_key="k-empty"),
        HttpExchange(method="GET", path="/v1/unkeyed", status=200),
        AgentRun(command="agent run", exit_status=0),
    ]
    # fmt: on


def _write_spaced(path: Path, records: list[BaseModel]) -> None:
    """The records as another JSON writer writes them: spaces after separators, non-ASCII text escaped."""
    lines = [json.dumps(record.model_dump(mode="json", exclude_none=True)) for record in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _loaded(folder: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[ReplayIndex, list[str]]:
    """The index of ``folder`` and the names of the files read into the models."""
    read_into_models: list[str] = []
    real = replayer.iter_records

    def counting(path: Any, problems: Any) -> Any:
        read_into_models.append(Path(path).name)
        return real(path, problems)

    monkeypatch.setattr(replayer, "iter_records", counting)
    return ReplayIndex.load(folder, fast=fast), read_into_models


def _answers(index: ReplayIndex) -> dict[str, list[tuple[Any, ...]]]:
    return {key: [(a.where, a.provider.NAME, a.request, a.status, a.response_json, a.sse, a.offsets_ms, a.latency_ms,
                   a.ttft_ms, a.partial, a.transport, a.headers, a.raw) for a in answers]
            for key, answers in index.answers.items()}  # fmt: skip


def _misses(index: ReplayIndex) -> list[Any]:
    """The nearest recording and difference of misses near every recorded request, and far from all."""
    found = []
    for answers in index.answers.values():
        for answer in answers:
            body = answer.request
            if not isinstance(body, dict):
                continue
            route = answer.provider.ROUTE
            items = "input" if route == "/v1/responses" else "messages"
            for live in ({**body, "model": "other"}, {**body, "max_tokens": 99},
                         {**body, items: [*(body.get(items) or [])[:-1], {"role": "user", "content": "新"}]},
                         {"model": body.get("model"), items: [{"role": "user", "content": "从未录过"}]}):  # fmt: skip
                nearest = index.nearest(route, live)
                found.append(nearest and (nearest[0].where, nearest[1]))
    return found


def test_the_replay_reader_gives_the_index_the_models_reader_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_trace(tmp_path / "a-orjson.jsonl", _records("a"))
    _write_spaced(tmp_path / "b-spaced.jsonl", _records("b"))
    fast, into_models = _loaded(tmp_path, True, monkeypatch)
    assert into_models == [], "both files are read by the replay reader"
    slow, _ = _loaded(tmp_path, False, monkeypatch)
    assert len(fast) == len(slow) == 2 * 10  # 7 model calls and 3 attempts a file
    assert _answers(fast) == _answers(slow)
    assert {key: [vars(route) for route in routes] for key, routes in fast.other.items()} == {
        key: [vars(route) for route in routes] for key, routes in slow.other.items()
    }
    assert sum(len(routes) for routes in fast.other.values()) == 2 * 3 and len(fast.other) == 4
    assert _misses(fast) == _misses(slow)
    assert (fast.files, fast.problems) == (slow.files, slow.problems) == (2, [])


def _shared_texts(tag: str) -> list[BaseModel]:
    text = "长" * LONG_TEXT
    request = {"model": "m1", "messages": [{"role": "user", "content": text}]}
    stored = {"model": "m1", "messages": [{"role": "user", "content": MARK + digest(text)}]}
    call = ModelCall(index=0, provider="anthropic", request=stored, request_key=request_key("/v1/messages", request),
                     status=200, response={"content": []}, shared_texts=[digest(text)])  # fmt: skip
    return [Header(trace_id=tag), UserMessage(message_index=0, content=text), call]


def test_files_the_replay_reader_cannot_read_exactly_are_read_into_the_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_trace(tmp_path / "a-shared.jsonl", _shared_texts("a"))
    write_trace(tmp_path / "b-torn.jsonl", _records("b"))
    with (tmp_path / "b-torn.jsonl").open("ab") as torn:
        torn.write(b'{"kind":"model_call","ind')
    write_trace(tmp_path / "c-coerced.jsonl", [Header(trace_id="c"), _call(0, "anthropic", {"model": "m"})])
    coerced = (tmp_path / "c-coerced.jsonl").read_text().replace('"index":0', '"index":"0"')  # pydantic takes "0"
    (tmp_path / "c-coerced.jsonl").write_text(coerced)
    write_trace(tmp_path / "d-invalid.jsonl", _records("d"))
    invalid = (tmp_path / "d-invalid.jsonl").read_text().replace('"status":502', '"status":"bad gateway"')
    (tmp_path / "d-invalid.jsonl").write_text(invalid)
    (tmp_path / "e-headless.jsonl").write_bytes(b"\n".join((tmp_path / "a-shared.jsonl").read_bytes().split(b"\n")[1:]))
    write_trace(tmp_path / "f-not-an-object.jsonl", [Header(trace_id="f"), _call(0, "anthropic", {"model": "m"})])
    not_an_object = (tmp_path / "f-not-an-object.jsonl").read_text().replace('"request":{"model":"m"}', '"request":[1]')
    (tmp_path / "f-not-an-object.jsonl").write_text(not_an_object)
    fast, into_models = _loaded(tmp_path, True, monkeypatch)
    assert into_models == [path.name for path in sorted(tmp_path.glob("*.jsonl"))]
    slow, _ = _loaded(tmp_path, False, monkeypatch)
    assert _answers(fast) == _answers(slow)
    assert fast.problems == slow.problems and len(fast.problems) >= 4
    assert any(answer.request["messages"][0]["content"] == "长" * LONG_TEXT
               for answers in fast.answers.values() for answer in answers if answer.request)  # fmt: skip
