"""What the proxy answers on its own: a 413 over the body limit (Content-Length or chunked, record, replay and
pass-through routes), the error shape chosen by route and headers, the parse flag on bodies that are not
JSON objects, and requests whose ``messages`` is not a list. (tests/reliability fuzzes the same surface.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import orjson
import pytest
from multidict import CIMultiDict

from tracekit.providers import PROVIDERS
from tracekit.proxy.refusals import provider_for_request
from tracekit.testing import text_reply

from .helpers import of_kind, read_records, recording, replaying

HELLO: Any = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "你好"}]}


def _chunks(data: bytes, size: int = 1000) -> Iterator[bytes]:
    """``data`` in pieces: httpx sends a generator without Content-Length (chunked)."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.parametrize("route", ["/v1/messages", "/v1/chat/completions", "/v1/messages/count_tokens"])
def test_a_chunked_body_over_the_limit_gets_a_413_and_nothing_is_forwarded(tmp_path: Path, route: str) -> None:
    big = orjson.dumps({**HELLO, "messages": [{"role": "user", "content": "x" * 3000}]})
    with recording([text_reply("ok")], tmp_path, max_body_bytes=2048) as (upstream, proxy):
        with httpx2.Client(base_url=proxy.url) as client:
            response = client.post(route, content=_chunks(big), headers={"x-api-key": "k"})
            assert response.request.headers.get("transfer-encoding") == "chunked"
            at_limit_body = orjson.dumps({"pad": "y" * (2048 - len(b'{"pad":""}'))})
            assert len(at_limit_body) == 2048
            at_limit = client.post(route, content=_chunks(at_limit_body), headers={"x-api-key": "k"})
        assert len(upstream.requests) == 1, "only the body at the limit went upstream"
    assert response.status_code == 413 and response.headers["x-should-retry"] == "false"
    error = response.json()["error"]
    assert "request_too_large" in (error["type"], error.get("code")), "Anthropic's type, OpenAI's code"
    assert "more than 2048 bytes" in error["message"] and "--max-body-bytes" in error["message"]
    assert at_limit.status_code != 413
    calls = sum(len(of_kind(read_records(path), "model_call")) for path in tmp_path.glob("*.jsonl"))
    assert calls == (0 if route.endswith("count_tokens") else 1), "the refused body is not recorded"


def test_the_sdks_read_the_413_as_a_request_too_large_error_they_do_not_retry(tmp_path: Path) -> None:
    content = "长" * 2000
    with recording([text_reply("ok")], tmp_path, max_body_bytes=4000) as (upstream, proxy):
        with pytest.raises(anthropic.APIStatusError) as anthropic_error:
            anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=2).messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": content}]
            )
        with pytest.raises(openai.APIStatusError) as openai_error:
            openai.OpenAI(base_url=proxy.openai_url, api_key="k", max_retries=2).chat.completions.create(
                model="m", messages=[{"role": "user", "content": content}]
            )
        assert upstream.requests == []
    assert anthropic_error.value.status_code == 413
    assert "4000 bytes" in anthropic_error.value.message
    assert openai_error.value.status_code == 413 and openai_error.value.code == "request_too_large"
    assert list(tmp_path.glob("*.jsonl")) == [], "a refused request is not recorded"


def test_replay_has_the_same_limit(tmp_path: Path) -> None:
    with replaying(tmp_path, max_body_bytes=100) as proxy, httpx2.Client(base_url=proxy.url) as client:
        response = client.post("/v1/chat/completions", content=b"{" + b" " * 200 + b"}")
    assert response.status_code == 413
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    assert "202 bytes" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("path", "headers", "expected"),
    [
        ("/v1/responses", {"anthropic-version": "2023-06-01"}, "openai"),  # the route decides first
        ("/v1/chat", {}, "openai"),
        ("/v1/complete", {"authorization": "Bearer x"}, "openai"),
        ("/v1/complete", {"Authorization": "Bearer x", "Anthropic-Version": "2023-06-01"}, "anthropic"),
        ("/v1/models", {"x-api-key": "k"}, "anthropic"),
        ("/v2/anything", {}, "anthropic"),
    ],
)
def test_the_error_shape_follows_the_route_then_the_headers(path: str, headers: dict[str, str], expected: str) -> None:
    assert provider_for_request(path, CIMultiDict(headers)) is PROVIDERS[expected]


@pytest.mark.parametrize(
    ("body", "flag"),
    [
        (b"", "empty body"),
        (b"[1, 2]", "not a JSON object: list"),
        (b'"text"', "not a JSON object: str"),
        (b'{"model": "m",', "unexpected end of data"),
    ],
)
def test_a_body_that_is_not_a_json_object_is_flagged_in_the_model_call(tmp_path: Path, body: bytes, flag: str) -> None:
    with recording([text_reply("ok")], tmp_path) as (upstream, proxy), httpx2.Client(base_url=proxy.url) as client:
        client.post("/v1/messages", content=body, headers={"x-tracekit-session": "odd"})
        assert upstream.requests[0].raw == body
    (call,) = of_kind(read_records(tmp_path / "odd.jsonl"), "model_call")
    assert flag.lower() in call["request_parse_error"].lower()
    assert call["request_raw"] == body.decode()


def test_a_json_object_has_no_parse_flag(tmp_path: Path) -> None:
    with recording([text_reply("ok")], tmp_path) as (_, proxy):
        anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0).messages.create(**HELLO)
    (path,) = tmp_path.glob("*.jsonl")
    (call,) = of_kind(read_records(path), "model_call")
    assert "request_parse_error" not in call and call["request"]["messages"] == HELLO["messages"]


@pytest.mark.parametrize("messages", [3, 2.5, True])
def test_a_replay_miss_with_messages_that_are_not_a_list_is_a_miss_not_a_crash(tmp_path: Path, messages: float) -> None:
    recorded = tmp_path / "recorded"
    with recording([text_reply("ok")], recorded) as (_, proxy):
        anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0).messages.create(**HELLO)
    with replaying(recorded) as proxy, httpx2.Client(base_url=proxy.url) as client:
        response = client.post("/v1/messages", content=orjson.dumps({**HELLO, "messages": messages}))
    assert response.status_code == 404 and response.headers["x-tracekit-replay"] == "miss"
    assert "root['messages']" in response.json()["error"]["message"]
