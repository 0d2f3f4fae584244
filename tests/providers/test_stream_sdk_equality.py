"""Stream assembly equals what the official SDKs assemble from the same SSE bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from deepdiff import DeepDiff
from provider_support import (
    DATA,
    anthropic_sdk_assemble,
    capture_files,
    load_bodies,
    openai_sdk_assemble,
    without_nulls,
)

from tracekit.providers import anthropic, openai, parse_sse

CAPTURES = capture_files()


def _sdk_openai_normalized(data: bytes) -> dict:
    """The SDK snapshot, minus the per-entry ``index`` its tool_calls keep from the deltas (our body drops
    it because JSON completions do not carry it)."""
    snapshot = openai_sdk_assemble(data)
    for choice in snapshot["choices"]:
        for call in choice["message"].get("tool_calls") or []:
            call.pop("index")
    return snapshot


@pytest.mark.skipif(not CAPTURES, reason="shared Anthropic captures absent")
@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_anthropic_real_captures_assemble_like_the_sdk(path: Path) -> None:
    data = path.read_bytes()
    ours = anthropic.assemble_stream(parse_sse(data))
    assert DeepDiff(without_nulls(anthropic_sdk_assemble(data, beta=True)), without_nulls(ours)) == {}
    # The plain stream agrees except where it knows less: it leaves compaction blocks empty and drops
    # the beta-only usage fields of message_delta.
    if "compaction" not in path.name:
        plain = without_nulls(anthropic_sdk_assemble(data))
        ours = without_nulls(ours)
        for key in ("iterations", "fallback_credit"):
            if key not in plain["usage"]:
                ours["usage"].pop(key, None)
        assert DeepDiff(plain, ours) == {}


@pytest.mark.parametrize("name", ["anthropic_thinking_parallel.sse", "anthropic_citations.sse"])
def test_anthropic_fixtures_assemble_like_the_sdk(name: str) -> None:
    data = (DATA / name).read_bytes()
    ours = anthropic.assemble_stream(parse_sse(data))
    assert DeepDiff(without_nulls(anthropic_sdk_assemble(data)), without_nulls(ours)) == {}


def test_anthropic_fixture_details_survive_assembly() -> None:
    body = anthropic.assemble_stream(parse_sse((DATA / "anthropic_thinking_parallel.sse").read_bytes()))
    kinds = [block["type"] for block in body["content"]]
    assert kinds == ["thinking", "redacted_thinking", "text", "tool_use", "tool_use"]
    assert body["content"][0]["signature"] == "ZmFrZS1zaWduYXR1cmUtb25l"
    assert body["content"][2]["text"] == "我来同时查询两个城市的天气。"
    assert body["content"][3]["input"] == {"city": "北京", "date": "2026-04-08"}
    assert body["usage"]["output_tokens"] == 157
    assert anthropic.response_usage(body).cache_read_input_tokens == 2048


@pytest.mark.parametrize("name", ["openai_parallel_tools.sse", "openai_refusal.sse"])
def test_openai_fixtures_assemble_like_the_sdk(name: str) -> None:
    data = (DATA / name).read_bytes()
    ours = openai.assemble_stream(parse_sse(data))
    assert DeepDiff(without_nulls(_sdk_openai_normalized(data)), without_nulls(ours)) == {}


def test_openai_parallel_tool_deltas_merge_by_index() -> None:
    body = openai.assemble_stream(parse_sse((DATA / "openai_parallel_tools.sse").read_bytes()))
    message = openai.response_message(body)
    assert message is not None
    calls = [b for b in message["content"] if b["type"] == "tool_use"]
    assert [(c["id"], c["input"]) for c in calls] == [
        ("call_tk_01", {"city": "北京"}),
        ("call_tk_02", {"city": "上海"}),
    ]
    usage = openai.response_usage(body)
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (176, 1024, 48)


@pytest.mark.parametrize("name", ["anthropic_bodies.json", "openai_bodies.json"])
def test_rendered_streams_assemble_like_the_sdk(name: str) -> None:
    provider = anthropic if name.startswith("anthropic") else openai
    for key, body in load_bodies(name).items():
        if provider.response_error(body) is not None:
            continue
        data = provider.render_stream(body)
        ours = provider.assemble_stream(parse_sse(data))
        theirs = anthropic_sdk_assemble(data, beta=True) if provider is anthropic else _sdk_openai_normalized(data)
        assert DeepDiff(without_nulls(theirs), without_nulls(ours)) == {}, key


def test_anthropic_error_event_gives_the_error_body() -> None:
    assembler = anthropic.stream_assembler()
    for event in parse_sse((DATA / "anthropic_error.sse").read_bytes()):
        assembler.feed(event)
    assert assembler.error == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert anthropic.response_error(assembler.body()) == {"type": "overloaded_error", "message": "Overloaded"}
    assert not assembler.done
    with pytest.raises(anthropic_sdk_error()):  # the SDK raises on the same bytes
        anthropic_sdk_assemble((DATA / "anthropic_error.sse").read_bytes())


def test_openai_error_chunk_gives_the_error_body() -> None:
    body = openai.assemble_stream(parse_sse((DATA / "openai_error.sse").read_bytes()))
    assert openai.response_error(body) == {
        "message": "The server had an error while processing your request.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    import openai as openai_sdk

    with pytest.raises(openai_sdk.APIError):
        openai_sdk_assemble((DATA / "openai_error.sse").read_bytes())


def anthropic_sdk_error() -> type[Exception]:
    import anthropic as anthropic_sdk

    return anthropic_sdk.APIStatusError
