"""Serving before the HTTP stack is imported: ``tracekit replay`` answers health a tenth of a second after it
starts (issue 31 item 5).

Importing aiohttp takes about 0.3 s on a 2-core machine (a third of it the SSL contexts its client builds at
import), most of the start-up budget of 0.5 s. ``FrontDoor`` serves the bound socket with a plain asyncio
protocol while that import runs in a thread:

- ``GET`` or ``HEAD /_tracekit/health`` is answered at once, ``{"status": "loading"}`` (200), as the proxy
  answers it while its recordings load; a kept-alive connection may ask again;
- any other request's connection is held as it is: reading pauses after the bytes that came, and nothing is
  answered or lost;
- ``hand_over`` gives every held connection, with the bytes it sent so far, to the real server's protocol,
  which reads them as if they had just arrived; new connections meanwhile wait in the socket's backlog.

Connections beyond ``max_connections`` get the proxy's own 503 with ``Retry-After``. Only health is
understood here: every other check (header and body limits, timeouts) is the real server's, after hand-over.

Example (``tracekit.proxy.launch``)::

    door = await FrontDoor.open(sock, config.max_connections)
    ...                                  # import aiohttp and build the server in a thread
    door.stop_accepting()                # before the real server starts accepting on ``sock``
    door.hand_over(site.protocol)        # the held connections, to aiohttp's request handlers
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

from tracekit.constants import HEALTH_PATH
from tracekit.proxy.limits import BUSY_REFUSAL

_HEAD_END = b"\r\n\r\n"
_LOADING = b'{"status": "loading"}'
_HEALTH_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
                b"Content-Length: %d\r\n" % len(_LOADING))  # fmt: skip
#: A head this long with no end is held for the real server, which refuses it with its own status.
_LONGEST_HEAD = 64 * 1024


class FrontDoor:
    """Health at once, every other connection held until the real server takes it (see the module docstring)."""

    def __init__(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self.held = asyncio.Event()
        """Set when a connection is first held (a test waits on it instead of on time)."""
        self.health_answers = 0
        """Health requests answered ``loading`` here."""
        self._connections: dict[_Waiting, None] = {}
        self._server: asyncio.Server | None = None
        self._taken_by: Callable[[], asyncio.Protocol] | None = None
        """The real server's protocol once handed over: a connection accepted just before, whose protocol
        starts only now, goes straight to it."""
        self._closed = False

    @classmethod
    async def open(cls, sock: socket.socket, max_connections: int) -> FrontDoor:
        """Serve ``sock`` (bound and listening, left open for the real server) in the running loop."""
        door = cls(max_connections)
        # A duplicate descriptor: closing this server closes only it, and the socket keeps listening.
        door._server = await asyncio.get_running_loop().create_server(lambda: _Waiting(door), sock=sock.dup())
        return door

    def stop_accepting(self) -> None:
        """Accept no more connections (new ones wait in the backlog for the real server)."""
        if self._server is not None:
            self._server.close()
            self._server = None

    def hand_over(self, protocol: Callable[[], asyncio.Protocol]) -> int:
        """Give every connection still open to a new ``protocol()``, with the bytes it sent; how many."""
        self.stop_accepting()
        self._taken_by = protocol
        waiting, self._connections = list(self._connections), {}
        for connection in waiting:
            connection.hand_over(protocol())
        return len(waiting)

    def close(self) -> None:
        """Stop accepting and close every connection (the command stops before its server started)."""
        self.stop_accepting()
        self._closed = True
        for connection in list(self._connections):
            connection.transport.close()
        self._connections.clear()


class _Waiting(asyncio.Protocol):
    """One client connection at the front door."""

    def __init__(self, door: FrontDoor) -> None:
        self.door = door
        self.transport: asyncio.Transport
        self.received = bytearray()
        self.ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        door = self.door
        if door._taken_by is not None:
            self.hand_over(door._taken_by())
            return
        if door._closed:
            transport.close()
            return
        if len(door._connections) >= door.max_connections:
            transport.write(BUSY_REFUSAL)
            transport.close()
            return
        door._connections[self] = None

    def data_received(self, data: bytes) -> None:
        self.received += data
        while (end := self.received.find(_HEAD_END)) >= 0:
            health = _health_request(bytes(self.received[:end]))
            if health is None:
                break
            answer, close = health
            self.door.health_answers += 1  # counted first: the client may look as soon as it is written
            self.transport.write(answer)
            del self.received[: end + len(_HEAD_END)]
            if close:
                self.transport.close()
                return
        if self.received and (_HEAD_END in self.received or not _may_ask_health(self.received)):
            # A request for the proxy itself: it waits, unread past what came, for the real server.
            self.transport.pause_reading()
            self.door.held.set()

    def eof_received(self) -> bool:
        self.ended = True
        return True  # the real server decides what a half-closed connection gets

    def connection_lost(self, exc: Exception | None) -> None:
        self.door._connections.pop(self, None)

    def hand_over(self, protocol: asyncio.Protocol) -> None:
        """Make ``protocol`` this connection's own, and show it what came so far."""
        transport = self.transport
        if transport.is_closing():
            return
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        if self.received:
            protocol.data_received(bytes(self.received))
        if self.ended:
            protocol.eof_received()
        if not transport.is_reading():
            transport.resume_reading()


_HEALTH_PATH = HEALTH_PATH.encode()
_HEALTH_LINES = tuple(method + b" " + _HEALTH_PATH for method in (b"GET", b"HEAD"))


def _may_ask_health(received: bytearray) -> bool:
    """Whether the start of a head still arriving may be a health request (keep reading it, then)."""
    if len(received) >= _LONGEST_HEAD:
        return False
    line, complete, _ = bytes(received).partition(b"\r\n")
    if complete:
        return _asks_health(line)
    return any(health.startswith(line) or line.startswith((health + b" ", health + b"?")) for health in _HEALTH_LINES)


def _asks_health(line: bytes) -> bool:
    """Whether a request line is ``GET`` or ``HEAD`` of the health path."""
    method, _, rest = line.partition(b" ")
    return method in (b"GET", b"HEAD") and rest.partition(b" ")[0].partition(b"?")[0] == _HEALTH_PATH


def _health_request(head: bytes) -> tuple[bytes, bool] | None:
    """The answer to a request head (up to its blank line) that asks for health with no body, and whether the
    connection closes after it; None for any other request."""
    line, _, rest = head.partition(b"\r\n")
    if not _asks_health(line):
        return None
    fields = {}
    for field in rest.split(b"\r\n"):
        name, _, value = field.partition(b":")
        fields[name.strip().lower()] = value.strip().lower()
    if b"transfer-encoding" in fields or fields.get(b"content-length", b"0") != b"0":
        return None
    close = fields.get(b"connection") == b"close" or line.endswith(b" HTTP/1.0")
    answer = _HEALTH_HEAD + (b"Connection: close\r\n\r\n" if close else b"\r\n")
    return (answer if line.startswith(b"HEAD ") else answer + _LOADING), close


__all__ = ["FrontDoor"]
