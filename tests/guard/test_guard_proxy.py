"""The guard in a recording proxy driven by the official SDKs: budgets, refusals the SDKs do not retry, the
note in each API's shape, and the live sessions endpoint."""

from __future__ import annotations

import ipaddress
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pytest

from tracekit.guard import GuardConfig, LiveGuard
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ToolUse, Usage, text_reply, tool_use_reply

TOOLS = [{"name": "lookup", "description": "look up", "input_schema": {"type": "object"}}]


@contextmanager
def guarded(
    script: list[Any], out: Path, config: dict[str, Any]
) -> Iterator[tuple[FakeUpstream, RunningProxy, LiveGuard]]:
    """A fake upstream playing ``script`` and a recording proxy with a guard of ``config`` in front of it."""
    guard = LiveGuard(GuardConfig.model_validate(config))
    with FakeUpstream(script) as upstream:
        config_ = ProxyConfig(upstream=upstream.url, out_dir=out, redactor=Redactor(), observer=guard)
        with RunningProxy(config_) as proxy:
            yield upstream, proxy, guard


def lines(out: Path) -> list[dict[str, Any]]:
    (path,) = sorted(out.glob("*.jsonl"))
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_a_session_over_its_token_budget_is_stopped_at_the_next_request_and_the_sdk_does_not_retry(
    tmp_path: Path,
) -> None:
    usage = Usage(input_tokens=100, output_tokens=20, cache_creation_input_tokens=0, cache_read_input_tokens=0)
    script = [tool_use_reply(ToolUse("lookup", {"q": i}), usage=usage) for i in range(3)]
    with guarded(script, tmp_path, {"budgets": {"tokens": {"limit": 200, "action": "stop"}}}) as (upstream, proxy, _):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=2,
                                     default_headers={"x-tracekit-session": "budget"})  # fmt: skip
        messages: list[dict[str, Any]] = [{"role": "user", "content": "查一下"}]
        for turn in range(2):  # 120 tokens, then 240: over the budget of 200 after the second answer
            reply = client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            (call,) = [block for block in reply.content if block.type == "tool_use"]
            messages += [{"role": "assistant", "content": [call.model_dump()]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                       "content": f"结果 {turn}"}]}]  # fmt: skip
        with pytest.raises(anthropic.PermissionDeniedError) as refused:
            client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        assert upstream.script.served == 2  # refused by the proxy, and not retried by the SDK
        proxy.wait_written()
    message = str(refused.value)
    assert "rule tokens, used 240, limit 200" in message and "240 tokens (input + output)" in message
    records = lines(tmp_path)
    (event,) = [r for r in records if r["kind"] == "guard"]
    assert (event["event"], event["rule"], event["action"], event["figures"]) == (
        "budget", "tokens", "stop", {"used": 240, "limit": 200})  # fmt: skip
    calls = [r for r in records if r["kind"] == "model_call"]
    assert [c["status"] for c in calls] == [200, 200, 403] and event["model_call"] == 2


def test_stop_refuses_an_openai_client_too_and_every_later_request_of_the_session(tmp_path: Path) -> None:
    script = [tool_use_reply(ToolUse("lookup", {"q": "x"})) for _ in range(4)]
    with guarded(script, tmp_path, {"budgets": {"model_calls": {"limit": 2}}}) as (upstream, proxy, guard):
        client = openai.OpenAI(base_url=proxy.openai_url, api_key="k", max_retries=2,
                               default_headers={"x-tracekit-session": "calls"})  # fmt: skip
        history: list[Any] = [{"role": "user", "content": "查"}]
        for _ in range(2):
            reply = client.chat.completions.create(model="m", messages=history)
            message = reply.choices[0].message
            history += [message.model_dump(exclude_none=True),
                        *[{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in message.tool_calls or []]]
        for _ in range(2):
            with pytest.raises(openai.PermissionDeniedError, match="rule model_calls, used 3, limit 2"):
                client.chat.completions.create(model="m", messages=history)
        assert upstream.script.served == 2
        status = guard.status()["calls"]
        assert (status["model_calls"], status["tool_calls"], status["stopped"] is not None) == (2, 2, True)


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai_responses"])
def test_the_warn_note_goes_after_the_tool_results_in_each_apis_shape(tmp_path: Path, provider: str) -> None:
    script = [tool_use_reply(ToolUse("lookup", {"q": "x"})) for _ in range(3)] + [text_reply("好")]
    with guarded(script, tmp_path, {"findings": {"repeated_call": {"action": "warn"}}}) as (_, proxy, _):
        headers = {"x-tracekit-session": "warn"}
        if provider == "anthropic":
            claude = anthropic.Anthropic(base_url=proxy.url, api_key="k", default_headers=headers)
            messages: list[Any] = [{"role": "user", "content": "查"}]
            for _ in range(3):
                reply = claude.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
                call = reply.content[-1]
                assert call.type == "tool_use"
                messages += [{"role": "assistant", "content": [call.model_dump()]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                           "content": "同一个结果"}]}]  # fmt: skip
        elif provider == "openai":
            chat = openai.OpenAI(base_url=proxy.openai_url, api_key="k", default_headers=headers)
            history: list[Any] = [{"role": "user", "content": "查"}]
            for _ in range(3):
                message = chat.chat.completions.create(model="m", messages=history).choices[0].message
                history += [message.model_dump(exclude_none=True),
                            *[{"role": "tool", "tool_call_id": c.id, "content": "同一个结果"}
                              for c in message.tool_calls or []]]  # fmt: skip
        else:
            responses = openai.OpenAI(base_url=proxy.openai_url, api_key="k", default_headers=headers)
            items: list[Any] = [{"role": "user", "content": "查"}]
            for _ in range(3):
                response = responses.responses.create(model="m", input=items)
                calls = [item for item in response.output if item.type == "function_call"]
                items += [*[c.model_dump(exclude_none=True) for c in calls],
                          *[{"type": "function_call_output", "call_id": c.call_id, "output": "同一个结果"}
                            for c in calls]]  # fmt: skip
        proxy.wait_written()
    records = lines(tmp_path)
    (note,) = [r for r in records if r["kind"] == "intercept" and r["mode"] == "guard_note"]
    assert note["injected"].startswith("tracekit guard: lookup was called once more with the same arguments")
    sent = next(r for r in records if r["kind"] == "model_call" and r["index"] == note["model_call"])["request"]
    if provider == "anthropic":
        assert sent["messages"][-1]["content"][-1] == {"type": "text", "text": note["injected"]}
        assert sent["messages"][-1]["content"][0]["type"] == "tool_result"
    elif provider == "openai":
        assert [m["role"] for m in sent["messages"][-2:]] == ["tool", "user"]
        assert sent["messages"][-1]["content"] == note["injected"]
    else:
        assert sent["input"][-2]["type"] == "function_call_output"
        assert sent["input"][-1] == {"role": "user", "content": [{"type": "input_text", "text": note["injected"]}]}


def test_the_sessions_endpoint_lists_live_sessions_with_counts_and_guard_events(tmp_path: Path) -> None:
    script = [tool_use_reply(ToolUse("lookup", {"q": "x"})) for _ in range(3)]
    with guarded(script, tmp_path, {}) as (_, proxy, _):
        claude = anthropic.Anthropic(base_url=proxy.url, api_key="k", default_headers={"x-tracekit-session": "watch"})
        messages: list[Any] = [{"role": "user", "content": "查"}]
        for _ in range(2):
            call = claude.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS).content[-1]  # type: ignore[arg-type]
            assert call.type == "tool_use"
            messages += [{"role": "assistant", "content": [call.model_dump()]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "r"}]}]
        claude.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        with urllib.request.urlopen(proxy.url + "/_tracekit/sessions") as response:
            listed = json.loads(response.read())
    (session,) = listed["sessions"]
    assert (session["name"], session["requests"], session["model_calls"], session["tool_calls"]) == ("watch", 3, 3, 3)
    (event,) = session["guard"]
    assert (event["rule"], event["action"], event["calls"]) == ("repeated_call", "record", [0, 1])


def test_the_sessions_endpoint_keeps_secrets_out(tmp_path: Path) -> None:
    secret = "plain-guard-secret-4242"  # no key pattern catches it: only the configured secret does
    script = [tool_use_reply(ToolUse("lookup", {"user_id": secret})) for _ in range(2)]
    guard = LiveGuard(GuardConfig())
    with FakeUpstream(script) as upstream:
        config = ProxyConfig(upstream=upstream.url, out_dir=tmp_path, redactor=Redactor(secrets=[secret]),
                             observer=guard)
        with RunningProxy(config) as proxy:
            claude = anthropic.Anthropic(base_url=proxy.url, api_key="k", default_headers={"x-tracekit-session": "s"})
            call = claude.messages.create(model="m", max_tokens=64, messages=[{"role": "user", "content": "查"}],
                                          tools=TOOLS).content[-1]  # type: ignore[arg-type]
            assert call.type == "tool_use"
            messages: list[Any] = [
                {"role": "user", "content": "查"},
                {"role": "assistant", "content": [call.model_dump()]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "无"}]},
            ]
            claude.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            with urllib.request.urlopen(proxy.url + "/_tracekit/sessions") as response:
                shown = response.read().decode()
    (session,) = json.loads(shown)["sessions"]
    assert [event["rule"] for event in session["guard"]] == ["ungrounded_argument"]  # the made-up user_id
    assert secret not in shown


def own_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None when it has none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the outgoing interface
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if ipaddress.ip_address(address).is_loopback or address == "0.0.0.0" else address


def test_the_sessions_endpoint_refuses_other_clients(tmp_path: Path) -> None:
    address = own_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to connect from")
    guard = LiveGuard(GuardConfig())
    config = ProxyConfig(upstream="http://127.0.0.1:9", out_dir=tmp_path, observer=guard)
    with RunningProxy(config, host="0.0.0.0") as proxy:  # as with --host 0.0.0.0 --allow-remote
        port = proxy.url.rsplit(":", 1)[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_tracekit/sessions") as response:
            assert (response.status, json.loads(response.read())) == (200, {"sessions": []})
        # The same proxy asked from the machine's own network address: the client is not loopback.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://{address}:{port}/_tracekit/sessions")
    assert refused.value.code == 403
    assert "loopback clients only" in refused.value.read().decode()


def test_loopback_peers_are_told_apart_from_others() -> None:
    from tracekit.proxy.observers import is_loopback_peer

    assert is_loopback_peer("127.0.0.1") and is_loopback_peer("::1") and is_loopback_peer("::ffff:127.0.0.1")
    assert not is_loopback_peer("192.0.2.7") and not is_loopback_peer("::ffff:192.0.2.7")
    assert not is_loopback_peer(None) and not is_loopback_peer("x")
