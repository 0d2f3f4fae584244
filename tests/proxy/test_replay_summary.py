"""``tracekit replay`` says at exit what it answered, as ``tracekit record`` says what it wrote: requests,
hits, misses, and what to do about the misses."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest

from .test_cli import HELLO, record_hello, start, stop


def test_replay_prints_hits_and_misses_at_exit(tmp_path: Path) -> None:
    record_hello(tmp_path)
    process, url = start("replay", str(tmp_path), "--port", "0")
    try:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=60)
        for _ in range(2):
            assert client.messages.create(model="m", max_tokens=10, messages=HELLO).content[0].text == "你好！"
        with pytest.raises(anthropic.NotFoundError):
            client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "再"}])
    finally:
        status, _ = stop(process)
    assert status == 0
    assert process.stderr is not None
    last = process.stderr.read().strip().splitlines()[-1]
    assert last.startswith("tracekit replay: 3 requests, 2 answered from the recordings, 1 misses"), last
    assert "--on-miss record --upstream URL" in last


def test_a_replay_nobody_asked_says_so(tmp_path: Path) -> None:
    record_hello(tmp_path)
    process, _ = start("replay", str(tmp_path), "--port", "0")
    status, _ = stop(process)
    assert status == 0 and process.stderr is not None
    assert "0 requests, 0 answered from the recordings, 0 misses; no request reached the proxy" in process.stderr.read()
