"""Passing an answer on to the client, chunk by chunk, while the exchange takes note of it.

``relay`` passes on everything up to the answer's end and returns the ``Ending``: what is still to send
once the exchange is complete (the chunk holding a stream's final event, a JSON body, a closed connection).
The proxy completes the exchange between the two, so the session has moved on before the client can see
the end of the answer and send its next request.

Each chunk of a stream is written to the client first and parsed for the trace after, except a chunk that
may hold the final event (``provider.stream_may_end``) and the chunks after it, which are parsed first.
Failures reach the client the way they happened: an error status with its body, a connection closed before
the response (the client's connection is closed too), a stream cut mid-way (cut again), an in-stream error
event (passed on).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import KW_ONLY, dataclass

from aiohttp import web

from tracekit.providers.base import Provider
from tracekit.proxy import limits
from tracekit.proxy.answers import UPSTREAM_READ_ERRORS, Answer, json_answer, read_failure
from tracekit.proxy.decoding import BodyRefused
from tracekit.proxy.exchange import Exchange, StreamTee
from tracekit.proxy.headers import kept_response_headers

#: Bytes relayed between two turns given to the rest of the event loop.
_YIELD_EVERY = 1024 * 1024


@dataclass(eq=False)
class Ending:
    """What is left to send once the exchange is complete."""

    answer: Answer | None = None
    _: KW_ONLY
    response: web.StreamResponse | None = None
    """The stream response already started (None: nothing sent yet)."""
    body: bytes | None = None
    """A whole body to send (JSON answers)."""
    held: bytes | None = None
    """The chunk holding the stream's final event, held back until the exchange is complete."""
    rest: AsyncIterator[bytes] | None = None
    """What follows the final event (passed on, not recorded)."""
    drop: bool = False
    """Close the client's connection where it stands (after ``held``), as upstream's was."""

    async def finish(self, request: web.Request) -> web.StreamResponse:
        """Send what is left; a client gone by now changes nothing (the exchange is already recorded)."""
        try:
            if self.body is not None and self.answer is not None:
                response = web.Response(status=self.answer.status, headers=self.answer.headers, body=self.body)
                await response.prepare(request)
                await response.write_eof()
                return drop_connection(request, response) if self.drop else response
            if self.response is None:
                return drop_connection(request)
            if self.held is not None:
                await self.response.write(self.held)
            if self.drop:
                return drop_connection(request, self.response)
            if self.rest is not None:
                try:
                    async for chunk in self.rest:
                        await self.response.write(chunk)
                except UPSTREAM_READ_ERRORS:
                    pass  # bytes after the final event: the answer is whole already
            await self.response.write_eof()
            return self.response
        except ConnectionError:
            return self.response or web.Response()
        finally:
            if self.answer is not None:
                self.answer.close()


async def relay(request: web.Request, exchange: Exchange, answer: Answer,
                max_kept: int = limits.MAX_KEPT_STREAM_BYTES) -> Ending:
    """Pass ``answer`` on up to its end, noting it in ``exchange.received`` (see the module docstring)."""
    received = exchange.received
    received.status = answer.status
    received.headers = kept_response_headers(answer.headers.items())
    if answer.failure is not None:
        received.fail(answer.failure, answer.failure_detail or answer.failure)
        if answer.failure == "reset":
            return Ending(drop=True)
        message = f"tracekit proxy: {answer.failure_detail}"
        answer = json_answer(answer.status, exchange.provider.error_body(answer.status, message))
    else:
        received.answered = True
    try:
        if not answer.streamed:
            return await _relay_body(exchange, answer)
        return await _relay_stream(request, exchange, answer, max_kept)
    except BaseException:
        answer.close()
        raise


async def _relay_body(exchange: Exchange, answer: Answer) -> Ending:
    received = exchange.received
    try:
        body = await answer.read()
    except UPSTREAM_READ_ERRORS as exc:
        received.fail(read_failure(exc), f"upstream body cut: {exc!r}")
        answer.close()
        return Ending(drop=True)
    except BodyRefused as exc:  # a body too large once decoded (a gzip bomb), or in an encoding not asked for
        answer.close()
        received.fail(exc.failure, str(exc))
        received.status = 502
        received.t_first = received.t_end = time.perf_counter()
        message = f"tracekit proxy: {exc}"
        refused = json_answer(502, exchange.provider.error_body(502, message), {"x-should-retry": "false"})
        return Ending(refused, body=await refused.read())
    received.t_first = received.t_end = time.perf_counter()
    received.body = body
    return Ending(answer, body=body, drop=answer.cut)


async def _relay_stream(request: web.Request, exchange: Exchange, answer: Answer, max_kept: int) -> Ending:
    provider = exchange.provider
    received = exchange.received
    tee = received.tee = StreamTee(provider, exchange.t0, max_kept)
    response = web.StreamResponse(status=answer.status, headers=answer.headers)
    faults = exchange.turn.faults
    stream_fault = faults.cut_after_events is not None or faults.stream_error is not None
    chunks = _event_chunks(answer.chunks(), provider) if stream_fault else answer.chunks().__aiter__()
    events_sent = 0
    unyielded = 0
    ending = False
    held: bytes | None = None
    rest: AsyncIterator[bytes] | None = None
    try:
        await response.prepare(request)
        while True:
            try:
                chunk = await chunks.__anext__()
            except StopAsyncIteration:
                break
            except UPSTREAM_READ_ERRORS as exc:
                received.fail(read_failure(exc), f"upstream stream cut: {exc!r}")
                break
            except BodyRefused as exc:  # not decodable: cut for the client, as it was for the proxy
                received.fail(exc.failure, str(exc))
                break
            now = time.perf_counter()
            if received.t_first is None:
                received.t_first = now
            unyielded += len(chunk)
            if unyielded >= _YIELD_EVERY:
                # A fast upstream and client never make the loop wait: let other requests (/health) run.
                unyielded = 0
                await asyncio.sleep(0)
            if stream_fault:
                if faults.cut_after_events is not None and events_sent >= faults.cut_after_events:
                    received.fail("fault_cut", "stream_cut fault")
                    break
                error = faults.stream_error
                if error is not None and events_sent >= error.after_events:
                    held = provider.error_event(error.error_type, error.message)
                    tee.feed(held, now)
                    received.t_end = now
                    break
                events_sent += 1
            # Once a chunk may hold the final event, every later one is parsed first too: a long final event
            # (the Responses API's carries the whole response) comes in several chunks, its name in the first.
            ending = ending or provider.stream_may_end(chunk)
            if ending:
                tee.feed(chunk, now)
                if tee.assembler.done:
                    held, rest, received.t_end = chunk, chunks, now
                    break
                await response.write(chunk)
            else:
                await response.write(chunk)
                tee.feed(chunk, now)
    except ConnectionError:
        received.client_gone = True
    if received.t_end is None:
        received.t_end = time.perf_counter()
    tee.close(received.t_end)
    if received.client_gone:
        answer.close()
        return Ending(response=response, drop=True)
    cut = received.failure in ("cut", "fault_cut", "read_timeout", "undecodable") or answer.cut
    return Ending(answer, response=response, held=held, rest=rest, drop=cut)


async def _event_chunks(chunks: AsyncIterator[bytes], provider: Provider) -> AsyncIterator[bytes]:
    """The stream re-chunked into whole events (only when a fault counts events)."""
    splitter = provider.stream_splitter()
    async for chunk in chunks:
        for event in splitter.feed(chunk):
            yield event
    if splitter.rest():
        yield splitter.rest()


def drop_connection(request: web.Request, response: web.StreamResponse | None = None) -> web.StreamResponse:
    """Close the client's connection where it stands, as the upstream's was."""
    if request.transport is not None:
        request.transport.abort()
    return response if response is not None else web.Response()
