"""Slow and too many clients (issue 27 C, slowloris): real sockets that send a request head slowly or not at
all are closed after ``header_timeout``; a request body that does not arrive gets a 408; past
``max_connections`` a new connection gets a 503 with ``Retry-After``; each kind of event is logged once.
Each test waits for the server to close the socket (a blocking read returning end of file), not for a time."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tracekit.testing import text_reply

from .helpers import recording

SAFETY = 20.0  # only bounds a broken test; every wait ends when the server closes the socket


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port))
    sock.settimeout(SAFETY)
    return sock


def _read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_client_that_never_finishes_its_head_is_closed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), recording(["好的。"], tmp_path / "rec", header_timeout=0.3) as (_, proxy):
        slow = [_connect(proxy.url) for _ in range(5)]
        for sock in slow[:3]:
            sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        for sock in slow:
            assert _read_until_closed(sock) == b""  # closed by the server: no response, no traceback
            sock.close()
    messages = [record.getMessage() for record in caplog.records if "header_timeout" in record.getMessage()]
    assert len(messages) == 1, "one line per kind of event"
    assert not [record for record in caplog.records if record.exc_info]


def test_a_body_that_does_not_arrive_gets_a_408(tmp_path: Path) -> None:
    with recording(["好的。"], tmp_path / "rec", header_timeout=0.3) as (_, proxy):
        sock = _connect(proxy.url)
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"mod")  # fmt: skip
        answer = _read_until_closed(sock)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 408")


def test_past_the_connection_cap_a_client_is_refused_politely(tmp_path: Path) -> None:
    with recording(["好的。"], tmp_path / "rec", max_connections=3) as (_, proxy):
        held = [_connect(proxy.url) for _ in range(3)]
        for sock in held:  # a request each, so that the server has certainly accepted all three
            sock.sendall(b"GET /_tracekit/health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        extra = _connect(proxy.url)
        answer = _read_until_closed(extra)
        extra.close()
        assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in answer
        for sock in held:
            sock.close()


def test_a_slow_answer_to_a_whole_request_is_not_cut(tmp_path: Path) -> None:
    """The head timer stops once a request's head is whole: its body in a later packet and an answer that takes
    longer than ``header_timeout`` are not cut."""
    slow_answer = text_reply("好的。").delayed(first_byte=1.0)
    with recording([slow_answer], tmp_path / "rec", header_timeout=0.3) as (_, proxy):
        sock = _connect(proxy.url)
        body = json.dumps({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}).encode()
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body))  # fmt: skip
        sock.sendall(body)
        answer = _read_until_closed(sock)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 200") and "好的".encode() in answer
