"""Where answers come from: the upstream API, a recording, or a fault. All look the same to the
code that sends them to the client: a status, headers, and a body or a stream of chunks.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import aiohttp
import orjson
from multidict import CIMultiDict
from yarl import URL

from tracekit.intercepts import Fault
from tracekit.providers.base import Provider
from tracekit.proxy.decoding import ACCEPTED_ENCODINGS, Decoder, ResponseTooLarge
from tracekit.proxy.exchange import Exchange
from tracekit.proxy.headers import client_response_headers, upstream_request_headers
from tracekit.proxy.limits import MAX_RESPONSE_BYTES
from tracekit.proxy.options import DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT
from tracekit.proxy.request_secrets import SecretSink

SSE_CONTENT_TYPE = "text/event-stream"
#: Errors reading an upstream body after its response began: a timeout (``read_timeout``) or a cut (``cut``).
UPSTREAM_READ_ERRORS = (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, asyncio.TimeoutError)


def read_failure(exc: BaseException) -> str:
    """The transport failure an error reading an upstream body means."""
    return "read_timeout" if isinstance(exc, asyncio.TimeoutError) else "cut"


class Answer:
    """A response to pass on: status and headers, then either ``read()`` (JSON) or ``chunks()`` (SSE)."""

    def __init__(
        self,
        status: int,
        headers: CIMultiDict[str],
        *,
        body: bytes | None = None,
        chunks: list[bytes] | None = None,
        delays: list[float] | None = None,
        first_delay: float = 0.0,
        cut: bool = False,
        failure: str | None = None,
        failure_detail: str | None = None,
        stream_type: str = SSE_CONTENT_TYPE,
    ) -> None:
        self.status = status
        self.stream_type = stream_type
        """The content type of a stream in the answer's wire format (``provider.STREAM_CONTENT_TYPE``)."""
        self.headers = headers
        self.failure = failure
        """'connect', 'connect_timeout', 'read_timeout' or 'reset': no response at all (``status`` is then the
        one the proxy answers with)."""
        self.failure_detail = failure_detail
        self.cut = cut
        """A recorded answer that ended with the connection cut: cut it again after the chunks."""
        self._body = body
        self._chunks = chunks
        self._delays = delays
        self._first_delay = first_delay

    @property
    def streamed(self) -> bool:
        """Whether the answer is a stream (SSE, or the wire format's own stream type)."""
        return self.headers.get("content-type", "").startswith(self.stream_type)

    async def read(self) -> bytes:
        """The whole body (JSON answers)."""
        if self._first_delay > 0:
            await asyncio.sleep(self._first_delay)
        return self._body or b""

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's chunks as they come (SSE answers)."""
        if self._first_delay > 0:
            await asyncio.sleep(self._first_delay)
        for index, chunk in enumerate(self._chunks or [self._body or b""]):
            if self._delays is not None and index < len(self._delays) and self._delays[index] > 0:
                await asyncio.sleep(self._delays[index])
            yield chunk

    def close(self) -> None:
        """Release what the answer holds (an upstream connection)."""


class UpstreamAnswer(Answer):
    """An answer streaming from the upstream API, decoded within bounds (``decoding``)."""

    def __init__(self, response: aiohttp.ClientResponse, max_bytes: int = MAX_RESPONSE_BYTES,
                 stream_type: str = SSE_CONTENT_TYPE) -> None:
        super().__init__(response.status, client_response_headers(response.headers), stream_type=stream_type)
        self._response = response
        self._max_bytes = max_bytes

    async def read(self) -> bytes:
        """The whole decoded body; ``ResponseTooLarge`` past ``max_bytes`` (nothing more is read or kept)."""
        decoder = Decoder(self._response.headers.get("Content-Encoding"))
        parts = []
        async for chunk in self._response.content.iter_any():
            for piece in decoder.feed(chunk):
                if decoder.decoded > self._max_bytes:
                    raise ResponseTooLarge(
                        f"the upstream body is larger than {self._max_bytes:,} bytes once decoded "
                        f"(--max-response-bytes); {decoder.describe()} when the proxy stopped reading"
                    )
                parts.append(piece)
        return b"".join(parts)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The decoded body as it comes, in pieces of at most ``decoding.PIECE`` bytes."""
        decoder = Decoder(self._response.headers.get("Content-Encoding"))
        async for chunk in self._response.content.iter_any():
            for piece in decoder.feed(chunk):
                yield piece

    def close(self) -> None:
        self._response.close()


class UpstreamClient:
    """Forwards requests to the upstream API over one pooled aiohttp session (connections are reused).

    A base URL with credentials (``https://user:password@gateway``) has them taken out of the URL and sent as
    ``Authorization: Basic ...`` on requests whose agent sent no Authorization header of its own; the
    credentials are registered as secrets.
    """

    def __init__(
        self,
        base_url: str,
        redactor: SecretSink,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        base_url, self._basic_auth = split_credentials(base_url, redactor)
        self.base_url = base_url.rstrip("/")
        self.redactor = redactor
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._max_response_bytes = max_response_bytes
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        """Open the connection pool (inside the running event loop)."""
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=60, ttl_dns_cache=300)
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout,
                                            sock_read=self._read_timeout)  # fmt: skip
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),  # a proxy keeps no cookies between its clients
                timeout=timeout,
                auto_decompress=False,  # decoded by ``decoding``, within bounds
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            )

    async def close(self) -> None:
        """Close the pool (a later request opens a new one)."""
        session, self._session = self._session, None  # (a request arriving meanwhile opens its own)
        if session is not None:
            await session.close()

    @property
    def pool_open(self) -> bool:
        """Whether the connection pool is open (it opens with the first request)."""
        return self._session is not None

    def url_for(self, route: str, query: str) -> str:
        """The upstream URL of a route (a base URL that already ends in ``/v1`` is not doubled)."""
        base = self.base_url
        if base.endswith("/v1") and route.startswith("/v1/"):
            base = base[:-3]
        return f"{base}{route}?{query}" if query else f"{base}{route}"

    async def open(self, exchange: Exchange) -> Answer:
        """Send ``exchange``'s request upstream; the answer's body is read by the caller."""
        request = exchange.request
        return await self.request("POST", request.upstream_path or request.route, request.query,
                                  exchange.turn.sent.raw, request.headers,
                                  stream_type=exchange.provider.STREAM_CONTENT_TYPE)  # fmt: skip

    async def request(self, method: str, route: str, query: str, body: bytes, headers: Mapping[str, str], *,
                      stream_type: str = SSE_CONTENT_TYPE) -> Answer:
        """Send one request upstream (client headers filtered, secrets registered; a ``route`` with
        percent-encoding is sent as it is)."""
        if self._session is None:
            await self.start()
        assert self._session is not None
        forwarded = upstream_request_headers(headers, self.redactor)
        # Only the encodings the proxy decodes within bounds (the client gets the body decoded either way).
        forwarded.popall("accept-encoding", None)
        forwarded["Accept-Encoding"] = ACCEPTED_ENCODINGS
        if self._basic_auth is not None and "authorization" not in forwarded:
            forwarded["authorization"] = self._basic_auth
        url: str | URL = self.url_for(route, query)
        if "%" in route:  # as the client encoded it (yarl would decode ``%3A``, which a SigV4 signature covers)
            url = URL(str(url), encoded=True)
        try:
            response = await self._session.request(
                method, url, data=body or None, headers=forwarded, allow_redirects=False,
            )  # fmt: skip
        except aiohttp.ConnectionTimeoutError:
            detail = f"cannot connect upstream: no connection within {self._connect_timeout:g} s (--connect-timeout)"
            return Answer(504, CIMultiDict(), failure="connect_timeout", failure_detail=detail)
        except asyncio.TimeoutError:
            detail = f"upstream sent no response within {self._read_timeout:g} s (--read-timeout)"
            return Answer(504, CIMultiDict(), failure="read_timeout", failure_detail=detail)
        except aiohttp.ClientConnectorError as exc:
            return Answer(502, CIMultiDict(), failure="connect", failure_detail=f"cannot connect upstream: {exc}")
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientPayloadError) as exc:
            detail = f"upstream closed the connection before responding: {exc!r}"
            return Answer(502, CIMultiDict(), failure="reset", failure_detail=detail)
        return UpstreamAnswer(response, self._max_response_bytes, stream_type)


    async def socket(self, route: str, query: str, headers: Mapping[str, str]) -> aiohttp.ClientWebSocketResponse:
        """Open a WebSocket to the upstream's ``route`` with the client's headers (filtered as for a request;
        aiohttp makes the handshake's own). Raises ``aiohttp.WSServerHandshakeError`` when refused."""
        if self._session is None:
            await self.start()
        assert self._session is not None
        forwarded = upstream_request_headers(headers, self.redactor)
        for name in list(forwarded):
            if name.lower().startswith("sec-websocket-"):
                forwarded.popall(name, None)
        if self._basic_auth is not None and "authorization" not in forwarded:
            forwarded["authorization"] = self._basic_auth
        protocols = [part.strip() for part in headers.get("sec-websocket-protocol", "").split(",") if part.strip()]
        return await self._session.ws_connect(self.url_for(route, query), headers=forwarded, protocols=protocols,
                                              autoping=True, max_msg_size=self._max_response_bytes)  # fmt: skip


def split_credentials(url: str, redactor: SecretSink) -> tuple[str, str | None]:
    """``url`` without ``user:password@``, and the Basic Authorization value they make (None when the URL has
    none). The credentials are registered with ``redactor`` (RFC 7617: base64 of ``user:password``)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    credentials = f"{unquote(user)}:{unquote(password)}"
    basic = "Basic " + base64.b64encode(credentials.encode()).decode("ascii")
    for secret in (basic, credentials, userinfo, unquote(password)):
        redactor.add_secret(secret)
    return urlunsplit(parts._replace(netloc=host)), basic


def json_answer(status: int, body: Any, headers: dict[str, str] | None = None, *, first_delay: float = 0.0) -> Answer:
    """An answer with a JSON body (errors the proxy makes: faults, replay misses, unreachable upstream)."""
    all_headers: CIMultiDict[str] = CIMultiDict({"content-type": "application/json"})
    all_headers.update(headers or {})
    return Answer(status, all_headers, body=orjson.dumps(body), first_delay=first_delay)


def fault_answer(provider: Provider, fault: Fault) -> Answer:
    """The provider-shaped error an ``http_error`` fault answers with."""
    if isinstance(fault.body, dict):
        body: Any = fault.body
    else:
        message = fault.body if isinstance(fault.body, str) else f"tracekit fault: HTTP {fault.status}"
        body = provider.error_body(fault.status, message)
    headers = {"x-tracekit-fault": "http_error"}
    if fault.should_retry is not None:
        headers["x-should-retry"] = "true" if fault.should_retry else "false"
    return json_answer(fault.status, body, headers)
