"""Shared pieces of the reliability suite.

- ``RecordProcess``: ``tracekit record`` as a child process (the way users run it), with its stdout and
  stderr kept in files so that the logs can be scanned for secrets.
- ``CapturingUpstream``: the scripted fake upstream, also keeping what it sent for each request and how
  long it took to serve it (timed by an aiohttp middleware, on the same clock as the client).
- ``CapturingTransport``: an httpx2 transport for the SDKs that keeps the raw bytes each response brought,
  and when they arrived.
- ``exchange_records``: the records of a trace file that stand for one HTTP exchange each.
- ``MisbehavingUpstream``: an upstream that does what the scripted fake never does (hangs, answers a 200
  that is not JSON, sends bytes that are not UTF-8), one aiohttp handler per route, cancelled when the proxy
  hangs up.

Requests are correlated across the three by the ``x-load-turn`` header (forwarded upstream, unlike
``x-tracekit-session``) and the SDKs' ``x-stainless-retry-count``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import orjson
from aiohttp import web

from tracekit._fake.wire import WireResponse
from tracekit.loop_thread import LoopThread
from tracekit.testing import FakeUpstream

TURN_HEADER = "x-load-turn"
RETRY_HEADER = "x-stainless-retry-count"
Key = tuple[str, int]
"""(x-load-turn, x-stainless-retry-count): one HTTP request of a load session."""

#: Environment variables the child proxy must not inherit: their values would be registered as secrets
#: at start-up, and the tests want to see that secrets learned from the traffic are redacted.
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")


def request_key(headers: Any) -> Key:
    """The correlation key of a request from its headers (any mapping with ``get``)."""
    return str(headers.get(TURN_HEADER) or ""), int(headers.get(RETRY_HEADER) or 0)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank method."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(q * len(ordered) + 0.5)))
    return ordered[rank - 1]


# -- tracekit record as a child process ----------------------------------------------------------------


class RecordProcess:
    """``tracekit record`` in a child process; ``url`` is read from the line it prints at start-up."""

    def __init__(self, upstream: str, out_dir: Path, log_dir: Path, *extra: str, name: str = "record") -> None:
        self.out_dir = out_dir
        self.stdout_path = log_dir / f"{name}.stdout.log"
        self.stderr_path = log_dir / f"{name}.stderr.log"
        log_dir.mkdir(parents=True, exist_ok=True)
        args = ["record", "--upstream", upstream, "--port", "0", "--out", str(out_dir), *extra]
        self.process = start_tracekit(args, self.stdout_path, self.stderr_path)
        self.url = wait_for_line(self.stdout_path, "listening on ", self.process).split("listening on ", 1)[1]

    @property
    def openai_url(self) -> str:
        """The openai SDK's ``base_url``."""
        return self.url + "/v1"

    def stop(self, timeout: float = 8.0) -> int:
        """SIGTERM, then wait; returns the exit status (the contract: 0 within 5 seconds)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def kill(self) -> None:
        """SIGKILL: no chance to finish anything."""
        self.process.kill()
        self.process.wait()

    def cpu_seconds(self) -> float | None:
        """User + system CPU time the process used so far (Linux; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def logs(self) -> bytes:
        """Everything the process printed."""
        return self.stdout_path.read_bytes() + self.stderr_path.read_bytes()


def tracekit_command(args: list[str]) -> list[str]:
    """The command line running ``tracekit ARGS`` with this interpreter (no shell shims in between)."""
    return [sys.executable, "-c", "from tracekit.cli.main import cli; cli(prog_name='tracekit')", *args]


def clean_env() -> dict[str, str]:
    """This process's environment without API keys."""
    return {name: value for name, value in os.environ.items() if not name.endswith(_SECRET_ENV_SUFFIXES)}


def start_tracekit(args: list[str], stdout: Path, stderr: Path) -> subprocess.Popen[bytes]:
    """Start ``tracekit ARGS`` with its output going to two files."""
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        return subprocess.Popen(tracekit_command(args), stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=clean_env())  # fmt: skip


def wait_for_line(path: Path, marker: str, process: subprocess.Popen[bytes], timeout: float = 20.0) -> str:
    """The first line of ``path`` holding ``marker`` (the process must stay alive meanwhile)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if marker in line:
                return line.strip()
        if process.poll() is not None:
            raise AssertionError(f"the process exited with {process.returncode} before printing {marker!r}")
        time.sleep(0.02)
    process.kill()
    raise AssertionError(f"no line with {marker!r} in {path} after {timeout} s")


# -- the fake upstream, keeping what it sent -----------------------------------------------------------


@dataclass
class Served:
    """What the upstream did for one request."""

    wire: WireResponse | None = None
    t_in: float = 0.0
    t_out: float = 0.0

    @property
    def sent(self) -> bytes | None:
        """The body bytes the upstream sent, cut where it cut (None: it closed without a response)."""
        wire = self.wire
        if wire is None:
            return None
        if wire.events is None:
            return wire.body[: wire.cut_body_at] if wire.cut_body_at is not None else wire.body
        if wire.cut_event_at is None:
            return b"".join(wire.events)
        # The fake upstream sends the events before the cut one, then the first half of it.
        cut = wire.events[wire.cut_event_at]
        return b"".join(wire.events[: wire.cut_event_at]) + cut[: len(cut) // 2]


class CapturingUpstream(FakeUpstream):
    """A ``FakeUpstream`` that keeps, by request key, the response it rendered and its serving time."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.served: dict[Key, Served] = {}
        self._served_lock = threading.Lock()

    def _entry(self, key: Key) -> Served:
        with self._served_lock:
            return self.served.setdefault(key, Served())

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def timing(request: web.Request, handler: Callable[[web.Request], Awaitable[Any]]) -> Any:
            entry = self._entry(request_key(request.headers))
            entry.t_in = time.perf_counter()
            try:
                return await handler(request)
            finally:
                entry.t_out = time.perf_counter()

        app.middlewares.append(timing)
        return app

    # Private hook of the fake server: every rendered response (message or error) is sent through it.
    async def _deliver(self, request: web.Request, wire: WireResponse, *args: Any, **kwargs: Any) -> Any:
        self._entry(request_key(request.headers)).wire = wire
        return await super()._deliver(request, wire, *args, **kwargs)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class MisbehavingUpstream:
    """An aiohttp server on loopback serving ``routes`` ((method, path) -> handler) from its own thread. It runs
    with ``handler_cancellation``: a handler is cancelled as soon as the proxy closes the connection."""

    def __init__(self, routes: dict[tuple[str, str], Handler]) -> None:
        self.routes = routes
        self.url = ""
        self._thread: LoopThread | None = None
        self._runner: web.AppRunner | None = None

    async def _start(self) -> tuple[web.AppRunner, str]:
        app = web.Application()
        for (method, path), handler in self.routes.items():
            app.router.add_route(method, path, handler)
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        return runner, f"http://127.0.0.1:{port}"

    def __enter__(self) -> MisbehavingUpstream:
        self._thread = LoopThread("misbehaving-upstream")
        self._runner, self.url = self._thread.run(self._start(), timeout=10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._thread is not None and self._runner is not None:
            self._thread.stop(self._runner.cleanup(), timeout=10)


# -- the client side: raw bytes as the SDK received them ------------------------------------------------


@dataclass
class Received:
    """One HTTP request as the client saw it."""

    key: Key
    t_start: float
    status: int | None = None
    chunks: list[bytes] = field(default_factory=list)
    t_end: float | None = None
    error: str | None = None
    complete: bool = False

    @property
    def body(self) -> bytes:
        """The raw body bytes received."""
        return b"".join(self.chunks)


class _CapturingStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, received: Received) -> None:
        self._inner = inner
        self._received = received

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                self._received.chunks.append(chunk)
                yield chunk
        except Exception as exc:
            self._received.error = repr(exc)
            raise
        finally:
            self._received.t_end = time.perf_counter()
        self._received.complete = True

    async def aclose(self) -> None:
        await self._inner.aclose()


class CapturingTransport(httpx2.AsyncBaseTransport):
    """Wraps a transport; appends a ``Received`` per request to ``received`` (raw body bytes, timings)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner
        self.received: list[Received] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        received = Received(request_key(request.headers), time.perf_counter())
        self.received.append(received)
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            received.error, received.t_end = repr(exc), time.perf_counter()
            raise
        received.status = response.status_code
        stream = _CapturingStream(response.stream, received)  # type: ignore[arg-type]
        if response.status_code >= 400:
            # An SDK that is going to retry closes an error response unread: read it here, so that every
            # error body the client was sent is seen (the SDK then reads the same bytes from memory).
            async for _ in stream:
                pass
            await stream.aclose()
            response.stream = httpx2.ByteStream(received.body)
        else:
            response.stream = stream
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


# -- trace files -----------------------------------------------------------------------------------------


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a trace file as a dict (the test fails on a line that is not JSON)."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def exchange_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that each stand for one HTTP exchange, in file order.

    Per the recorder: a ``model_call`` for a turn's final attempt (not the ``from_attempts`` summaries of
    attempts already written), and an ``error`` carrying a ``request_key`` for an attempt the SDK
    retries. The ``error`` that follows a failed final ``model_call`` belongs to that same exchange.
    """
    return [
        record
        for record in records
        if (record["kind"] == "model_call" and not record.get("from_attempts"))
        or (record["kind"] == "error" and "request_key" in record)
    ]


def files_under(*roots: Path) -> Iterator[Path]:
    """Every file under the given folders (and the given files)."""
    for root in roots:
        if root.is_file():
            yield root
        elif root.is_dir():
            yield from (path for path in sorted(root.rglob("*")) if path.is_file())


def secret_hits(secrets: list[str], *roots: Path) -> list[str]:
    """``file: secret`` for every secret found in the bytes of any file under ``roots`` (also as the JSON-
    or URL-escaped forms a writer might produce)."""
    hits = []
    for path in files_under(*roots):
        data = path.read_bytes()
        for secret in secrets:
            forms = {secret.encode(), orjson.dumps(secret)[1:-1], urllib.parse.quote(secret).encode()}
            if any(form in data for form in forms):
                hits.append(f"{path}: {secret}")
    return hits
