"""The stdio wrapper: the agent launches ``tracekit mcp record -- CMD`` in place of the MCP server.

The wrapper launches CMD, relays each newline-delimited JSON-RPC line both ways as it came (the MCP stdio
transport: https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#stdio), lets the server's
stderr through untouched, and shows every message to a ``ToolSideRecorder`` (or a replay ``Responder``, which
answers in place of a server). Shutdown follows the spec's order: when the client closes the wrapper's input,
the server's input is closed and the wrapper waits for the server to exit, then exits with its status.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from tracekit.mcp.jsonrpc import encode, parse_messages
from tracekit.mcp.recorder import ToolSideRecorder
from tracekit.mcp.replay import Responder

#: Longest line read (a tools/list with many schemas, a tool returning an image): 64 MiB.
LINE_LIMIT = 64 * 1024 * 1024

Write = Callable[[bytes], Awaitable[None]]


async def stdio_pipes() -> tuple[asyncio.StreamReader, Write, Callable[[], None]]:
    """This process's stdin as a reader, and a writer and a closer for its stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb"))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(os.dup(1), "wb"))
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    lock = asyncio.Lock()

    async def write(data: bytes) -> None:
        async with lock:
            if writer.is_closing():
                return
            writer.write(data)
            await writer.drain()

    return reader, write, writer.close


async def record_stdio(command: list[str], open_recorder: Callable[[], ToolSideRecorder]) -> int:
    """Run ``command`` as the MCP server behind this process's stdio, recording into the trace ``open_recorder``
    starts once the server is running (a command that cannot start leaves no trace); the server's exit status."""
    try:
        server = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LINE_LIMIT
        )
    except OSError as exc:
        print(f"tracekit mcp record: cannot start {command[0]!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    assert server.stdin is not None and server.stdout is not None
    recorder = open_recorder()
    try:
        return await _relay(server, recorder)
    finally:
        recorder.close()


async def _relay(server: asyncio.subprocess.Process, recorder: ToolSideRecorder) -> int:
    assert server.stdin is not None and server.stdout is not None
    client_in, client_write, client_close = await stdio_pipes()
    server_in = server.stdin
    cut = asyncio.Event()
    delayed: set[asyncio.Task[None]] = set()

    def later(delay: float, data: bytes) -> None:
        async def send() -> None:
            await asyncio.sleep(delay)  # a latency fault: the tool answers slowly on purpose
            await client_write(data)

        task = asyncio.create_task(send())
        delayed.add(task)
        task.add_done_callback(delayed.discard)

    async def client_to_server() -> None:
        while line := await client_in.readline():
            messages, batch = parse_messages(line)
            forward: list[dict[str, Any]] = []
            changed = False
            for message in messages:
                decision = recorder.from_client(message)
                if decision.cut:
                    cut.set()
                    return
                if decision.reply is not None:
                    changed = True
                    if decision.delay_s:
                        later(decision.delay_s, encode(decision.reply))
                    else:
                        await client_write(encode(decision.reply))
                if decision.forward:
                    forward.append(message)
            if not changed:
                server_in.write(line)
            elif forward:
                server_in.write(encode(forward if batch else forward[0]))
            await server_in.drain()
        server_in.close()

    async def server_to_client() -> None:
        assert server.stdout is not None
        while line := await server.stdout.readline():
            messages, batch = parse_messages(line)
            out: list[dict[str, Any]] = []
            changed = False
            for message in messages:
                delay, relayed = recorder.from_server(message)
                if relayed is not message or delay:
                    changed = True
                    if relayed is not None and delay:
                        later(delay, encode(relayed))
                        continue
                if relayed is not None:
                    out.append(relayed)
            if not changed:
                await client_write(line)
            elif out:
                await client_write(encode(out if batch else out[0]))

    upstream = asyncio.create_task(client_to_server())
    downstream = asyncio.create_task(server_to_client())
    cutting = asyncio.create_task(cut.wait())
    await asyncio.wait({downstream, cutting}, return_when=asyncio.FIRST_COMPLETED)
    if cut.is_set():
        server.terminate()
    if delayed:
        await asyncio.wait(delayed)
    upstream.cancel()
    cutting.cancel()
    client_close()
    status = await server.wait()
    return status if status >= 0 else 0


async def replay_stdio(responder: Responder) -> int:
    """Answer the client on this process's stdio from recordings, until it closes its side; 0."""
    client_in, client_write, client_close = await stdio_pipes()
    delayed: set[asyncio.Task[None]] = set()

    async def send(delay: float, data: bytes) -> None:
        await asyncio.sleep(delay)  # a latency or timeout fault of --case
        await client_write(data)

    while line := await client_in.readline():
        messages, batch = parse_messages(line)
        replies: list[dict[str, Any]] = []
        for message in messages:
            decision, reply = responder.answer(message)
            for notice in responder.notices:  # a call's recorded progress, before its answer
                await client_write(encode(notice))
            if decision.cut:
                client_close()
                return 0
            for out in (decision.reply, reply):
                if out is None:
                    continue
                if decision.delay_s:
                    task = asyncio.create_task(send(decision.delay_s, encode(out)))
                    delayed.add(task)
                    task.add_done_callback(delayed.discard)
                else:
                    replies.append(out)
        if replies:
            if batch:
                await client_write(encode(replies))
            else:
                for reply in replies:
                    await client_write(encode(reply))
    if delayed:
        await asyncio.wait(delayed)
    client_close()
    return 0
