"""Replay's front door (``tracekit.proxy.front_door``): health is answered while aiohttp is still being
imported, every other request waits on its connection, and the real server takes the connections over with
the bytes they sent, so a request that came at start-up gets its recorded answer.

Nothing waits on time: the tests wait on the door's ``held`` event, and the build is held until released."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import orjson

from tracekit.loop_thread import LoopThread
from tracekit.proxy import LoadingProxy, Proxy, ProxyConfig
from tracekit.proxy.front_door import FrontDoor, _Waiting
from tracekit.proxy.listening import bind
from tracekit.proxy.runner import start, stop
from tracekit.redact import Redactor

from .test_cli import HELLO
from .test_replay_loading import WAIT, health, held, record_hello

HEALTH = b"GET /_tracekit/health HTTP/1.1\r\nHost: t\r\n\r\n"


@contextmanager
def front_door(max_connections: int = 8) -> Iterator[tuple[LoopThread, FrontDoor, socket.socket]]:
    thread = LoopThread("test-front-door")
    sock = bind("127.0.0.1", 0)
    door = thread.run(FrontDoor.open(sock, max_connections), timeout=WAIT)
    try:
        yield thread, door, sock
    finally:
        thread.stop(_closed(door), timeout=WAIT)
        sock.close()


async def _closed(door: FrontDoor) -> None:
    door.close()


def connect(sock: socket.socket) -> socket.socket:
    return socket.create_connection(sock.getsockname(), timeout=WAIT)


def answer(client: socket.socket) -> bytes:
    """One whole answer of a known length (the door's say their length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += client.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += client.recv(4096)
    return head + b"\r\n\r\n" + body


class Transport(asyncio.Transport):
    """What the door's protocol writes, and whether it reads."""

    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.reading = True

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_reading(self) -> bool:
        return self.reading

    def is_closing(self) -> bool:
        return False

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.protocol = protocol


class Received(asyncio.Protocol):
    """The real server's protocol, as far as the hand-over shows it."""

    def __init__(self) -> None:
        self.made: asyncio.BaseTransport | None = None
        self.data = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.made = transport

    def data_received(self, data: bytes) -> None:
        self.data += data


def test_a_health_head_in_pieces_is_read_whole_and_any_other_request_waits() -> None:
    door = FrontDoor(max_connections=8)
    health, other = _Waiting(door), _Waiting(door)
    health.connection_made(health_transport := Transport())
    other.connection_made(other_transport := Transport())
    health.data_received(HEALTH[:9])  # "GET /_tra": it may still be health, so the door reads on
    assert health_transport.reading and not health_transport.written
    health.data_received(HEALTH[9:])
    assert health_transport.written.endswith(b'\r\n\r\n{"status": "loading"}') and health_transport.reading
    other.data_received(b"GET /_tracekit/healthz HTTP/1.1\r\n")  # not health: held, unanswered
    assert not other_transport.reading and not other_transport.written and door.held.is_set()
    assert door.health_answers == 1


def test_a_connection_whose_protocol_starts_after_the_hand_over_goes_to_the_real_server() -> None:
    """asyncio starts an accepted connection's protocol one loop turn after accepting it: one accepted just
    before the door stopped accepting must not stay at a door that was already handed over."""
    door = FrontDoor(max_connections=8)
    held, late = _Waiting(door), _Waiting(door)
    held.connection_made(held_transport := Transport())
    held.data_received(b"POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
    taken: list[Received] = []

    def protocol() -> Received:
        taken.append(Received())
        return taken[-1]

    assert door.hand_over(protocol) == 1
    late.connection_made(late_transport := Transport())
    [first, second] = taken
    assert first.made is held_transport and first.data.endswith(b"\r\n\r\n{}") and held_transport.reading
    assert second.made is late_transport and late_transport.protocol is second


def test_health_on_a_kept_alive_connection_then_head_and_close() -> None:
    with front_door() as (_, door, sock), connect(sock) as client:
        client.sendall(HEALTH)
        first = answer(client)
        assert first.startswith(b"HTTP/1.1 200 OK\r\n") and first.endswith(b'\r\n\r\n{"status": "loading"}')
        client.sendall(HEALTH)  # the same connection asks again
        assert answer(client).endswith(b'{"status": "loading"}')
        client.sendall(HEALTH.replace(b"GET", b"HEAD").replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        rest = b""
        while chunk := client.recv(4096):  # closed after it: the loop ends
            rest += chunk
        assert rest.endswith(b"Connection: close\r\n\r\n") and b"loading" not in rest
        assert door.health_answers == 3


def test_connections_beyond_the_limit_are_refused_with_503() -> None:
    with front_door(max_connections=1) as (thread, door, sock), connect(sock) as first:
        first.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n")
        thread.run(door.held.wait(), timeout=WAIT)  # the first connection is counted and held
        with connect(sock) as second:
            refused = b""
            while chunk := second.recv(4096):
                refused += chunk
        assert refused.startswith(b"HTTP/1.1 503 Service Unavailable\r\n") and b"Retry-After: 1" in refused


@contextmanager
def loading_behind_the_door(folder: Path) -> Iterator[tuple[LoopThread, FrontDoor, socket.socket, Any]]:
    """A door on a port, then (on ``serve()``) the replay proxy's loading server taking it over, its build held
    until ``release`` is set."""
    config = ProxyConfig(mode="replay", replay_dir=folder, redactor=Redactor())
    build, release = held(lambda: Proxy(config))
    loading = LoadingProxy(config, build)
    with front_door() as (thread, door, sock):
        served: list[Any] = []

        def serve() -> None:
            served.append(thread.run(start(loading, "127.0.0.1", 0, sock, door), timeout=WAIT)[0])

        try:
            yield thread, door, sock, (serve, release, loading)
        finally:
            release.set()
            if served:
                thread.run(stop(loading, served[0]), timeout=WAIT)


def test_a_request_held_at_the_door_gets_its_recorded_answer_after_the_hand_over(tmp_path: Path) -> None:
    record_hello(tmp_path)
    with loading_behind_the_door(tmp_path) as (thread, door, sock, (serve, release, loading)):
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        answers: list[Any] = []
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=WAIT)
        asking = threading.Thread(target=lambda: answers.append(
            client.messages.with_raw_response.create(model="m", max_tokens=10, messages=HELLO)))  # fmt: skip
        asking.start()
        thread.run(door.held.wait(), timeout=WAIT)
        assert health(url) == {"status": "loading"} and door.health_answers == 1
        serve()  # aiohttp's server takes the held connection over; the recordings are still loading
        assert loading.first_wait.wait(WAIT), "the held request did not reach the proxy"
        assert not answers
        release.set()
        asking.join(WAIT)
        [raw] = answers
        assert raw.headers["x-tracekit-replay"] == "hit" and raw.parse().content[0].text == "你好！"
        assert health(url) == {"status": "ok"} and door.health_answers == 1


def test_a_body_half_sent_before_the_hand_over_arrives_whole(tmp_path: Path) -> None:
    record_hello(tmp_path)
    body = orjson.dumps({"model": "m", "max_tokens": 10, "messages": HELLO})
    head = b"POST /v1/messages HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    with loading_behind_the_door(tmp_path) as (thread, door, sock, (serve, release, _)), connect(sock) as client:
        client.sendall(head % len(body) + body[:7])
        thread.run(door.held.wait(), timeout=WAIT)
        release.set()
        serve()
        client.sendall(body[7:])
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += client.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200 OK\r\n"), reply[:200]
        assert b"x-tracekit-replay: hit" in reply.lower()
