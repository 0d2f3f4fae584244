"""Secrets in the forms round three of the attacks used (issue 27 C): a key the model streams in 3- and
4-character deltas, a registered key the upstream writes JSON-escaped (``\\/``, ``\\uXXXX``), two ``x-api-key``
headers, vendor key headers (``Ocp-Apim-Subscription-Key``, Azure ``api-key``, ``x-goog-api-key``, SigV4
``Authorization`` and ``X-Amz-Security-Token``), and the recorder's own ``AWS_SECRET_ACCESS_KEY`` pasted into
a tool result.

Real producers: ``tracekit record`` as a child process (with the secret in its environment), the anthropic
and openai SDKs and httpx as clients, the scripted fake upstream streaming in small deltas, and an aiohttp
upstream writing its JSON as PHP's ``json_encode`` does (``/`` as ``\\/``, non-ASCII as ``\\uXXXX``). Then
``replay`` serves the recordings, and ``analyze --html``, ``export otel`` and ``show`` read them: every byte
written (traces, side files, HTML, the OTel export, show's output, every log) is scanned for every secret in
every form: raw, JSON- and URL-escaped, and split as the deltas split it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from aiohttp import web

from tracekit.testing import FakeRequest, FakeUpstream, Reply, text_reply

from .support import MisbehavingUpstream, clean_env, files_under, secret_hits, tracekit_command, wait_for_line

STREAMED_PATTERN_KEY = "sk-ant-api03-streamedpiecesQ7x9Z2"  # a key-shaped text, streamed in 3-char deltas
HEADER_KEY = "tkform-headerkey-5e1c9a07b3"  # sent as x-api-key, streamed back in 4-char deltas
FIRST_OF_TWO = "tkform-firstofttwo-c0ffee42"  # the first of two x-api-key headers
SECOND_OF_TWO = "tkform-secondoftwo-d15ea5e9"
APIM_KEY = "tkform-apim/8d2b6f4e1a"  # Ocp-Apim-Subscription-Key, with a slash the upstream writes as \/
AZURE_KEY = "tkform-azure-3f9a2c7d11"  # api-key
GEMINI_KEY = "tkform-gemini-77b1e0c4aa"  # x-goog-api-key
AMZ_TOKEN = "tkform-amz-session-token-9c4e"  # X-Amz-Security-Token
SIGV4_SIGNATURE = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
SIGV4 = ("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/us-east-1/bedrock/aws4_request, "
         f"SignedHeaders=host;x-amz-date, Signature={SIGV4_SIGNATURE}")  # fmt: skip
AWS_SECRET = "tkform/AwsSecretAccessKey+EXAMPLEKEY9"  # in the recorder's environment only
SECRETS = [STREAMED_PATTERN_KEY, HEADER_KEY, FIRST_OF_TWO, SECOND_OF_TWO, APIM_KEY, AZURE_KEY, GEMINI_KEY,
           AMZ_TOKEN, SIGV4_SIGNATURE, AWS_SECRET]  # fmt: skip


def _script(request: FakeRequest) -> Reply:
    last = request.messages[-1] if request.messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if "repeat my key" in text:
        return text_reply(f"你的 key 是 {HEADER_KEY}。", chunk_size=4)
    if "make up a key" in text:
        return text_reply(f"试试 {STREAMED_PATTERN_KEY} 吧", chunk_size=3)
    return text_reply(f"收到：{text}", chunk_size=3)  # echoes what was pasted, split in pieces


async def _php_upstream(request: web.Request) -> web.StreamResponse:
    """Answers every model request with the Ocp-Apim key in its text, as PHP's json_encode writes JSON."""
    reply = {"id": "msg_php", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
             "content": [{"type": "text", "text": f"订阅 key：{APIM_KEY}"}],
             "usage": {"input_tokens": 3, "output_tokens": 5}}  # fmt: skip
    body = json.dumps(reply).replace("/", "\\/")  # ensure_ascii: non-ASCII as \uXXXX; then "/" as "\/"
    assert "\\/" in body and "\\u" in body
    return web.Response(text=body, content_type="application/json")


class _Recorder:
    def __init__(self, upstream: str, out: Path, logs: Path, name: str, env: dict[str, str]) -> None:
        logs.mkdir(parents=True, exist_ok=True)
        self.stdout, stderr = logs / f"{name}.stdout.log", logs / f"{name}.stderr.log"
        args = ["record", "--upstream", upstream, "--port", "0", "--out", str(out)]
        with open(self.stdout, "wb") as o, open(stderr, "wb") as e:
            self.process = subprocess.Popen(tracekit_command(args), stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                                            env=env)  # fmt: skip
        self.url = wait_for_line(self.stdout, "listening on ", self.process).split("listening on ", 1)[1]

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(timeout=20)


def _tracekit(logs: Path, name: str, *args: str) -> None:
    done = subprocess.run(tracekit_command(list(args)), capture_output=True, env=clean_env(), timeout=120)
    (logs / f"{name}.stdout.log").write_bytes(done.stdout)
    (logs / f"{name}.stderr.log").write_bytes(done.stderr)
    assert done.returncode in (0, 1), f"tracekit {' '.join(args)}: {done.stderr.decode()[-1500:]}"


def _agents(url: str) -> None:
    client = anthropic.Anthropic(base_url=url, api_key="tkform-sdk-key-0001", max_retries=0,
                                 default_headers={"x-api-key": HEADER_KEY})  # fmt: skip
    with client.messages.stream(model="claude-x", max_tokens=64, extra_headers={"x-tracekit-session": "streamed"},
                                messages=[{"role": "user", "content": "repeat my key"}]) as stream:
        assert HEADER_KEY in stream.get_final_text()  # the client gets it; the trace must not keep it
    with client.messages.stream(model="claude-x", max_tokens=64, extra_headers={"x-tracekit-session": "pattern"},
                                messages=[{"role": "user", "content": "make up a key"}]) as stream:
        stream.get_final_text()
    # Two x-api-key headers (httpx sends both), the first pasted in the prompt; vendor key headers likewise.
    pasted = f"keys {FIRST_OF_TWO} {AZURE_KEY} {GEMINI_KEY} {AMZ_TOKEN} {SIGV4_SIGNATURE} and {AWS_SECRET}"
    headers = [("x-api-key", FIRST_OF_TWO), ("x-api-key", SECOND_OF_TWO), ("api-key", AZURE_KEY),
               ("x-goog-api-key", GEMINI_KEY), ("X-Amz-Security-Token", AMZ_TOKEN), ("Authorization", SIGV4),
               ("anthropic-version", "2023-06-01"), ("x-tracekit-session", "headers")]  # fmt: skip
    body = {"model": "claude-x", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": pasted}]}  # fmt: skip
    with httpx.Client(timeout=30) as raw:
        answer = raw.post(url + "/v1/messages", json=body, headers=headers)
        assert answer.status_code == 200
    # The recorder's own AWS secret, pasted into a tool result by an openai agent.
    oa = openai.OpenAI(base_url=url + "/v1", api_key="tkform-openai-key-0002", max_retries=0,
                       default_headers={"x-tracekit-session": "tool-result"})  # fmt: skip
    messages: Any = [
        {"role": "user", "content": "读一下环境"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_env", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}"},
    ]  # fmt: skip
    for _ in oa.chat.completions.create(model="gpt-x", messages=messages, stream=True):
        pass


def _apim_agent(url: str) -> None:
    client = anthropic.Anthropic(base_url=url, api_key="tkform-sdk-key-0003", max_retries=0,
                                 default_headers={"Ocp-Apim-Subscription-Key": APIM_KEY})  # fmt: skip
    reply = client.messages.create(model="claude-x", max_tokens=64, extra_headers={"x-tracekit-session": "apim"},
                                   messages=[{"role": "user", "content": "what is my subscription?"}])  # fmt: skip
    assert APIM_KEY in reply.content[0].text  # json_encode's "\/" read back as "/"


def _replay(traces: Path, logs: Path) -> list[str]:
    """Replay the recordings to the SDK; returns the texts it was served."""
    stdout, stderr = logs / "replay.stdout.log", logs / "replay.stderr.log"
    with open(stdout, "wb") as o, open(stderr, "wb") as e:
        process = subprocess.Popen(tracekit_command(["replay", str(traces), "--port", "0"]), stdout=o, stderr=e,
                                   stdin=subprocess.DEVNULL, env=clean_env())  # fmt: skip
    try:
        url = wait_for_line(stdout, "listening on ", process).split("listening on ", 1)[1]
        client = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0)
        texts = []
        for prompt in ("repeat my key", "make up a key"):
            with client.messages.stream(model="claude-x", max_tokens=64,
                                        messages=[{"role": "user", "content": prompt}]) as stream:  # fmt: skip
                texts.append(stream.get_final_text())
        return texts
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    root = tmp_path_factory.mktemp("secret-forms")
    logs, traces = root / "logs", root / "traces"
    with FakeUpstream(_script) as upstream:
        recorder = _Recorder(upstream.url, traces, logs, "record", {**clean_env(), "AWS_SECRET_ACCESS_KEY": AWS_SECRET})
        try:
            _agents(recorder.url)
        finally:
            assert recorder.stop() == 0
        sent = [request.headers for request in upstream.requests]
    assert any(h.get("x-api-key") == SECOND_OF_TWO for h in sent)  # the keys did reach the upstream
    with MisbehavingUpstream({("POST", "/v1/messages"): _php_upstream}) as php:
        recorder = _Recorder(php.url, traces, logs, "record-php", clean_env())
        try:
            _apim_agent(recorder.url)
        finally:
            assert recorder.stop() == 0
    served = _replay(traces, logs)
    _tracekit(logs, "analyze", "analyze", str(traces), "--json", str(root / "results.json"),
              "--html", str(root / "html"), "--no-progress")  # fmt: skip
    _tracekit(logs, "export", "export", "otel", str(traces), "--out", str(root / "otel.json"), "--with-content")
    for path in sorted(traces.glob("*.jsonl")):
        _tracekit(logs, f"show-{path.stem}", "show", str(path), "--full")
    yield root, served


def _split_forms(secret: str) -> list[str]:
    """The secret's pieces as 3- and 4-character deltas put them on the wire (a JSON string per piece)."""
    forms = []
    for size in (3, 4):
        for offset in range(size):
            pieces = [secret[:offset], *(secret[i:i + size] for i in range(offset, len(secret), size))]
            forms.append('"},"'.join(piece for piece in pieces if piece))
    return forms


def test_every_kind_of_output_was_written(written: tuple[Path, list[str]]) -> None:
    root, _ = written
    assert len(list((root / "traces").glob("*.jsonl"))) == 5
    assert (root / "otel.json").stat().st_size and any((root / "html").rglob("*.html"))
    assert [path for path in (root / "logs").glob("show-*.stdout.log") if path.stat().st_size]


@pytest.mark.parametrize("secret", SECRETS)
def test_no_secret_in_any_byte_written(written: tuple[Path, list[str]], secret: str) -> None:
    root, _ = written
    assert secret_hits([secret], root) == []
    escaped = [secret.replace("/", "\\/"), json.dumps(secret)[1:-1]]
    for path in files_under(root):
        data = path.read_text(encoding="utf-8", errors="replace")
        assert not [form for form in escaped if form in data], path


def test_no_streamed_key_survives_in_its_pieces(written: tuple[Path, list[str]]) -> None:
    root, _ = written
    traces = "".join(path.read_text(encoding="utf-8") for path in (root / "traces").glob("*.jsonl"))
    assert "[REDACTED]" in traces
    for secret in (STREAMED_PATTERN_KEY, HEADER_KEY):
        joined = "".join(_joined_deltas(traces))
        assert secret not in joined


def _joined_deltas(traces: str) -> list[str]:
    """The text deltas of every recorded stream, joined per stream."""
    import orjson

    joined = []
    for line in traces.splitlines():
        record = orjson.loads(line)
        sse = record.get("sse")
        if not sse:
            continue
        pieces = []
        for event_line in sse.split("\n"):
            if event_line.startswith("data: {"):
                data = orjson.loads(event_line[6:])
                delta = data.get("delta") or {}
                pieces.append(delta.get("text", "") if isinstance(delta, dict) else "")
                for choice in data.get("choices") or []:
                    pieces.append((choice.get("delta") or {}).get("content") or "")
        joined.append("".join(pieces))
    return joined


def test_replay_serves_the_redacted_stream(written: tuple[Path, list[str]]) -> None:
    _, served = written
    assert served[0] == "你的 key 是 [REDACTED]。"
    assert served[1] == "试试 [REDACTED] 吧"
