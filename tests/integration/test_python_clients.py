"""Agent frameworks in the wild, recorded through the proxy against the fake upstream and replayed with the
upstream gone: smolagents (``ToolCallingAgent`` over ``OpenAIModel``), llama-index (``FunctionAgent`` with a
``FunctionTool`` over its ``OpenAI`` LLM), google-adk (``LlmAgent`` through ``LiteLlm`` on the OpenAI wire) and
crewai (an ``Agent`` with a tool over Anthropic, through its ``LLM`` class and litellm).

Each must give one trace per session, with its model calls, tool calls and tool results, and the same output
when replayed. The frameworks are not in the ``test`` extra (their trees are large and pin versions the test
lock does not have: README "Layout and dependencies"); each test skips, saying so, when its framework is not
installed: ``pip install -e '.[clients]'`` (crewai: ``.[clients-crewai]``, in a virtual environment of its own).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import load_trace

#: The frameworks would try the network for telemetry and litellm for its model cost map: off (loopback only).
OFFLINE = ("CREWAI_DISABLE_TELEMETRY", "CREWAI_DISABLE_TRACKING", "ANONYMIZED_TELEMETRY", "HF_HUB_OFFLINE",
           "LITELLM_LOCAL_MODEL_COST_MAP", "DO_NOT_TRACK")  # fmt: skip


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OFFLINE:
        monkeypatch.setenv(name, "true")

WEATHER = {"Paris": "sunny, 21°C", "北京": "晴，25°C"}


def weather_of(city: str) -> str:
    return WEATHER.get(city, "unknown")


def record_then_replay(script: Any, tmp_path: Path, run: Callable[[str], Any]) -> tuple[Any, Any, Path]:
    """``run(proxy_url)`` recorded against the fake upstream, then replayed with the upstream stopped."""
    out = tmp_path / "rec"
    with FakeUpstream(script) as upstream:
        config = ProxyConfig(upstream=upstream.url, out_dir=out, redactor=Redactor())
        with RunningProxy(config) as proxy:
            recorded = run(proxy.url)
        assert upstream.requests, "the session went upstream"
    config = ProxyConfig(mode="replay", replay_dir=out, redactor=Redactor())
    with RunningProxy(config) as proxy:
        replayed = run(proxy.url)
        assert proxy.proxy.misses == []
    return recorded, replayed, out


def one_trace(out: Path) -> Any:
    """The one agent-session trace in ``out`` (a side file of other routes does not count)."""
    files = [path for path in sorted(out.glob("*.jsonl")) if not path.name.endswith("-other-routes.jsonl")]
    assert len(files) == 1, [path.name for path in files]
    return load_trace(files[0])


def assert_weather_session(trace: Any, city: str, model_calls: int) -> None:
    """One model call per turn, the weather tool called once, its result recorded and paired."""
    calls = trace.calls()
    weather = [call for call in calls if call.name == "get_weather"]
    assert len(weather) == 1, [(call.name, call.input) for call in calls]
    assert weather[0].input == {"city": city}
    assert weather[0].result is not None and WEATHER[city] in weather[0].result_text
    assert len(trace.kind("model_call")) == model_calls
    assert trace.stats().llm_calls == model_calls


# -- smolagents -----------------------------------------------------------------------------------------------


def test_smolagents_tool_calling_agent(tmp_path: Path) -> None:
    smolagents = pytest.importorskip("smolagents", reason="smolagents is not installed (pip install -e '.[clients]')")

    @smolagents.tool
    def get_weather(city: str) -> str:
        """The weather of a city.

        Args:
            city: the city's name
        """
        return weather_of(city)

    script = by_turn([
        tool_use_reply(ToolUse("get_weather", {"city": "Paris"}), text="Let me look it up."),
        tool_use_reply(ToolUse("final_answer", {"answer": "Paris is sunny, 21°C."})),
    ])  # fmt: skip

    def run(url: str) -> str:
        model = smolagents.OpenAIModel(model_id="gpt-test", api_base=url + "/v1", api_key="k")
        agent = smolagents.ToolCallingAgent(tools=[get_weather], model=model, max_steps=3, verbosity_level=0)
        return str(agent.run("What is the weather in Paris?"))

    recorded, replayed, out = record_then_replay(script, tmp_path, run)
    assert recorded == replayed == "Paris is sunny, 21°C."
    trace = one_trace(out)
    assert_weather_session(trace, "Paris", 2)
    # The history came back as text ("Calling tools:" / "Observation:"); it was read as the call and its result.
    assert [call.name for call in trace.calls()] == ["get_weather", "final_answer"]
    assert [c.stitched for c in trace.kind("model_call")] == ["new", "continuity"]


# -- llama-index ----------------------------------------------------------------------------------------------


def test_llama_index_function_agent(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core", reason="llama-index is not installed (pip install -e '.[clients]')")
    pytest.importorskip("llama_index.llms.openai", reason="llama-index-llms-openai is not installed")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI

    def get_weather(city: str) -> str:
        """The weather of a city."""
        return weather_of(city)

    script = by_turn([tool_use_reply(ToolUse("get_weather", {"city": "北京"})), text_reply("北京今天晴，25°C。")])

    def run(url: str) -> str:
        llm = OpenAI(model="gpt-4o-mini", api_base=url + "/v1", api_key="k", max_retries=0)
        agent = FunctionAgent(tools=[FunctionTool.from_defaults(get_weather)], llm=llm,
                              system_prompt="You answer weather questions.")  # fmt: skip

        async def go() -> str:
            return str(await agent.run("北京天气怎么样？"))

        return asyncio.run(go())

    recorded, replayed, out = record_then_replay(script, tmp_path, run)
    assert recorded == replayed == "北京今天晴，25°C。"
    assert_weather_session(one_trace(out), "北京", 2)


# -- google-adk through LiteLlm -------------------------------------------------------------------------------


def test_google_adk_through_litellm(tmp_path: Path) -> None:
    pytest.importorskip("google.adk", reason="google-adk is not installed (pip install -e '.[clients]')")
    pytest.importorskip("litellm", reason="litellm is not installed (pip install -e '.[clients]')")
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    def get_weather(city: str) -> str:
        """The weather of a city."""
        return weather_of(city)

    script = by_turn([tool_use_reply(ToolUse("get_weather", {"city": "Paris"})), text_reply("Sunny in Paris, 21°C.")])

    def run(url: str) -> str:
        model = LiteLlm(model="openai/gpt-test", api_base=url + "/v1", api_key="k")
        agent = LlmAgent(name="weather", model=model, instruction="Answer weather questions.", tools=[get_weather])
        runner = InMemoryRunner(agent=agent, app_name="weather")

        async def go() -> str:
            session = await runner.session_service.create_session(app_name="weather", user_id="u")
            message = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
            texts = []
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                if event.content and event.content.parts:
                    texts.extend(part.text for part in event.content.parts if part.text)
            return "".join(texts)

        return asyncio.run(go())

    recorded, replayed, out = record_then_replay(script, tmp_path, run)
    assert recorded == replayed == "Sunny in Paris, 21°C."
    assert_weather_session(one_trace(out), "Paris", 2)


# -- crewai over Anthropic ------------------------------------------------------------------------------------


def test_crewai_agent_over_anthropic(tmp_path: Path) -> None:
    crewai = pytest.importorskip("crewai", reason="crewai is not installed (pip install -e '.[clients-crewai]')")
    from crewai.tools import tool

    @tool("get_weather")
    def get_weather(city: str) -> str:
        """The weather of a city."""
        return weather_of(city)

    script = by_turn([
        tool_use_reply(ToolUse("get_weather", {"city": "Paris"}), text="I will check the weather."),
        text_reply("Thought: I now know the final answer\nFinal Answer: Paris is sunny, 21°C."),
    ])  # fmt: skip

    def run(url: str) -> str:
        llm = crewai.LLM(model="anthropic/claude-test", base_url=url, api_key="k")
        agent = crewai.Agent(role="Weather reporter", goal="Report the weather", backstory="You report weather.",
                             tools=[get_weather], llm=llm, verbose=False)  # fmt: skip
        task = crewai.Task(description="What is the weather in Paris?", expected_output="The weather.", agent=agent)
        return str(crewai.Crew(agents=[agent], tasks=[task], verbose=False).kickoff())

    recorded, replayed, out = record_then_replay(script, tmp_path, run)
    assert recorded == replayed
    assert "sunny" in recorded
    assert_weather_session(one_trace(out), "Paris", 2)
