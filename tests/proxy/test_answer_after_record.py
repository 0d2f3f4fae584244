"""What the client saw survives ``kill -9``: the end of an answer reaches the client only once the exchange is
in its session's file, even while that file is still being created in the recorder's helper thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tracekit.proxy import trace_files

from .helpers import read_records, recording

#: How long the file's creation waits for the client to have its answer (the fixed proxy never lets it).
_HOLD_SECONDS = 3


def test_the_answer_reaches_the_client_once_it_is_in_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client_has_answer = threading.Event()
    writer = trace_files.TraceWriter

    def slow_to_create(*args: Any, **kwargs: Any) -> Any:
        client_has_answer.wait(timeout=_HOLD_SECONDS)  # returns at once when the client had its answer first
        return writer(*args, **kwargs)

    monkeypatch.setattr(trace_files, "TraceWriter", slow_to_create)
    out = tmp_path / "rec"
    with recording(lambda request: "好的。", out) as (_, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="tk-seen-key-0001", max_retries=0)
        reply = client.messages.create(model="claude-x", max_tokens=16,
                                       messages=[{"role": "user", "content": "北京明天天气怎么样？"}])  # fmt: skip
        on_disk = [record.get("response", {}).get("id") for path in out.glob("*.jsonl")
                   for record in read_records(path) if record["kind"] == "model_call"]  # fmt: skip
        client_has_answer.set()
    assert reply.id in on_disk, "the client had the answer before it was in the trace file"
