"""The fake upstream's HTTP server: aiohttp routes, delivery with delays and faults, lifecycle.

Run it inside the current event loop (``await up.astart()`` / ``async with``) or in a background thread
with its own loop (``up.start()`` / ``with``), which is what synchronous SDK clients need.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from functools import partial

import orjson
from aiohttp import web

from tracekit._fake import anthropic_wire, bedrock_wire, openai_wire, responses_wire
from tracekit._fake.replies import ConnectionReset, ErrorReply, MessageReply, Reply, error_reply
from tracekit._fake.request import FakeRequest, Provider
from tracekit._fake.response_store import ResponseStore
from tracekit._fake.script import Script, ScriptLike
from tracekit._fake.threads import ThreadStore
from tracekit._fake.wire import FakeIds, WireResponse
from tracekit.constants import HEALTH_PATH
from tracekit.loop_thread import LoopThread, ThreadServed

ROUTES: dict[str, Provider] = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "openai",
    "/v1/responses": "openai_responses",
    "/model/{model}/{operation:converse|converse-stream}": "bedrock_converse",
    "/model/{model}/{operation:invoke|invoke-with-response-stream}": "bedrock_invoke",
}
SERVER_HEADER = "tracekit-fake-upstream"


class FakeUpstream(ThreadServed):
    """A scripted fake of the Anthropic Messages, OpenAI Chat Completions and OpenAI Responses APIs on loopback.

    Serves ``POST /v1/messages``, ``POST /v1/chat/completions``, ``POST /v1/responses`` (and
    ``POST /v1/conversations`` for the conversations it keeps) and
    ``GET /_tracekit/health``. Every request
    (health checks aside) is appended to ``requests`` before it is answered. Ids and fake token counts are
    deterministic per instance. Example::

        with FakeUpstream([text_reply("你好")]) as up:
            client = anthropic.Anthropic(base_url=up.url, api_key="x")
            client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
            assert up.requests[0].body["messages"][0]["content"] == "hi"
    """

    def __init__(self, script: ScriptLike, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = Script.of(script)
        self.host = host
        self.requests: list[FakeRequest] = []
        #: Exceptions raised by a script function (each answered with a 500 ``api_error``).
        self.errors: list[BaseException] = []
        self.threads = ThreadStore()
        #: Stored Responses API responses, for ``previous_response_id``.
        self.responses = ResponseStore()
        self._requested_port = port
        self._port: int | None = None
        self._ids = FakeIds()
        self._runner: web.AppRunner | None = None
        self._thread: LoopThread | None = None
        self._route_of: dict[object, Provider] = {}

    # -- addresses ---------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (after start)."""
        if self._port is None:
            raise RuntimeError("the fake upstream is not started")
        return self._port

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:54321``: the anthropic SDK's ``base_url``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """``url + "/v1"``: the openai SDK's ``base_url``."""
        return self.url + "/v1"

    def requests_for(self, provider: Provider) -> list[FakeRequest]:
        """The requests received on one provider's route, in order."""
        return [request for request in self.requests if request.provider == provider]

    # -- lifecycle in the current event loop ---------------------------------------------------------------

    def app(self) -> web.Application:
        """The aiohttp application (to run it some other way, e.g. with aiohttp's test server)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get(HEALTH_PATH, self._health)
        for path, provider in ROUTES.items():
            self._route_of[app.router.add_post(path, self._serve).resource] = provider
        app.router.add_post("/v1/conversations", self._create_conversation)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        return app

    async def astart(self) -> FakeUpstream:
        """Bind and start serving in the running event loop."""
        if self._runner is not None:
            raise RuntimeError("the fake upstream is already started")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._requested_port))
        self._port = sock.getsockname()[1]
        runner = web.AppRunner(self.app(), handle_signals=False, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        self._runner = runner
        return self

    async def aclose(self) -> None:
        """Stop serving; in-flight responses get up to a second to finish."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> FakeUpstream:
        return await self.astart()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- lifecycle in a background thread ------------------------------------------------------------------

    def start(self) -> FakeUpstream:
        """Start serving from a background thread with its own event loop; returns when bound."""
        if self._thread is not None:
            raise RuntimeError("the fake upstream is already started")
        self._thread = LoopThread("tracekit-fake-upstream")
        try:
            self._thread.run(self.astart(), timeout=10)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop serving and join the background thread."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop(self.aclose(), timeout=10)

    # -- handlers ------------------------------------------------------------------------------------------

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "fake_upstream": True})

    async def _create_conversation(self, request: web.Request) -> web.Response:
        """``POST /v1/conversations`` (the Responses API's kept conversations): always answered, not scripted."""
        fake = await self._receive(request, None)
        return web.json_response(self.responses.create_conversation(fake.body if isinstance(fake.body, dict) else {}))

    async def _not_found(self, request: web.Request) -> web.StreamResponse:
        await self._receive(request, None)
        error = error_reply(
            404,
            "not_found_error",
            f"tracekit fake upstream: no route {request.method} {request.path}",
            should_retry=False,
        )
        return await self._deliver(request, self._render_error("anthropic", error))

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        provider = self._route_of[request.match_info.route.resource]
        fake = await self._receive(request, provider)
        body = fake.body
        if not isinstance(body, dict):
            error = error_reply(
                400, "invalid_request_error", "the request body is not a JSON object", should_retry=False
            )
            return await self._deliver(request, self._render_error(provider, error))
        if provider in ("openai", "bedrock_converse", "bedrock_invoke"):
            fake.messages = list(body.get("messages") or [])
            return await self._answer(request, fake, provider)
        if provider == "openai_responses":
            fake.messages, missing = self.responses.resolve(body)
            if missing is not None:
                return await self._deliver(request, self._render_error(provider, missing))
            return await self._answer(request, fake, provider)
        fake.messages, thread_error = self.threads.resolve(body)
        if thread_error is not None:
            return await self._deliver(request, self._render_error(provider, thread_error))
        try:
            return await self._answer(request, fake, provider)
        finally:
            self.threads.release(body)

    async def _receive(self, request: web.Request, provider: Provider | None) -> FakeRequest:
        raw = await request.read()
        try:
            body = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            body = None
        headers: dict[str, str] = {}
        for name, value in request.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        fake = FakeRequest(
            index=len(self.requests),
            method=request.method,
            path=request.path,
            headers=headers,
            body=body,
            raw=raw,
            provider=provider,
            query=dict(request.query),
            raw_path=request.raw_path.split("?", 1)[0],
        )
        self.requests.append(fake)
        return fake

    async def _answer(
        self,
        request: web.Request,
        fake: FakeRequest,
        provider: Provider,
    ) -> web.StreamResponse:
        try:
            reply: Reply = self.script.next_reply(fake)
        except Exception as exc:  # a user's script function: report it to the client and keep serving
            self.errors.append(exc)
            reply = error_reply(
                500,
                "api_error",
                f"tracekit fake upstream: the script function raised {exc!r}",
                should_retry=False,
            )
        if isinstance(reply, ConnectionReset):
            await asyncio.sleep(reply.first_byte_delay)
            if request.transport is not None:
                request.transport.abort()
            return web.Response()
        if isinstance(reply, ErrorReply):
            return await self._deliver(request, self._render_error(provider, reply), reply.first_byte_delay)
        wire = self._render_message(provider, reply, fake)
        before_last_write = None
        if wire.message is not None and reply.fault is None:
            store = self.responses.record if provider == "openai_responses" else self.threads.record_reply
            before_last_write = partial(store, fake.body, fake.messages, wire.message)
        return await self._deliver(
            request, wire, reply.first_byte_delay, reply.event_delay, before_last_write
        )

    def _render_message(self, provider: Provider, reply: MessageReply, fake: FakeRequest) -> WireResponse:
        if provider == "anthropic":
            return anthropic_wire.render_message(reply, fake, self._ids, self._ids.next("msg_fake_"))
        if provider == "openai_responses":
            return responses_wire.render_message(reply, fake, self._ids)
        if provider == "bedrock_converse":
            return bedrock_wire.render_converse(reply, fake, self._ids)
        if provider == "bedrock_invoke":
            return bedrock_wire.render_invoke(reply, fake, self._ids)
        return openai_wire.render_message(reply, fake, self._ids)

    def _render_error(self, provider: Provider, error: ErrorReply) -> WireResponse:
        if provider == "anthropic":
            return anthropic_wire.render_error(error, self._ids.next("req_fake_"))
        if provider in ("bedrock_converse", "bedrock_invoke"):
            return bedrock_wire.render_error(error, self._ids.next("req-fake-"))
        return openai_wire.render_error(error, self._ids.next("req_fake_"))

    async def _deliver(
        self,
        request: web.Request,
        wire: WireResponse,
        first_byte_delay: float = 0.0,
        event_delay: float = 0.0,
        before_last_write: Callable[[], None] | None = None,
    ) -> web.StreamResponse:
        """Send ``wire``, applying delays and cuts. ``before_last_write`` runs just before the final bytes
        of a response that is sent whole."""
        if first_byte_delay > 0:
            await asyncio.sleep(first_byte_delay)
        headers = {"server": SERVER_HEADER, **wire.headers}
        response = web.StreamResponse(status=wire.status, headers=headers)
        if request.method == "HEAD":  # the head only (RFC 9110 9.3.2): a body would be read as the next response
            if wire.events is None:
                response.content_length = len(wire.body)
            await response.prepare(request)
            await response.write_eof()
            return response
        try:
            if wire.events is None:
                response.content_length = len(wire.body)
                await response.prepare(request)
                if wire.cut_body_at is not None:
                    await response.write(wire.body[: wire.cut_body_at])
                    return _cut(request, response)
                if before_last_write is not None:
                    before_last_write()
                await response.write(wire.body)
            else:
                await response.prepare(request)
                last = len(wire.events) - 1
                for index, frame in enumerate(wire.events):
                    if index > 0 and event_delay > 0:
                        await asyncio.sleep(event_delay)
                    if index == wire.cut_event_at:
                        await response.write(frame[: len(frame) // 2])
                        return _cut(request, response)
                    if index == last and before_last_write is not None:
                        before_last_write()
                    await response.write(frame)
            await response.write_eof()
        except ConnectionError:  # the client went away mid-response
            pass
        return response


def _cut(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    """Close the connection where it stands: the client sees an incomplete body."""
    if request.transport is not None:
        request.transport.close()
    return response
