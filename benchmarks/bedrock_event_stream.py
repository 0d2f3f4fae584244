"""Reading Amazon Bedrock's event stream: what the recording proxy does with each ConverseStream answer
(tracekit's own frame decoder with both CRC checks, then the Converse assembler), against botocore's
``EventStreamBuffer`` (the peer: what boto3 runs on the client side) decoding the same bytes, payloads parsed
as JSON.

The stream is made by ``bedrock_converse``'s ``render_stream`` from a body of one text block of SIZE
characters (one ``contentBlockDelta`` per 64 characters, Chinese and ASCII), then cut into 16 KB chunks as a
socket would deliver it. Each reader is timed over the whole stream, best of REPEAT runs.

    python benchmarks/bedrock_event_stream.py --sizes 1 10 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable

from botocore.eventstream import EventStreamBuffer

from tracekit.providers import get_provider

CHUNK = 16 * 1024
TEXT = "晴天" * 16 + "sunny day, " * 3  # 32 + 33 characters


def stream_bytes(megachars: float) -> bytes:
    """A ConverseStream answer whose text is about ``megachars`` million characters."""
    text = (TEXT * (int(megachars * 1_000_000) // len(TEXT) + 1))[: int(megachars * 1_000_000)]
    body = {"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}, "metrics": {"latencyMs": 1}}  # fmt: skip
    return get_provider("bedrock_converse").render_stream(body)


def chunks_of(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def tracekit_read(chunks: list[bytes]) -> int:
    """The proxy's work: parse every chunk into events and assemble the Converse body."""
    provider = get_provider("bedrock_converse")
    parser, assembler = provider.stream_parser(), provider.stream_assembler()
    for chunk in chunks:
        for event in parser.feed(chunk):
            assembler.feed(event)
    body = assembler.body()
    assert assembler.done
    return len(body["output"]["message"]["content"][0]["text"])


def botocore_read(chunks: list[bytes]) -> int:
    """botocore's decoder on the same chunks, each payload parsed as JSON (what boto3 then does)."""
    buffer = EventStreamBuffer()
    events = 0
    for chunk in chunks:
        buffer.add_data(chunk)
        for message in buffer:
            json.loads(message.payload)
            events += 1
    return events


def best(run: Callable[[list[bytes]], int], chunks: list[bytes], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run(chunks)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1.0, 10.0], help="million characters of text")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, chunks of {CHUNK // 1024} KB, best of {args.repeat}\n")
    print("| text (M chars) | stream (MB) | events | tracekit parse + assemble (s) | botocore decode + json (s) "
          "| ratio |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        data = stream_bytes(size)
        chunks = chunks_of(data)
        events = botocore_read(chunks)
        ours = best(tracekit_read, chunks, args.repeat)
        peer = best(botocore_read, chunks, args.repeat)
        print(f"| {size:g} | {len(data) / 1e6:.1f} | {events:,} | {ours:.3f} | {peer:.3f} | {ours / peer:.2f}x |")


if __name__ == "__main__":
    main()
