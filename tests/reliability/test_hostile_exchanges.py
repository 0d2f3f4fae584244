"""Attacks on the recording proxy from outside (issue 14, "Found by attacking it", items 1, 2, 4, 5, 6, 8).
Each test failed before the fix it pins.

1. A byte that is not UTF-8 in ``x-tracekit-session``: the trace stayed empty while the client got 200, and at
   SIGTERM the error escaped ``Recorder.close()``, so the other traces were neither closed nor scrubbed. A
   key-shaped session name named a file.
2. A key seen in one session's body before another session sent it as a header stayed on disk until close
   (and for ever after kill -9): files are scrubbed again as soon as a secret is learnt.
4. A 200 whose body is not JSON was recorded as a clean success with no body and replayed as ``{}``.
5. A hung upstream held the exchange for 600 s after the client had gone; the timeout was recorded as
   ``transport: "connect"``.
6. A 10 MB answer was stored three times over.
8. SSE bytes that are not UTF-8 were stored as U+FFFD, so replay was not byte-faithful.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import orjson
import pytest
from aiohttp import web

from tracekit.providers import anthropic as anthropic_wire
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, text_reply
from tracekit.trace import load_trace

from .support import MisbehavingUpstream, RecordProcess, read_lines, secret_hits

HELLO: list[Any] = [{"role": "user", "content": "你好"}]
REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
         "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2},
         "content": [{"type": "text", "text": "北京晴"}]}  # fmt: skip


def _body(session_text: str = "你好") -> bytes:
    return orjson.dumps({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": session_text}]})


def _post_raw(url: str, headers: dict[str, bytes], body: bytes) -> tuple[int, bytes]:
    """POST /v1/messages with header values sent as the given bytes (http.client passes bytes through)."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.putrequest("POST", "/v1/messages")
    for name, value in {"content-type": b"application/json", **headers}.items():
        connection.putheader(name, value)
    connection.putheader("content-length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def _proxy(upstream: str, out: Path, **options: Any) -> RunningProxy:
    return RunningProxy(ProxyConfig(upstream=upstream, out_dir=out, redactor=Redactor(), **options))


def _replay(folder: Path) -> RunningProxy:
    return RunningProxy(ProxyConfig(mode="replay", replay_dir=folder, redactor=Redactor()))


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[tuple[FakeUpstream, RunningProxy, Path]]:
    with FakeUpstream(lambda request: text_reply("好的")) as upstream, _proxy(upstream.url, tmp_path) as proxy:
        yield upstream, proxy, tmp_path


# -- 1. names that are not UTF-8 or are keys -------------------------------------------------------------


def test_a_session_name_that_is_not_utf8_is_recorded_and_stops_nothing(tmp_path: Path) -> None:
    with FakeUpstream(lambda request: text_reply("好的")) as upstream:
        proxy = RunningProxy(ProxyConfig(upstream=upstream.url, out_dir=tmp_path, redactor=Redactor())).start()
        try:
            status, _ = _post_raw(proxy.url, {"x-tracekit-session": b"caf\xe9-\xff\xfe"}, _body())
            assert status == 200
            assert _post_raw(proxy.url, {"x-tracekit-session": b"plain"}, _body("再见"))[0] == 200
        finally:
            proxy.close()  # the clean stop that used to raise and leave the other traces open
        assert proxy.proxy.tracker.recording_errors == []
    traces = {path.name: load_trace(path) for path in tmp_path.glob("*.jsonl")}
    assert sorted(traces) == ["caf_-.jsonl", "plain.jsonl"], "the name made safe once, at the edge"
    odd = traces["caf_-.jsonl"]
    assert odd.problems == [] and odd.header.session == "caf\ufffd-\ufffd\ufffd"
    assert [record.kind for record in odd.records].count("model_call") == 1, "the exchange is in the trace"
    assert traces["plain.jsonl"].stats().llm_calls == 1


def test_a_key_shaped_session_name_never_names_a_file(recording: tuple[FakeUpstream, RunningProxy, Path]) -> None:
    _, proxy, out = recording
    key = "sk-ant-api03-" + "Q" * 40
    assert _post_raw(proxy.url, {"x-tracekit-session": key.encode()}, _body())[0] == 200
    proxy.close()
    (path,) = out.glob("*.jsonl")
    assert "sk-ant" not in path.name and path.name == "REDACTED.jsonl"
    assert secret_hits([key], out) == []


def test_one_trace_failing_to_close_stops_neither_the_others_nor_the_scrub(
    recording: tuple[FakeUpstream, RunningProxy, Path],
) -> None:
    _, proxy, out = recording
    late = "tkrel-late-secret-4c1d9e"
    for name in ("first", "second"):
        assert _post_raw(proxy.url, {"x-tracekit-session": name.encode()}, _body(f"记住 {late}"))[0] == 200
    proxy.wait_written()
    recorder = proxy.proxy.tracker.recorder
    assert recorder is not None and len(recorder.traces) == 2
    broken = recorder.traces[0]

    def fail() -> None:
        raise TypeError("str is not valid UTF-8: surrogates not allowed")

    broken.close = fail  # type: ignore[method-assign]
    proxy.proxy.config.redactor.add_secret(late)  # learnt without a request: only the scrub at close remains
    proxy.close()
    assert secret_hits([late], out) == [], "every file scrubbed at close, the broken one too"
    assert len(read_lines(out / "second.jsonl")) >= 3


# -- 2. secrets learnt late ------------------------------------------------------------------------------


def test_a_secret_learnt_late_is_scrubbed_before_the_request_that_revealed_it_is_answered(
    recording: tuple[FakeUpstream, RunningProxy, Path],
) -> None:
    _, proxy, out = recording
    key = "tkrel-pasted-key-8e2f61b0a9"
    assert _post_raw(proxy.url, {"x-tracekit-session": b"pasted"}, _body(f"我的 key 是 {key}"))[0] == 200
    proxy.wait_written()
    (pasted,) = out.glob("pasted.jsonl")
    assert secret_hits([key], pasted) != [], "not known yet: written as it came"
    assert _post_raw(proxy.url, {"x-tracekit-session": b"header", "x-api-key": key.encode()}, _body())[0] == 200
    assert secret_hits([key], out) == [], "scrubbed before the answer that revealed it went out"
    assert _post_raw(proxy.url, {"x-tracekit-session": b"pasted"}, _body("还在吗"))[0] == 200
    proxy.close()
    assert secret_hits([key], out) == [] and len(load_trace(pasted).records) > 3, "the file kept growing after"


def test_a_secret_learnt_late_is_gone_from_disk_after_kill_9(tmp_path: Path) -> None:
    key = "tkrel-killed-key-51c0d7e3aa"
    out = tmp_path / "out"
    with FakeUpstream(lambda request: text_reply("好的")) as upstream:
        record = RecordProcess(upstream.url, out, tmp_path / "logs")
        try:
            client = anthropic.Anthropic(base_url=record.url, api_key="tkrel-first-key-000", max_retries=0)
            session = {"x-tracekit-session": "pasted"}
            client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": f"key {key}"}],
                                   extra_headers=session)  # fmt: skip
            client.messages.create(model="m", max_tokens=8, messages=HELLO, extra_headers=session)
            assert secret_hits([key], out) != [], "the first exchange is on disk once the second was answered"
            client.messages.create(model="m", max_tokens=8, messages=HELLO,
                                   extra_headers={"x-tracekit-session": "other", "x-api-key": key})  # fmt: skip
        finally:
            record.kill()
    assert secret_hits([key], out) == []
    assert secret_hits([key, "tkrel-first-key-000"], tmp_path / "logs") == []


def test_the_window_between_learning_a_secret_and_a_clean_disk(tmp_path: Path) -> None:
    """The figure for benchmarks/results.md: how long the files written so far are held while scrubbed."""
    sessions, turns = 40, 5
    key = "tkrel-window-key-0b7d2c91"
    with FakeUpstream(lambda request: text_reply("好的，" * 200)) as upstream, _proxy(upstream.url, tmp_path) as proxy:
        for number in range(sessions):
            for turn in range(turns):
                text = f"第 {turn} 轮 {key if number == 0 and turn == 0 else ''}" + "。" * 500
                _post_raw(proxy.url, {"x-tracekit-session": f"s{number:02d}".encode()}, _body(text))
        proxy.wait_written()
        size = sum(path.stat().st_size for path in tmp_path.glob("*.jsonl"))
        _post_raw(proxy.url, {"x-tracekit-session": b"revealing", "x-api-key": key.encode()}, _body())
        recorder = proxy.proxy.tracker.recorder
        assert recorder is not None
        (window,) = recorder.scrub_windows_ms
        assert secret_hits([key], tmp_path) == []
    print(f"\nscrub window: {window:.1f} ms for {sessions} files, {size / 1e6:.2f} MB (learnt -> last file replaced)")


# -- 4. a 200 that is not JSON -----------------------------------------------------------------------------

NOT_JSON = b"<html><body>upstream gateway says hi \xe9</body></html>"


async def _html_200(request: web.Request) -> web.Response:
    return web.Response(status=200, body=NOT_JSON, headers={"content-type": "text/html; charset=latin-1"})


def test_a_200_that_is_not_json_is_recorded_as_it_came_and_replayed_byte_for_byte(tmp_path: Path) -> None:
    upstream = MisbehavingUpstream({("POST", "/v1/messages"): _html_200})
    with upstream, _proxy(upstream.url, tmp_path) as proxy:
        recorded = httpx2.post(proxy.url + "/v1/messages", content=_body(), timeout=10)
    assert (recorded.status_code, recorded.content) == (200, NOT_JSON)
    (path,) = tmp_path.glob("*.jsonl")
    (call,) = [r for r in read_lines(path) if r["kind"] == "model_call"]
    assert call["error"]["type"] == "invalid_response" and call["response_parse_error"]
    assert "response" not in call and call["escaped"] == ["response_raw"]
    with _replay(tmp_path) as proxy:
        replayed = httpx2.post(proxy.url + "/v1/messages", content=_body(), timeout=10)
    assert (replayed.status_code, replayed.content) == (200, NOT_JSON)
    assert replayed.headers["content-type"] == "text/html; charset=latin-1"


# -- 5. a hung upstream -------------------------------------------------------------------------------------


class Hung:
    """An upstream handler that never answers (or stops after the first event): ``arrived`` and ``cancelled``
    are set from its thread as the request comes in and as the proxy hangs up."""

    def __init__(self, first_event: bool = False) -> None:
        self.first_event = first_event
        self.arrived = threading.Event()
        self.cancelled = threading.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The handler."""
        await request.read()
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        try:
            if self.first_event:
                await response.prepare(request)
                await response.write(anthropic_wire.render_stream(REPLY).split(b"\n\n")[0] + b"\n\n")
            self.arrived.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return response


def test_a_client_that_goes_away_cancels_the_hung_upstream_request(tmp_path: Path) -> None:
    hung = Hung()
    upstream = MisbehavingUpstream({("POST", "/v1/messages"): hung.handle})
    with upstream, _proxy(upstream.url, tmp_path) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        client = socket.create_connection((host, int(port)))
        body = _body()
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                       b"x-tracekit-session: gone\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
        assert hung.arrived.wait(10)
        client.close()
        assert hung.cancelled.wait(10), "the upstream request still hangs after the client left"
    records = read_lines(tmp_path / "gone.jsonl")
    (call,) = [r for r in records if r["kind"] == "model_call"]
    assert call["partial"] is True and call["error"]["type"] == "client_disconnected"
    assert [r["source"] for r in records if r["kind"] == "error"] == ["client"]


@pytest.mark.parametrize("first_event", [False, True], ids=["before-the-response", "mid-stream"])
def test_a_read_timeout_is_recorded_as_a_read_timeout(tmp_path: Path, first_event: bool) -> None:
    hung = Hung(first_event)
    with MisbehavingUpstream({("POST", "/v1/messages"): hung.handle}) as upstream:
        with _proxy(upstream.url, tmp_path, read_timeout=0.3) as proxy:
            client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
            stream = client.messages.stream(model="m", max_tokens=8, messages=HELLO)
            with pytest.raises((anthropic.APIError, httpx2.HTTPError)), stream as events:
                events.get_final_message()
        assert hung.cancelled.wait(10), "the proxy let go of the upstream request"
    (path,) = tmp_path.glob("*.jsonl")
    transports = {r.get("transport") for r in read_lines(path) if r["kind"] in ("model_call", "error")}
    assert "read_timeout" in transports and "connect" not in transports


@pytest.fixture
def unreachable() -> Iterator[str]:
    """A loopback port whose accept queue is full: a connection to it hangs in SYN_SENT."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    probe = socket.socket()
    probe.settimeout(0.5)
    try:
        probe.connect(("127.0.0.1", port))
        pytest.skip("this system accepts connections beyond a full accept queue; no way to hang a connect here")
    except OSError:
        pass
    finally:
        probe.close()
    yield f"http://127.0.0.1:{port}"
    for sock in [server, *fillers]:
        sock.close()


def test_a_connect_timeout_is_recorded_as_a_connect_timeout(tmp_path: Path, unreachable: str) -> None:
    with _proxy(unreachable, tmp_path, connect_timeout=0.3) as proxy, pytest.raises(anthropic.APIStatusError) as failed:
        anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0).messages.create(
            model="m", max_tokens=8, messages=HELLO)  # fmt: skip
    assert failed.value.status_code == 504 and "--connect-timeout" in str(failed.value)
    (path,) = tmp_path.glob("*.jsonl")
    transports = {r.get("transport") for r in read_lines(path) if r["kind"] in ("model_call", "error")}
    assert transports == {"connect_timeout"}


# -- 6. a large answer --------------------------------------------------------------------------------------


def test_a_large_answer_is_stored_once(tmp_path: Path) -> None:
    marker = "独一无二的标记"
    big = marker + "长" * (10_000_000 // 3)
    with FakeUpstream([text_reply(big), text_reply("好")]) as upstream, _proxy(upstream.url, tmp_path) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        first = client.messages.create(model="m", max_tokens=8, messages=HELLO)
        messages: list[Any] = [*HELLO, {"role": "assistant", "content": first.content},
                               {"role": "user", "content": "再说一遍"}]  # fmt: skip
        client.messages.create(model="m", max_tokens=8, messages=messages)
    (path,) = tmp_path.glob("*.jsonl")
    data = path.read_bytes()
    assert data.count(marker.encode()) == 1, "once: in the assistant message"
    assert len(data) < 1.1 * len(big.encode())
    print(f"\nlarge answer: {len(big.encode()) / 1e6:.1f} MB answer, then a turn re-sending it: "
          f"{len(data) / 1e6:.1f} MB trace")  # fmt: skip
    with _replay(tmp_path) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        again = client.messages.create(model="m", max_tokens=8, messages=HELLO)
        assert again.content == first.content
        assert client.messages.create(model="m", max_tokens=8, messages=messages).content[0].text == "好"  # type: ignore[union-attr]
        assert proxy.proxy.misses == []


# -- 8. SSE bytes that are not UTF-8 ------------------------------------------------------------------------

MALFORMED = anthropic_wire.render_stream(REPLY).replace(b"event: ping", b": proxy says caf\xe9 \xff\n\nevent: ping")


async def _malformed_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    for event in MALFORMED.split(b"\n\n")[:-1]:
        await response.write(event + b"\n\n")
    await response.write_eof()
    return response


def test_sse_bytes_that_are_not_utf8_replay_byte_for_byte(tmp_path: Path) -> None:
    stream_body = orjson.loads(_body()) | {"stream": True}
    upstream = MisbehavingUpstream({("POST", "/v1/messages"): _malformed_stream})
    with upstream, _proxy(upstream.url, tmp_path) as proxy:
        recorded = httpx2.post(proxy.url + "/v1/messages", json=stream_body, timeout=10).content
    assert recorded == MALFORMED
    (path,) = tmp_path.glob("*.jsonl")
    (call,) = [r for r in read_lines(path) if r["kind"] == "model_call"]
    assert call["escaped"] == ["sse"] and call["response"]["content"] == REPLY["content"], "assembled all the same"
    with _replay(tmp_path) as proxy:
        replayed = httpx2.post(proxy.url + "/v1/messages", json=stream_body, timeout=10).content
    assert replayed == MALFORMED, "the exact bytes, not U+FFFD"
