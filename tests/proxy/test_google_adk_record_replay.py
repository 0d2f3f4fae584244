"""Google ADK (``google-adk``: an ``LlmAgent`` with a function tool, run by its ``Runner``) over the Gemini
wire, through ``tracekit record`` to the fake upstream and ``tracekit replay`` with the upstream gone: one
trace for the session with its calls, tool calls and results, and the same events both times."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models import Gemini
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from .helpers import of_kind, recording, replaying, trace_records
from .test_gemini_record_replay import KEY, MODEL, SCRIPT, get_weather

# google-genai's own aiohttp session class (ADK runs the async client), not ours.
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")


async def run_agent(url: str, streaming: bool) -> list[tuple[str, list[dict[str, Any]]]]:
    """One user turn of a weather agent; each event's author and parts (ADK's own call ids and timestamps,
    new each run, left out)."""
    model = Gemini(model=MODEL, base_url=url, client_kwargs={"api_key": KEY})
    agent = LlmAgent(name="weather", model=model, instruction="你是天气助手，回答要简短。", tools=[get_weather])
    runner = Runner(app_name="weather", agent=agent, session_service=InMemorySessionService(),
                    auto_create_session=True)  # fmt: skip
    message = types.Content(role="user", parts=[types.Part(text="北京和上海天气怎么样？")])
    config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
    events = []
    async for event in runner.run_async(user_id="u", session_id="s", new_message=message, run_config=config):
        if event.content is not None and not event.partial:
            parts = [part.model_dump(mode="json", exclude_none=True,
                                     exclude={"function_call": {"id"}, "function_response": {"id"}})
                     for part in event.content.parts or []]  # fmt: skip
            events.append((event.author, parts))
    return events


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "sse"])
def test_an_adk_agent_is_one_trace_and_replays_equal(tmp_path: Path, streaming: bool) -> None:
    with recording(SCRIPT, tmp_path) as (upstream, proxy):
        recorded = asyncio.run(run_agent(proxy.url, streaming))
        assert len(upstream.requests) == 2
    with replaying(tmp_path) as proxy:  # the upstream is stopped
        replayed = asyncio.run(run_agent(proxy.url, streaming))
        assert proxy.proxy.misses == []
    assert replayed == recorded
    assert recorded[-1] == ("weather", [{"text": "北京晴，上海多云。"}])
    (records,) = [records for records in trace_records(tmp_path) if of_kind(records, "model_call")]
    calls = of_kind(records, "model_call")
    assert [(c["provider"], c["model"], c["stream"], c["stitched"]) for c in calls] == [
        ("gemini", MODEL, streaming, "new"), ("gemini", MODEL, streaming, "continuity")]
    assert [(t["name"], t["input"]) for t in of_kind(records, "tool_call")] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    assert [(r["content"], r["call_index"]) for r in of_kind(records, "tool_result")] == [("晴", 0), ("多云", 1)]
