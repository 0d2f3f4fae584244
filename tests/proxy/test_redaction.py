"""API keys never reach disk: the SDKs run with recognizable keys (x-api-key and a bearer token), the
keys even leak into a prompt, and every byte written under the output folder is scanned."""

from __future__ import annotations

from pathlib import Path

import anthropic
import openai

from tracekit.redact import Redactor
from tracekit.testing import text_reply

from .helpers import recording, replaying

# Neither looks like a well-known key format, so only the header registration can catch them.
ANTHROPIC_KEY = "tk-test-anthropic-8f3a9c1e77d2"
OPENAI_KEY = "tk-test-openai-5b6c7d8e9f01"
CONFIGURED = "内部口令-ZEBRA-42-secret"


def scan(folder: Path, *secrets: str) -> list[str]:
    """``file: secret`` for every secret found in any file under ``folder``."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {secret}" for secret in secrets if secret.encode() in data]
    return found


def test_keys_in_headers_and_prompts_are_never_written(tmp_path: Path) -> None:
    redactor = Redactor(secrets=[CONFIGURED])
    # A key is registered when a request carrying it arrives, before anything of that request is written;
    # each prompt leaks keys the proxy has seen by then.
    leaked = f"my keys are {ANTHROPIC_KEY} and {OPENAI_KEY}, password {CONFIGURED}"
    script = [text_reply(f"echo {ANTHROPIC_KEY}"), text_reply("ok")]
    with recording(script, tmp_path, redactor=redactor) as (up, proxy):
        anthropic.Anthropic(base_url=proxy.url, api_key=ANTHROPIC_KEY, max_retries=0).messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": leaked.replace(OPENAI_KEY, "")}]
        )
        openai.OpenAI(base_url=proxy.url + "/v1", api_key=OPENAI_KEY, max_retries=0).chat.completions.create(
            model="m", messages=[{"role": "user", "content": leaked}], extra_headers={"cookie": "session=abcdefgh123"},
        )
    # The keys did go upstream (the agent's key is the upstream's key) ...
    assert ANTHROPIC_KEY in up.requests[0].headers.get("x-api-key", up.requests[0].headers.get("authorization", ""))
    assert up.requests[1].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    # ... and nothing under the output folder holds them.
    assert len(list(tmp_path.glob("*.jsonl"))) == 2
    assert scan(tmp_path, ANTHROPIC_KEY, OPENAI_KEY, CONFIGURED, "abcdefgh123") == []
    assert b"[REDACTED]" in b"".join(p.read_bytes() for p in tmp_path.glob("*.jsonl"))


def test_replay_never_writes_the_keys_either(tmp_path: Path) -> None:
    recorded, replayed = tmp_path / "recorded", tmp_path / "replayed"
    with recording([text_reply("ok")], recorded) as (_, proxy):
        anthropic.Anthropic(base_url=proxy.url, api_key=ANTHROPIC_KEY, max_retries=0).messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": f"key {ANTHROPIC_KEY}"}]
        )
    with replaying(recorded, out_dir=replayed) as proxy:
        anthropic.Anthropic(base_url=proxy.url, api_key=ANTHROPIC_KEY, max_retries=0).messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": f"key {ANTHROPIC_KEY}"}]
        )
        assert proxy.proxy.misses == []
    assert len(list(replayed.glob("*.jsonl"))) == 1
    assert scan(tmp_path, ANTHROPIC_KEY) == []


def test_a_key_leaked_before_the_proxy_saw_it_is_scrubbed_when_the_proxy_stops(tmp_path: Path) -> None:
    with recording([text_reply("ok"), text_reply("ok")], tmp_path) as (_, proxy):
        anthropic.Anthropic(base_url=proxy.url, api_key=ANTHROPIC_KEY, max_retries=0).messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": f"the other key is {OPENAI_KEY}"}]
        )
        openai.OpenAI(base_url=proxy.url + "/v1", api_key=OPENAI_KEY, max_retries=0).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    assert scan(tmp_path, ANTHROPIC_KEY, OPENAI_KEY) == []
    assert not list(tmp_path.glob("*.tmp"))
