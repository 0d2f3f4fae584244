"""``tracekit record`` and ``tracekit replay`` as processes: the printed URL for --port 0, the health
route, SIGTERM (finish writing, exit 0 within 5 s), loopback-only binding, and a replay miss."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import anthropic
import pytest

from tracekit.testing import FakeUpstream, text_reply

from .helpers import of_kind, trace_records

HELLO = [{"role": "user", "content": "你好"}]


def start(*args: str) -> tuple[subprocess.Popen[str], str]:
    """Start a tracekit command and read the URL it announces."""
    process = subprocess.Popen(
        ["tracekit", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    line = process.stdout.readline() if process.stdout else ""
    if "listening on" not in line:
        process.kill()
        raise AssertionError(f"no URL announced: {line!r} {process.communicate()[1]}")
    return process, line.split()[-1]


def stop(process: subprocess.Popen[str]) -> tuple[int, float]:
    """SIGTERM; the exit status and how long it took."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    status = process.wait(timeout=10)
    return status, time.monotonic() - started


def record_hello(out: Path) -> None:
    """Record one exchange (HELLO answered "你好！") with ``tracekit record`` into ``out``: a recording to replay."""
    with FakeUpstream([text_reply("你好！")]) as upstream:
        process, url = start("record", "--upstream", upstream.url, "--port", "0", "--out", str(out))
        try:
            anthropic.Anthropic(base_url=url, api_key="k", max_retries=0).messages.create(
                model="m", max_tokens=10, messages=HELLO
            )
        finally:
            stop(process)


def test_record_announces_its_url_serves_health_and_stops_cleanly_mid_stream(tmp_path: Path) -> None:
    # The second reply streams for about 6 s: longer than the proxy's grace period after SIGTERM.
    slow = text_reply("慢慢地说" * 15, chunk_size=1).delayed(per_event=0.1)
    with FakeUpstream([text_reply("你好！"), slow]) as upstream:
        process, url = start("record", "--upstream", upstream.url, "--port", "0", "--out", str(tmp_path))
        try:
            assert url.startswith("http://127.0.0.1:")
            health = urllib.request.urlopen(url + "/_tracekit/health", timeout=5)
            assert health.status == 200
            assert upstream.url not in health.read().decode(), "health reveals no configuration"
            client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
            assert client.messages.create(model="m", max_tokens=10, messages=HELLO).content[0].text == "你好！"
            streaming = threading.Thread(target=_read_stream_quietly, args=(client,))
            streaming.start()
            time.sleep(0.3)  # the second exchange is in flight when the signal comes
        finally:
            status, took = stop(process)
            streaming.join(timeout=10)
    assert status == 0 and took < 5
    calls = sorted((of_kind(records, "model_call") for records in trace_records(tmp_path)), key=len)
    assert [len(c) for c in calls] == [1, 1], "both exchanges were written before exiting"
    cut = next(c[0] for c in calls if c[0]["partial"])
    assert cut["error"]["type"] == "proxy_stopped" and cut["sse"].startswith("event: message_start")


def _read_stream_quietly(client: anthropic.Anthropic) -> None:
    try:
        with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "慢"}]) as s:
            s.get_final_text()
    except Exception:  # the proxy may stop before the stream ends; that is what is tested
        return


def test_a_non_loopback_host_is_refused_without_allow_remote(tmp_path: Path) -> None:
    result = subprocess.run(
        ["tracekit", "record", "--upstream", "http://127.0.0.1:9", "--port", "0", "--out", str(tmp_path),
         "--host", "0.0.0.0"], capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert result.returncode == 2
    assert "--allow-remote" in result.stderr


def test_allow_remote_warns(tmp_path: Path) -> None:
    process = subprocess.Popen(
        ["tracekit", "record", "--upstream", "http://127.0.0.1:9", "--port", "0", "--out", str(tmp_path),
         "--host", "0.0.0.0", "--allow-remote"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None and "listening on http://0.0.0.0:" in process.stdout.readline()
    status, _ = stop(process)
    assert status == 0
    assert process.stderr is not None and "warning" in process.stderr.read()


def test_replay_command_answers_hits_and_explains_a_miss(tmp_path: Path) -> None:
    record_hello(tmp_path)
    process, url = start("replay", str(tmp_path), "--port", "0")
    try:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        assert client.messages.create(model="m", max_tokens=10, messages=HELLO).content[0].text == "你好！"
        request = urllib.request.Request(
            url + "/v1/messages", method="POST", headers={"content-type": "application/json"},
            data=json.dumps({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "再"}]}).encode(),
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=60)  # a bound, not a measure: a miss loads deepdiff
        assert caught.value.code == 404
        assert caught.value.headers["x-should-retry"] == "false"
        error = json.loads(caught.value.read())["error"]
        assert error["type"] == "not_found_error"
        assert "model_call 0" in error["message"] and "root['messages'][0]['content']" in error["message"]
    finally:
        status, took = stop(process)
    assert status == 0 and took < 5


def test_a_bad_case_file_is_a_usage_error_naming_the_field(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tracekit.cli.main import cli

    bad = tmp_path / "case.json"
    bad.write_text('{"intercepts": [{"type": "tool_mock", "mocked_calls": [{"tool": "t"}]}]}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["record", "--upstream", "http://127.0.0.1:9", "--port", "0",
                                      "--out", str(tmp_path / "out"), "--case", str(bad)])  # fmt: skip
    assert result.exit_code == 2
    assert "case.json.intercepts[0].mocked_calls[0].inject_result" in result.output
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_replay_takes_the_body_limit_and_secret_fields_and_its_log_keeps_them_out(tmp_path: Path) -> None:
    user = "tk-cli-user-0042-shanghai"
    record_hello(tmp_path)
    process, url = start("replay", str(tmp_path), "--port", "0", "--max-body-bytes", "300",
                         "--redact-field", "metadata.user_id")  # fmt: skip
    try:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as too_large:
            client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "长" * 200}])
        with pytest.raises(anthropic.NotFoundError):  # a miss quoting the user id where it differs
            client.messages.create(model="m", max_tokens=10, metadata={"user_id": user},
                                   messages=[{"role": "user", "content": user}])  # fmt: skip
    finally:
        status, _ = stop(process)
    assert status == 0
    assert too_large.value.status_code == 413 and "limit of 300 bytes" in too_large.value.message
    assert process.stderr is not None
    log = process.stderr.read()
    assert "first difference" in log and "[REDACTED]" in log and user not in log
