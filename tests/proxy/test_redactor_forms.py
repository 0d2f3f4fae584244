"""The redactor's own guarantees behind the proxy's (issue 27 C): every JSON-escaped spelling of a registered
secret, thousands of secrets at once, a secret split across stream deltas, every value of a repeated header,
the vendors' key headers and the recorder's secret environment variables."""

from __future__ import annotations

import json

import orjson
import pytest

from tracekit.proxy.headers import register_secrets
from tracekit.redact import REPLACEMENT, Redactor, is_secret_header
from tracekit.redact.forms import environment_secrets
from tracekit.redact.stream import redact_stream

SECRET = "tkunit-key/密钥<&>-0042"


@pytest.mark.parametrize("written", [
    SECRET,
    SECRET.replace("/", "\\/"),
    json.dumps(SECRET)[1:-1],                                 # ensure_ascii: \uXXXX beyond ASCII
    json.dumps(SECRET)[1:-1].replace("/", "\\/"),             # ... and PHP's "\/"
    json.dumps(SECRET)[1:-1].upper().replace("TKUNIT-KEY", "tkunit-key").replace("\\U", "\\u"),  # upper-case hex
    SECRET.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"),  # Go's HTML escaping
    SECRET.replace("/", "\\u002f"),
])  # fmt: skip
def test_every_spelling_a_json_writer_gives_is_redacted(written: str) -> None:
    redactor = Redactor(secrets=[SECRET])
    text = f'{{"text":"key: {written} end"}}'
    assert redactor.redact_text(text) == f'{{"text":"key: {REPLACEMENT} end"}}'
    assert redactor.redact_bytes(text.encode()) == f'{{"text":"key: {REPLACEMENT} end"}}'.encode()


def test_thousands_of_secrets_are_all_found() -> None:
    redactor = Redactor()
    keys = [f"Bearer tkunit-{number:05d}-a9b8c7d6" for number in range(3000)]
    for key in keys:
        redactor.add_secret(key)
    text = " | ".join(key.split(" ", 1)[1] for key in keys[::997])
    assert redactor.redact_text(text) == " | ".join([REPLACEMENT] * len(keys[::997]))


def _stream(pieces: list[str]) -> str:
    events = [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
              for piece in pieces]  # fmt: skip
    return "".join(f"event: content_block_delta\ndata: {orjson.dumps(e).decode()}\n\n" for e in events)


@pytest.mark.parametrize("size", [1, 3, 4, 7])
def test_a_secret_split_across_deltas_is_redacted_in_the_joined_text(size: int) -> None:
    redactor = Redactor(secrets=[SECRET])
    text = f"我的 key 是 {SECRET}，还有 sk-ant-api03-abcdefghijklmnop 别说"
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    cleaned = redact_stream(_stream(pieces), redactor)
    lines = [line for line in cleaned.split("\n") if line.startswith("data: ")]
    joined = "".join(orjson.loads(line[6:])["delta"]["text"] for line in lines)
    assert joined == f"我的 key 是 {REPLACEMENT}，还有 {REPLACEMENT} 别说"


def test_a_stream_without_secrets_keeps_its_bytes() -> None:
    stream = _stream(["你好", "，世界"])
    assert redact_stream(stream, Redactor(secrets=[SECRET])) is stream


def test_every_value_of_a_repeated_secret_header_is_registered() -> None:
    redactor = Redactor()
    register_secrets([("x-api-key", "tkunit-first-000001"), ("X-Api-Key", "tkunit-second-00002")], redactor)
    assert redactor.redact_text("tkunit-first-000001 tkunit-second-00002") == f"{REPLACEMENT} {REPLACEMENT}"


VENDOR_HEADERS = ["Ocp-Apim-Subscription-Key", "api-key", "x-goog-api-key", "Authorization", "X-Amz-Security-Token",
                  "X-Functions-Key", "X-Auth-Token", "x-vendor-secret"]  # fmt: skip


@pytest.mark.parametrize("name", VENDOR_HEADERS)
def test_vendor_key_headers_are_secret(name: str) -> None:
    assert is_secret_header(name)


def test_sigv4_signature_and_credential_are_secrets_of_their_own() -> None:
    redactor = Redactor()
    redactor.add_secret("AWS4-HMAC-SHA256 Credential=AKIDUNIT0001/20250101/us-east-1/bedrock/aws4_request, "
                        "SignedHeaders=host, Signature=0123456789abcdef0123")  # fmt: skip
    assert redactor.redact_text("sig 0123456789abcdef0123") == f"sig {REPLACEMENT}"


def test_the_recorders_secret_environment_variables() -> None:
    environ = {"AWS_SECRET_ACCESS_KEY": "tkunit/aws+secret", "AWS_SESSION_TOKEN": "tkunit-session-tok",
               "GITHUB_TOKEN": "ghp_tkunit00000", "PGPASSWORD": "tkunit-password", "HOME": "/root/somewhere",
               "SHORT_TOKEN": "abc"}  # fmt: skip
    assert sorted(environment_secrets(environ)) == sorted(
        ["tkunit/aws+secret", "tkunit-session-tok", "ghp_tkunit00000", "tkunit-password"])
