"""A new key on every request (issue 27 C): learning a secret scrubs only the files that may hold it, not
every file written so far, and a key pasted before it was learnt is still gone from the file at once."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest

import tracekit.proxy.recorder as recorder_module

from .helpers import recording

SESSIONS = 12
PASTER, PASTED = 4, 9  # session 4 pastes the key that session 9 sends later as its header


def _key(number: int) -> str:
    return f"tk-late-key-{number:04d}x{number * 7919:06d}q"  # each key's longest word is its own


def test_each_new_key_scrubs_only_the_files_that_hold_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scrubbed: list[Path] = []
    real = recorder_module._scrub_quietly

    def counting(path: Path, redactor: object) -> None:
        scrubbed.append(path)
        real(path, redactor)  # type: ignore[arg-type]

    monkeypatch.setattr(recorder_module, "_scrub_quietly", counting)
    out = tmp_path / "rec"
    with recording(["好的。"] * SESSIONS, out) as (_, proxy):
        for number in range(SESSIONS):
            client = anthropic.Anthropic(base_url=proxy.url, api_key=_key(number), max_retries=0)
            text = f"第 {number} 个会话" + (f"，顺便说一下 key 是 {_key(PASTED)}" if number == PASTER else "")
            client.messages.create(model="claude-x", max_tokens=8, messages=[{"role": "user", "content": text}],
                                   extra_headers={"x-tracekit-session": f"s{number:02d}"})  # fmt: skip
            proxy.wait_written()
        during = list(scrubbed)
        pasted_in = (out / f"s{PASTER:02d}.jsonl").read_text(encoding="utf-8")
    # Only the file that held the pasted key was scrubbed while recording (before: every file, for every key).
    assert [path.name for path in during] == [f"s{PASTER:02d}.jsonl"]
    assert _key(PASTED) not in pasted_in and "[REDACTED]" in pasted_in
    for path in out.glob("*.jsonl"):
        assert not any(_key(number) in path.read_text(encoding="utf-8") for number in range(SESSIONS))
