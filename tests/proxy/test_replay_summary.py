"""``tracekit replay`` says at exit what it answered, as ``tracekit record`` says what it wrote: the requests
answered from the recordings (by the rung of the replay ladder that matched them) and the misses."""

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
    assert last == "tracekit replay: answered 2 model requests (exact 2, volatile 0, session 0); 1 missed", last


def test_a_replay_nobody_asked_says_so(tmp_path: Path) -> None:
    record_hello(tmp_path)
    process, _ = start("replay", str(tmp_path), "--port", "0")
    status, _ = stop(process)
    assert status == 0 and process.stderr is not None
    said = process.stderr.read()
    assert "tracekit replay: answered 0 model requests (exact 0, volatile 0, session 0); 0 missed" in said
