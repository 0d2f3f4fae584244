"""The stdio wrapper relays every line as it came: the bytes the client reads through ``tracekit mcp record`` are
the bytes the server writes, for requests, notifications (progress tokens, cancellation), batches and lines that
are not JSON-RPC at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mcp_helpers import server_command, tracekit

from tracekit.trace import load_trace

LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
    b'"clientInfo":{"name":"raw","version":"0"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},'
    b'"_meta":{"progressToken":"p1"}}}',
    b'[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"maps_weather","arguments":{"city":"\xe5\x8c\x97\xe4\xba\xac"}}},'
    b'{"jsonrpc":"2.0","id":8,"method":"ping"}]',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"zz","reason":"user"}}',
    b"this is not JSON",
    b'{"jsonrpc":"2.0","id":9,"method":"tools/list"}',
]


#: The requests the server answers (initialize, "a", 9; it ignores the batch and the line that is not JSON).
ANSWERS = 3


def _talk(command: list[str]) -> bytes:
    """Send every line, read the answers, then close stdin (the spec's shutdown) and return all the server wrote.
    Closing only once answered: a server that sees its input end stops, answered or not."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"\n".join(LINES) + b"\n")
    process.stdin.flush()
    answers = [process.stdout.readline() for _ in range(ANSWERS)]
    process.stdin.close()
    rest = process.stdout.read()
    process.wait()
    return b"".join(answers) + rest


def test_the_client_reads_exactly_what_the_server_wrote(tmp_path: Path) -> None:
    direct = _talk(server_command())
    relayed = _talk(tracekit("mcp", "record", "--out", str(tmp_path), "--", *server_command()))
    # Line for line (the server answers concurrent requests in the order they finish, in both runs alike).
    assert sorted(relayed.splitlines()) == sorted(direct.splitlines())
    assert b'"id":"a"' in direct and b'"id":9' in direct  # the server answered around the odd lines
    [path] = sorted(tmp_path.glob("*.jsonl"))
    trace = load_trace(path)
    methods = [e.method for e in trace.kind("mcp_exchange")]
    assert {"initialize", "notifications/initialized", "tools/call", "notifications/cancelled", "tools/list"} <= set(
        methods
    )
    assert trace.calls()[0].name == "add" and trace.calls()[0].result_text == "3"


def test_the_trace_is_written_as_it_goes(tmp_path: Path) -> None:
    """Killed mid-session (SIGKILL: nothing runs at exit), the wrapper has already written every answered call."""
    process = subprocess.Popen(tracekit("mcp", "record", "--out", str(tmp_path), "--", *server_command()),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    for line in (LINES[0], LINES[1], LINES[2]):
        process.stdin.write(line + b"\n")
        process.stdin.flush()
    answers = [process.stdout.readline() for _ in range(2)]  # wait for the initialize and tools/call answers
    assert b'"id":"a"' in answers[1]
    process.kill()
    process.wait()
    [path] = sorted(tmp_path.glob("*.jsonl"))
    [call] = load_trace(path).calls()
    assert call.name == "add" and call.result_text == "3" and call.result.latency_ms is not None
