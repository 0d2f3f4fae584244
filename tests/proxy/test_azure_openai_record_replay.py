"""The openai SDK's ``AzureOpenAI`` client (deployment paths, ``?api-version=``, the ``api-key`` header) and a
plain ``OpenAI`` client on Azure's ``/openai/v1/`` paths, through ``tracekit record`` to the fake upstream and
``tracekit replay`` with the upstream gone: one trace per session, the same output both times, no key on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from .helpers import of_kind, recording, replaying, trace_records
from .test_responses_record_replay import assert_weather_session, full_history_loop, weather_script
from .test_sdk_record_replay import WEATHER_SCRIPT, openai_loop

KEY = "azure-test-key-0123456789abcdef0123456789abcdef"
API_VERSION = "2024-10-21"
DEPLOYMENT = "gpt-test"  # what the loops name as the model: AzureOpenAI puts it in the path


def azure(url: str) -> openai.AzureOpenAI:
    """``AzureOpenAI`` pointed at ``url`` as its ``azure_endpoint``."""
    return openai.AzureOpenAI(azure_endpoint=url, api_key=KEY, api_version=API_VERSION, max_retries=0)


def azure_v1(url: str) -> openai.OpenAI:
    """A plain ``OpenAI`` client on Azure's v1 API (``{endpoint}/openai/v1/``), as Microsoft's docs show."""
    return openai.OpenAI(base_url=url + "/openai/v1/", api_key=KEY, max_retries=0)


def record_then_replay(tmp_path: Path, script: Any, run: Callable[[str], Any]) -> tuple[Any, Any, list[Any], list[Any]]:
    with recording(script, tmp_path) as (upstream, proxy):
        recorded = run(proxy.url)
        sent = list(upstream.requests)
    traces = [records for records in trace_records(tmp_path) if of_kind(records, "model_call")]
    with replaying(tmp_path) as proxy:  # the upstream is stopped
        replayed = run(proxy.url)
        assert proxy.proxy.misses == []
    written = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    assert written and KEY.encode() not in written, "the api-key never reaches disk"
    return recorded, replayed, traces, sent


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_azure_chat_completions_on_a_deployment_path(tmp_path: Path, stream: bool) -> None:
    recorded, replayed, traces, sent = record_then_replay(
        tmp_path, WEATHER_SCRIPT, lambda url: openai_loop(azure(url), stream))
    assert replayed == recorded
    assert {(r.path, r.query["api-version"], r.headers["api-key"]) for r in sent} == {
        (f"/openai/deployments/{DEPLOYMENT}/chat/completions", API_VERSION, KEY)}, "forwarded as sent"
    (records,) = traces
    calls = of_kind(records, "model_call")
    assert [(c["provider"], c["model"], c["stream"]) for c in calls] == [("azure_openai", DEPLOYMENT, stream)] * 3
    assert [c["input"]["city"] for c in of_kind(records, "tool_call")] == ["北京", "上海", "广州"]
    assert [r["content"] for r in of_kind(records, "tool_result")] == ["晴", "多云", "雨"]


@pytest.mark.parametrize("client", [azure, azure_v1], ids=["AzureOpenAI", "v1"])
def test_azure_responses(tmp_path: Path, client: Callable[[str], openai.OpenAI]) -> None:
    recorded, replayed, traces, sent = record_then_replay(
        tmp_path, weather_script(), lambda url: full_history_loop(client(url), "helper"))
    assert replayed == recorded
    paths = {r.path for r in sent}
    assert paths == ({"/openai/responses"} if client is azure else {"/openai/v1/responses"})
    (records,) = traces
    assert {c["provider"] for c in of_kind(records, "model_call")} == {"azure_openai_responses"}
    # The rest as for the OpenAI Responses API itself: the same wire on another path.
    assert_weather_session([{**r, "provider": "openai_responses"} if r["kind"] == "model_call" else r
                            for r in records])  # fmt: skip


def test_azure_v1_chat_completions(tmp_path: Path) -> None:
    recorded, replayed, traces, sent = record_then_replay(
        tmp_path, WEATHER_SCRIPT, lambda url: openai_loop(azure_v1(url), stream=False))
    assert replayed == recorded
    assert {r.path for r in sent} == {"/openai/v1/chat/completions"}
    (records,) = traces
    assert [c["provider"] for c in of_kind(records, "model_call")] == ["azure_openai"] * 3
