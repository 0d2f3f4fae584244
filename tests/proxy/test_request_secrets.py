"""Secrets a request carries outside its headers: query parameters (``?key=``, ``?access_token=``, ...) and
request-body fields named with ``secret_fields`` / ``--redact-field``; and credentials in the upstream URL.
Values are made-up strings that match none of the redactor's built-in key patterns, so only what the proxy
registers can catch them."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import orjson
import pytest

from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.proxy.answers import split_credentials
from tracekit.proxy.request_secrets import SecretFields, register_query_secrets
from tracekit.redact import Redactor
from tracekit.testing import FakeRequest, FakeUpstream, Reply, error_reply, text_reply

from .helpers import recording
from .test_redaction import scan

TOKEN = "tk-query-token-71c3e09d"
ODD = "tk/odd+token&=é-1234"  # percent-encoded on the wire
USER = "tk-user-4471-beijing"
NUMBER = 9081726354
HELLO: Any = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "你好"}]}


def _echo_query(request: FakeRequest) -> Reply:
    """A 401 quoting the query, as some gateways do."""
    return error_reply(401, "authentication_error", f"bad credentials {dict(request.query)}")


@pytest.mark.parametrize("name", ["key", "api_key", "api-key", "access_token", "token", "Token"])
def test_a_secret_query_value_echoed_by_the_upstream_is_never_written(tmp_path: Path, name: str) -> None:
    with recording(_echo_query, tmp_path) as (upstream, proxy), httpx2.Client(base_url=proxy.url) as client:
        response = client.post("/v1/messages", params={name: TOKEN, "beta": "true"}, content=orjson.dumps(
            {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}))  # fmt: skip
        assert upstream.requests[0].query[name] == TOKEN, "forwarded as it was"
        assert TOKEN in response.text, "the client gets the upstream's answer as it was"
    assert scan(tmp_path, TOKEN) == []
    assert b"[REDACTED]" in b"".join(path.read_bytes() for path in tmp_path.glob("*.jsonl"))


def test_other_query_parameters_are_not_secrets() -> None:
    redactor = Redactor(patterns=())
    register_query_secrets([("beta", "true-but-long"), ("key", ODD)], redactor)
    assert redactor.redact_text("true-but-long") == "true-but-long"
    assert redactor.redact_text(f"{ODD} tk%2Fodd%2Btoken%26%3D%C3%A9-1234") == "[REDACTED] [REDACTED]"


def test_a_secret_body_field_is_forwarded_unchanged_and_never_written(tmp_path: Path) -> None:
    fields = ("metadata.user_id", "tools.1.name", "extra")
    with recording([text_reply(f"你好 {USER}")], tmp_path, secret_fields=fields) as (upstream, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        tools: Any = [{"name": "lookup_city", "input_schema": {"type": "object"}},
                                          {"name": "internal-tool-x9", "input_schema": {"type": "object"}}]  # fmt: skip
        client.messages.create(
            model="m", max_tokens=8, metadata={"user_id": USER}, tools=tools,
            messages=[{"role": "user", "content": f"我是 {USER}，用 internal-tool-x9，号码 {NUMBER}"}],
            extra_body={"extra": {"account": [NUMBER, True, None]}},
        )
        forwarded = upstream.requests[0].body
    assert forwarded["metadata"]["user_id"] == USER and forwarded["extra"]["account"][0] == NUMBER
    assert forwarded["tools"][1]["name"] == "internal-tool-x9"
    assert scan(tmp_path, USER, "internal-tool-x9", str(NUMBER)) == []
    assert "lookup_city" in (next(tmp_path.glob("*.jsonl"))).read_text(encoding="utf-8"), "only the named fields"


def test_secret_field_paths_skip_what_the_body_does_not_have() -> None:
    redactor = Redactor(patterns=())
    SecretFields(["a.b", "list.5", "list.x", "text.0", "a.b.c", ""]).register(
        {"a": {"b": "value-of-a-b"}, "list": ["first-item-0"], "text": "not-a-list"}, redactor
    )
    assert redactor.redact_text("value-of-a-b first-item-0 not-a-list") == "[REDACTED] first-item-0 not-a-list"
    assert not SecretFields([]) and SecretFields(["x"])


def _echo_authorization(request: FakeRequest) -> Reply:
    return text_reply(f"you sent {request.headers.get('authorization')}")


def test_credentials_in_the_upstream_url_go_as_basic_auth_unless_the_agent_authorizes_itself(tmp_path: Path) -> None:
    password = "gw-pass/93e1"  # percent-encoded in the URL
    basic = "Basic " + base64.b64encode(f"gw-user:{password}".encode()).decode()
    with FakeUpstream(_echo_authorization) as upstream:
        url = upstream.url.replace("http://", "http://gw-user:gw-pass%2F93e1@")
        config = ProxyConfig(upstream=url, out_dir=tmp_path, redactor=Redactor())
        with RunningProxy(config) as proxy, httpx2.Client(base_url=proxy.url) as client:
            echoed = client.post("/v1/messages", json=HELLO, headers={"x-api-key": "agent-key-0001"}).json()
            client.post("/v1/chat/completions", json=HELLO, headers={"authorization": "Bearer agent-bearer-0002"})
        first, second = upstream.requests
    assert echoed["content"][0]["text"] == f"you sent {basic}", "the upstream echoed the header into the trace"
    assert first.headers["authorization"] == basic and first.headers["x-api-key"] == "agent-key-0001"
    assert second.headers["authorization"] == "Bearer agent-bearer-0002", "the agent's own header wins"
    assert scan(tmp_path, password, basic.split()[1], "gw-user:", "agent-key-0001", "agent-bearer-0002") == []


def test_split_credentials_keeps_the_rest_of_the_url() -> None:
    redactor = Redactor(patterns=())
    plain = "https://gw.example:8443/api/v1?x=1"
    assert split_credentials(plain, redactor) == (plain, None)
    url, basic = split_credentials("https://user:p%40ss-long-1@gw.example:8443/api/v1", redactor)
    assert url == "https://gw.example:8443/api/v1"
    assert basic == "Basic " + base64.b64encode(b"user:p@ss-long-1").decode()
    assert redactor.redact_text("p@ss-long-1 user:p%40ss-long-1") == "[REDACTED] [REDACTED]"
