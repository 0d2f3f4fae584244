"""The fake upstream's Gemini routes as google-genai sees them: scripted errors with the API's status names,
and a script file's own ``gemini`` queue."""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from google.genai import errors, types

from tracekit.testing import FakeUpstream, error_reply, load_script


def client_for(url: str) -> genai.Client:
    options = types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key="test-key-not-real", http_options=options)


def test_a_scripted_error_reaches_google_genai_in_the_apis_shape() -> None:
    with FakeUpstream([error_reply(429, message="Resource has been exhausted")]) as up:
        client = client_for(up.url)
        with pytest.raises(errors.ClientError) as caught:
            client.models.generate_content(model="gemini-2.5-flash", contents="你好")
    assert (caught.value.code, caught.value.status, caught.value.message) == (
        429, "RESOURCE_EXHAUSTED", "Resource has been exhausted")


def test_a_script_file_has_a_gemini_queue(tmp_path: Path) -> None:
    script = tmp_path / "replies.yaml"
    script.write_text("gemini:\n  - 双子座的回答\nopenai:\n  - OpenAI 的回答\n", encoding="utf-8")
    with FakeUpstream(load_script(script)) as up:
        client = client_for(up.url)
        answer = client.models.generate_content(model="gemini-2.5-flash", contents="你好")
        counted = client.models.count_tokens(model="gemini-2.5-flash", contents="你好")
    assert answer.text == "双子座的回答" and answer.model_version == "gemini-2.5-flash"
    assert counted.total_tokens and counted.total_tokens > 0
    assert [request.provider for request in up.requests] == ["gemini", None], "countTokens is not scripted"
