"""Amazon Bedrock through ``tracekit record`` to the fake upstream, then through ``tracekit replay`` with the
upstream gone, with the real boto3 ``bedrock-runtime`` client (SigV4-signed, loopback only): ``converse`` and
``converse_stream`` (the binary event stream), ``invoke_model`` and ``invoke_model_with_response_stream``
with Anthropic Messages bodies, and the anthropic SDK's ``AnthropicBedrock`` client.

Every session asks for the weather of three cities: one call, then two in one turn, then the answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
WEATHER = {"北京": "晴", "上海": "多云", "广州": "雨"}
FINAL = "北京晴，上海多云，广州有雨。"
KEY_ID, SECRET, TOKEN = "AKIAEXAMPLE7RECORD01", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYRECORDKEY", "IQoJb3JpZ2luX2VjRECORDTOKEN"
INPUT_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": "get_weather", "description": "The weather of a city.",
                                       "inputSchema": {"json": INPUT_SCHEMA}}}]}  # fmt: skip
ANTHROPIC_TOOLS = [{"name": "get_weather", "description": "The weather of a city.", "input_schema": INPUT_SCHEMA}]


def weather_script() -> Any:
    return by_turn([
        tool_use_reply(ToolUse("get_weather", {"city": "北京"}), "我查一下。"),
        tool_use_reply([ToolUse("get_weather", {"city": "上海"}), ToolUse("get_weather", {"city": "广州"})]),
        text_reply(FINAL),
    ])  # fmt: skip


def bedrock(url: str, key_id: str = KEY_ID, secret: str = SECRET, token: str | None = TOKEN) -> Any:
    """The real boto3 client, pointed at ``url`` (the proxy) with ``endpoint_url``."""
    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, aws_access_key_id=key_id,
                        aws_secret_access_key=secret, aws_session_token=token)  # fmt: skip


def stream_to_message(events: Any) -> dict[str, Any]:
    """What a ConverseStream consumer builds from the events (as Strands Agents and the AWS samples do)."""
    content: dict[int, dict[str, Any]] = {}
    tool_inputs: dict[int, str] = {}
    stop = None
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            content[start["contentBlockIndex"]] = {"toolUse": dict(start["start"]["toolUse"])}
        elif "contentBlockDelta" in event:
            index, delta = event["contentBlockDelta"]["contentBlockIndex"], event["contentBlockDelta"]["delta"]
            if "text" in delta:
                content.setdefault(index, {"text": ""})["text"] += delta["text"]
            else:
                tool_inputs[index] = tool_inputs.get(index, "") + delta["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
    for index, text in tool_inputs.items():
        content[index]["toolUse"]["input"] = json.loads(text)
    return {"message": {"role": "assistant", "content": [content[i] for i in sorted(content)]}, "stopReason": stop}


def converse_loop(client: Any, stream: bool) -> list[dict[str, Any]]:
    """A Converse agent: the whole history each turn, each ``toolUse`` answered by a ``toolResult``."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "北京、上海、广州天气怎么样？"}]}]
    results = []
    for _ in range(5):
        kwargs = {"modelId": MODEL, "messages": messages, "system": [{"text": "你是天气助手。"}],
                  "toolConfig": TOOL_CONFIG, "inferenceConfig": {"maxTokens": 512}}  # fmt: skip
        if stream:
            result = stream_to_message(client.converse_stream(**kwargs)["stream"])
        else:
            response = client.converse(**kwargs)
            result = {"message": response["output"]["message"], "stopReason": response["stopReason"],
                      "usage": response["usage"]}  # fmt: skip
        results.append(result)
        messages.append(result["message"])
        calls = [block["toolUse"] for block in result["message"]["content"] if "toolUse" in block]
        if not calls:
            return results
        messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": call["toolUseId"], "content": [{"text": WEATHER[call["input"]["city"]]}]}}
            for call in calls]})  # fmt: skip
    return results


def anthropic_events(response: Any) -> list[dict[str, Any]]:
    """The Messages API events of an ``invoke_model_with_response_stream`` answer (base64 ``bytes``)."""
    return [json.loads(event["chunk"]["bytes"]) for event in response["body"]]


def invoke_loop(client: Any, stream: bool) -> list[Any]:
    """An agent on InvokeModel with Anthropic Messages bodies."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    results: list[Any] = []
    for _ in range(5):
        body = json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 512, "system": "你是天气助手。",
                           "messages": messages, "tools": ANTHROPIC_TOOLS}, ensure_ascii=False)  # fmt: skip
        if stream:
            events = anthropic_events(client.invoke_model_with_response_stream(modelId=MODEL, body=body))
            results.append(events)
            content: list[dict[str, Any]] = []
            for event in events:
                if event["type"] == "content_block_start":
                    content.append(dict(event["content_block"]))
                elif event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
                    content[-1]["text"] += event["delta"]["text"]
                elif event["type"] == "content_block_delta":
                    content[-1]["partial"] = content[-1].get("partial", "") + event["delta"]["partial_json"]
            for block in content:
                if block["type"] == "tool_use":
                    block["input"] = json.loads(block.pop("partial"))
        else:
            reply = json.loads(client.invoke_model(modelId=MODEL, body=body)["body"].read())
            results.append(reply)
            content = reply["content"]
        messages.append({"role": "assistant", "content": content})
        calls = [block for block in content if block["type"] == "tool_use"]
        if not calls:
            return results
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": WEATHER[call["input"]["city"]]}
            for call in calls]})  # fmt: skip
    return results


def record_then_replay(tmp_path: Path, run: Callable[[Any], Any], **options: Any) -> tuple[Any, Any, Any]:
    """Record one session, then replay it with the upstream stopped and other credentials (another
    signature, another date header): the client gets the same output."""
    with recording(weather_script(), tmp_path, **options) as (upstream, proxy):
        recorded = run(bedrock(proxy.url))
        assert upstream.requests and upstream.requests[0].headers["authorization"].startswith("AWS4-HMAC-SHA256")
    traces = trace_records(tmp_path)
    with replaying(tmp_path) as proxy:
        replayed = run(bedrock(proxy.url, "AKIAEXAMPLE7REPLAY02", "replay-secret-key-0123456789", None))
        assert proxy.proxy.misses == []
    return recorded, replayed, traces


def assert_weather_session(records: list[dict[str, Any]], provider: str) -> None:
    """One trace with the three calls, their arguments and results, and the final answer."""
    calls = of_kind(records, "model_call")
    assert [c["provider"] for c in calls] == [provider] * 3
    assert {c["model"] for c in calls} == {MODEL}, "the model is named by the path"
    assert [(c["name"], c["input"]) for c in of_kind(records, "tool_call")] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"}), ("get_weather", {"city": "广州"})]
    results = [(r["call_index"], r["content"]) for r in of_kind(records, "tool_result")]
    texts = [(index, content if isinstance(content, str) else content[0]["text"]) for index, content in results]
    assert texts == [(0, "晴"), (1, "多云"), (2, "雨")]
    assert of_kind(records, "assistant_message")[-1]["content"] == [{"type": "text", "text": FINAL}]
    assert all(c["usage"]["input_tokens"] > 0 and c["usage"]["output_tokens"] > 0 for c in calls)
    assert [c["stitched"] for c in calls] == ["new", "continuity", "continuity"]


@pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse_stream"])
def test_converse_session_is_one_trace_and_replays_equal(tmp_path: Path, stream: bool) -> None:
    recorded, replayed, traces = record_then_replay(tmp_path, lambda client: converse_loop(client, stream))
    assert replayed == recorded
    assert recorded[-1]["message"]["content"] == [{"text": FINAL}]
    (records,) = traces
    assert_weather_session(records, "bedrock_converse")
    calls = of_kind(records, "model_call")
    assert all(c["stream"] is stream for c in calls)
    assert calls[1]["response"]["output"]["message"]["content"][1]["toolUse"]["input"] == {"city": "广州"}
    assert calls[0]["stop_reason"] == "tool_use"
    assert of_kind(records, "system_message")[0]["content"] == "你是天气助手。"


@pytest.mark.parametrize("stream", [False, True], ids=["invoke_model", "invoke_model_with_response_stream"])
def test_invoke_model_with_anthropic_bodies_is_one_trace_and_replays_equal(tmp_path: Path, stream: bool) -> None:
    recorded, replayed, traces = record_then_replay(tmp_path, lambda client: invoke_loop(client, stream))
    assert replayed == recorded
    (records,) = traces
    assert_weather_session(records, "bedrock_invoke")
    calls = of_kind(records, "model_call")
    assert all(c["stream"] is stream for c in calls)
    assert calls[2]["response"]["content"] == [{"type": "text", "text": FINAL}], "the chunks were assembled"
    assert calls[0]["request"]["anthropic_version"] == "bedrock-2023-05-31"


def test_anthropic_bedrock_client_records_and_replays(tmp_path: Path) -> None:
    anthropic = pytest.importorskip("anthropic")

    def run(url: str, key_id: str) -> list[Any]:
        client = anthropic.AnthropicBedrock(base_url=url, aws_region="us-east-1", aws_access_key=key_id,
                                            aws_secret_key=SECRET, max_retries=0)  # fmt: skip
        messages: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
        results = []
        for turn in range(5):
            kwargs = {"model": MODEL, "max_tokens": 512, "messages": messages, "tools": ANTHROPIC_TOOLS}
            if turn % 2:
                with client.messages.stream(**kwargs) as events:
                    message = events.get_final_message()
            else:
                message = client.messages.create(**kwargs)
            results.append(message.to_dict())
            messages.append({"role": "assistant", "content": message.to_dict()["content"]})
            calls = [block for block in message.content if block.type == "tool_use"]
            if not calls:
                return results
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                             "content": WEATHER[call.input["city"]]} for call in calls]})  # fmt: skip
        return results

    with recording(weather_script(), tmp_path) as (_, proxy):
        recorded = run(proxy.url, KEY_ID)
    (records,) = trace_records(tmp_path)
    assert_weather_session(records, "bedrock_invoke")
    assert [c["stream"] for c in of_kind(records, "model_call")] == [False, True, False]
    with replaying(tmp_path) as proxy:
        assert run(proxy.url, "AKIAEXAMPLE7REPLAY02") == recorded
        assert proxy.proxy.misses == []
    assert recorded[-1]["content"] == [{"type": "text", "text": FINAL}]


def signed_values(tmp_path: Path) -> tuple[set[str], Any]:
    """Record one converse session; the secrets the upstream saw in the SigV4 headers."""
    with recording(weather_script(), tmp_path) as (upstream, proxy):
        converse_loop(bedrock(proxy.url), stream=True)
        seen = upstream.requests
    values = {KEY_ID, SECRET, TOKEN}
    for request in seen:
        assert request.headers["x-amz-security-token"] == TOKEN
        authorization = request.headers["authorization"]
        assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
        values.add(authorization.rsplit("Signature=", 1)[1])
    return values, seen


def test_sigv4_key_id_signature_and_session_token_never_reach_disk(tmp_path: Path) -> None:
    secrets, seen = signed_values(tmp_path / "out")
    assert len(secrets) == 3 + len(seen), "every request has its own signature"
    written = b"".join(path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file())
    assert b"get_weather" in written, "the traces were written"
    for secret in secrets:
        assert secret.encode() not in written, secret


def test_an_intercept_rewrites_a_converse_tool_result(tmp_path: Path) -> None:
    case = {"type": "tool_intercept", "intercept_tool": "get_weather",
            "inject_tool_result": {"is_error": True, "content": "Error: weather service unavailable"}}  # fmt: skip
    with recording(weather_script(), tmp_path, case=case) as (upstream, proxy):
        converse_loop(bedrock(proxy.url), stream=False)
        sent = upstream.requests[1].body["messages"][2]["content"][0]["toolResult"]
    assert sent["content"] == [{"text": "Error: weather service unavailable"}] and sent["status"] == "error"
    (records,) = trace_records(tmp_path)
    (intercept, *_) = of_kind(records, "intercept")
    assert intercept["tool"] == "get_weather" and intercept["original"] == [{"text": "晴"}]
    assert of_kind(records, "tool_result")[0]["is_error"] is True


def test_a_replay_miss_is_an_aws_error_naming_the_nearest_recording(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path) as (_, proxy):
        converse_loop(bedrock(proxy.url), stream=False)
    with replaying(tmp_path) as proxy, pytest.raises(ClientError) as caught:
        bedrock(proxy.url).converse(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "深圳呢？"}]}],
                                    system=[{"text": "你是天气助手。"}], toolConfig=TOOL_CONFIG)  # fmt: skip
    error = caught.value.response["Error"]
    assert error["Code"] == "ResourceNotFoundException"
    assert "Nearest recorded request" in error["Message"] and "深圳" in error["Message"]


def test_analyze_reads_bedrock_traces(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path / "traces") as (_, proxy):
        converse_loop(bedrock(proxy.url), stream=True)
        invoke_loop(bedrock(proxy.url), stream=True)
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "traces"), "--json", str(tmp_path / "a.json")])
    assert result.exit_code == 0, result.output
    analysis = json.loads((tmp_path / "a.json").read_text())
    traces = analysis["traces"]
    assert len(traces) == 2
    assert sorted(trace["stats"]["tool_calls"] for trace in traces) == [3, 3]


def signature_verifies(request: Any, secret: str = SECRET) -> bool:
    """Whether the SigV4 signature of a request the upstream received is valid for what it received (its Host,
    path as sent, headers and body), recomputed with botocore's signer as AWS would."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    authorization = request.headers["authorization"]
    signed = authorization.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    headers = {name: request.headers[name] for name in signed}
    rebuilt = AWSRequest(method="POST", url=f"http://{request.headers['host']}{request.raw_path}", data=request.raw,
                         headers=headers)  # fmt: skip
    rebuilt.context["timestamp"] = request.headers["x-amz-date"]
    signer = SigV4Auth(Credentials(KEY_ID, secret, TOKEN), "bedrock", "us-east-1")
    expected = signer.signature(signer.string_to_sign(rebuilt, signer.canonical_request(rebuilt)), rebuilt)
    return authorization.endswith(f"Signature={expected}")


def test_sigv4_signed_for_the_upstream_host_stays_valid_through_record(tmp_path: Path) -> None:
    """The proxy forwards the signed request unchanged except for its Host, which is the upstream's: a client
    pointed at the proxy with ``endpoint_url`` signs the proxy's host (AWS would refuse the signature), one
    that signs for the upstream and is sent to the proxy (a ``before-send`` hook) arrives valid."""
    with recording(weather_script(), tmp_path) as (upstream, proxy):
        bedrock(proxy.url).converse(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "天气？"}]}])
        client = bedrock(upstream.url)  # signs for the upstream's host ...

        def to_proxy(request: Any, **_: Any) -> None:  # ... and is sent to the proxy
            request.url = request.url.replace(upstream.url, proxy.url)

        client.meta.events.register("before-send.bedrock-runtime.*", to_proxy)
        client.converse(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "天气？"}]}])
        first, second = upstream.requests
    assert first.raw_path == second.raw_path == "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", (
        "the path is forwarded as the client encoded it")
    assert not signature_verifies(first), "signed for the proxy's host, checked at the upstream's"
    assert signature_verifies(second)
    assert len(of_kind(trace_records(tmp_path)[0], "model_call")) == 1 and len(trace_records(tmp_path)) == 2


def converse_stream_once(url: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    response = bedrock(url).converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "天气？"}]}])
    with pytest.raises(Exception) as caught:  # botocore's EventStreamError: the stream's exception message
        events.extend(response["stream"])
    assert "忙" in str(caught.value)
    return events


@pytest.mark.parametrize("where", ["upstream", "fault"])
def test_an_error_mid_stream_reaches_boto3_and_the_trace(tmp_path: Path, where: str) -> None:
    """The upstream's ``exception`` message (a scripted ``error_after``) and a case's ``stream_error`` fault
    (the proxy's own event after two whole frames) both end the stream for boto3 and are the call's error."""
    reply = text_reply("北京晴，上海多云，广州有雨。", chunk_size=4)
    case = None
    if where == "upstream":
        reply = reply.error_after(3, message="忙")
    else:
        case = {"faults": [{"type": "stream_error", "after_events": 2, "error_type": "overloaded_error",
                            "message": "忙"}]}  # fmt: skip
    with recording([reply], tmp_path, case=case) as (_, proxy):
        events = converse_stream_once(proxy.url)
    assert len(events) == (3 if where == "upstream" else 2)
    (call,) = of_kind(trace_records(tmp_path)[0], "model_call")
    assert call["error"]["message"] == "忙" and call["error"]["type"] == "ThrottlingException"


def test_a_throttled_attempt_is_retried_by_boto3_in_record_and_in_replay(tmp_path: Path) -> None:
    """AWS names the error only in ``x-amzn-ErrorType``, which boto3's retry decision reads: it is kept and
    replayed, so the replayed 429 is retried as the recorded one was."""
    from botocore.config import Config

    from tracekit.testing import error_reply

    def once(url: str) -> list[dict[str, Any]]:
        client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, aws_access_key_id=KEY_ID,
                              aws_secret_access_key=SECRET, config=Config(retries={"max_attempts": 3}))  # fmt: skip
        return list(client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi"}]}])
                    ["stream"])  # fmt: skip

    script = [error_reply(429, "rate_limit_error", "slow down", should_retry=True, retry_after_ms=1), text_reply("好")]
    with recording(script, tmp_path) as (_, proxy):
        recorded = once(proxy.url)
    (records,) = trace_records(tmp_path)
    assert of_kind(records, "model_call")[0]["attempts"] == 2
    assert of_kind(records, "error")[0]["response_headers"]["x-amzn-errortype"].startswith("ThrottlingException")
    with replaying(tmp_path) as proxy:
        assert once(proxy.url) == recorded
        assert proxy.proxy.matches["exact"] == 2


def test_the_endpoint_environment_variable_points_any_boto3_agent_at_tracekit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Agents that build their own client (Strands' ``BedrockModel``) take ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``
    (botocore's service-specific endpoint variable) as they would ``endpoint_url``."""
    with recording(weather_script(), tmp_path) as (upstream, proxy):
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", proxy.url)
        client = boto3.Session(aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
                               region_name="us-west-2").client("bedrock-runtime")  # fmt: skip
        converse_loop(client, stream=True)
        assert len(upstream.requests) == 3
    assert_weather_session(trace_records(tmp_path)[0], "bedrock_converse")


def test_an_inference_profile_arn_is_the_model(tmp_path: Path) -> None:
    """A model id may be an ARN (``.../inference-profile/...``, sent as ``%2F``): the call names all of it."""
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"
    messages = [{"role": "user", "content": [{"text": "天气？"}]}]
    with recording([text_reply("晴")], tmp_path) as (upstream, proxy):
        events = list(bedrock(proxy.url).converse_stream(modelId=arn, messages=messages)["stream"])
        assert "%2F" in upstream.requests[0].raw_path and upstream.requests[0].model == arn
    (call,) = of_kind(trace_records(tmp_path)[0], "model_call")
    assert call["model"] == arn and call["stream"] is True
    with replaying(tmp_path) as proxy:
        assert list(bedrock(proxy.url).converse_stream(modelId=arn, messages=messages)["stream"]) == events
        assert proxy.proxy.matches == {"exact": 1}
