"""``HEAD`` gets the head of the answer and no body (RFC 9110 section 9.3.2), from the fake upstream and
through ``tracekit record``: Claude Code's first request is ``HEAD /``, and a body after the head was read
as the next response on the same connection (a ``BadStatusLine``, then a 500 from the proxy)."""

from __future__ import annotations

import http.client
from pathlib import Path
from urllib.parse import urlsplit

from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, text_reply


def head_then_get(url: str) -> tuple[int, bytes, int, bytes]:
    """``HEAD /`` then ``GET /`` on one kept-alive connection: each status and body."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("HEAD", "/")
        head = connection.getresponse()
        head_body = head.read()
        connection.request("GET", "/")
        following = connection.getresponse()
        return head.status, head_body, following.status, following.read()
    finally:
        connection.close()


def test_the_fake_upstream_answers_head_without_a_body() -> None:
    with FakeUpstream(lambda request: text_reply("hi")) as upstream:
        head_status, head_body, status, body = head_then_get(upstream.url)
    assert head_status == 404 and head_body == b""
    assert status == 404 and b"no route GET /" in body, "the next answer on the connection is read whole"


def test_head_through_record_reaches_the_upstream_and_keeps_the_connection(tmp_path: Path) -> None:
    with FakeUpstream(lambda request: text_reply("hi")) as upstream:
        config = ProxyConfig(upstream=upstream.url, out_dir=tmp_path, redactor=Redactor())
        with RunningProxy(config) as proxy:
            for _ in range(10):
                head_status, head_body, status, body = head_then_get(proxy.url)
                assert (head_status, head_body) == (404, b"")
                assert status == 404 and b"no route GET /" in body
