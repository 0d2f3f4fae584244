"""Exposure: the proxy forwards API keys, so who can reach it matters.

- ``tracekit record`` / ``replay`` bind 127.0.0.1 by default (checked in the kernel's socket table too).
- A non-loopback ``--host`` is refused (exit status 2, naming ``--allow-remote``) before anything listens.
- With ``--allow-remote`` the proxy warns before it binds. The test uses an address of TEST-NET-1
  (RFC 5737), which no interface holds: the warning is printed and the bind then fails, so nothing is
  ever exposed beyond loopback.
- ``/_tracekit/health`` says it is up and nothing else: no upstream URL or credentials, no folders, no
  configured secrets, no keys seen in traffic.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import anthropic
import httpx2
import pytest
from click.testing import CliRunner, Result

from tracekit.cli.main import cli
from tracekit.proxy import check_host, is_loopback
from tracekit.testing import FakeUpstream, text_reply
from tracekit.trace import Header, write_trace

from .support import RecordProcess, clean_env, secret_hits, start_tracekit, tracekit_command, wait_for_line

UNASSIGNED = "192.0.2.10"  # TEST-NET-1: documentation only, never routed
REMOTE_HOSTS = ["0.0.0.0", "::", UNASSIGNED, "10.1.2.3", "example.com", "[::]"]


def _listening_addresses(port: int) -> list[str]:
    """Local addresses of the listening TCP sockets on ``port`` (from /proc/net/tcp and tcp6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.append(address)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the kernel's socket table")
@pytest.mark.parametrize("command", ["record", "replay"])
def test_binds_loopback_by_default(tmp_path: Path, command: str) -> None:
    write_trace(tmp_path / "recorded.jsonl", [Header(trace_id="recorded")])  # replay refuses an empty folder
    args = (
        ["--upstream", "http://127.0.0.1:9", "--out", str(tmp_path / "out")] if command == "record" else [str(tmp_path)]
    )
    process = start_tracekit([command, *args, "--port", "0"], tmp_path / "out.log", tmp_path / "err.log")
    try:
        url = wait_for_line(tmp_path / "out.log", "listening on ", process).split("listening on ", 1)[1]
        assert url.startswith("http://127.0.0.1:")
        assert _listening_addresses(int(url.rsplit(":", 1)[1])) == ["0100007F"]  # 127.0.0.1, little-endian hex
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    assert "warning" not in (tmp_path / "err.log").read_text()


@pytest.mark.parametrize("command", ["record", "replay"])
@pytest.mark.parametrize("host", REMOTE_HOSTS)
def test_a_non_loopback_address_is_refused_without_allow_remote(tmp_path: Path, command: str, host: str) -> None:
    # In process (fast): the refusal comes before any socket is opened; a proxy that did not refuse would keep
    # serving, hence the thread with a deadline.
    args = (
        ["--upstream", "http://127.0.0.1:9", "--out", str(tmp_path / "out")] if command == "record" else [str(tmp_path)]
    )
    results: list[Result] = []

    def invoke() -> None:
        results.append(CliRunner().invoke(cli, [command, *args, "--port", "0", "--host", host]))

    worker = threading.Thread(target=invoke, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert results, f"tracekit {command} --host {host} is still running: it did not refuse"
    (result,) = results
    assert result.exit_code == 2, result.output
    assert "--allow-remote" in result.output and "refusing to listen" in result.output
    assert "listening on" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_allow_remote_warns_before_binding(tmp_path: Path) -> None:
    args = ["record", "--upstream", "http://127.0.0.1:9", "--out", str(tmp_path), "--port", "0"]
    done = subprocess.run(tracekit_command([*args, "--host", UNASSIGNED, "--allow-remote"]), capture_output=True,
                          env=clean_env(), timeout=30)  # fmt: skip
    stderr = done.stderr.decode()
    assert f"warning: listening on {UNASSIGNED}" in stderr
    assert stderr.index("warning") < stderr.index(f"cannot listen on {UNASSIGNED}"), "warned first, then tried"
    assert done.returncode == 2 and "Traceback" not in stderr


def test_loopback_check_and_warning() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "192.0.2.10", "localhost.example.com", ""))
    warnings: list[str] = []
    check_host("127.0.0.1", False, warnings.append)
    assert warnings == []
    check_host("0.0.0.0", True, warnings.append)
    assert len(warnings) == 1 and "0.0.0.0" in warnings[0]


def _health_responses(proxy: RecordProcess, key: str) -> list[httpx2.Response]:
    with httpx2.Client(base_url=proxy.url) as http:
        return [http.get("/_tracekit/health", headers={"x-api-key": key}), http.get("/_tracekit/health?verbose=1")]


def test_the_health_endpoint_reveals_no_configuration_or_secret(tmp_path: Path) -> None:
    configured = "tkrel-configured-secret-9c1d"
    key = "tkrel-health-key-2e7a5f10"
    case = tmp_path / "case.json"
    case.write_text('{"type": "tool_intercept", "intercept_tool": "search_flights", '
                    '"inject_tool_result": {"content": "x"}}')
    out = tmp_path / "private-recordings"
    with FakeUpstream(lambda request: text_reply("好")) as upstream:
        proxy = RecordProcess(upstream.url, out, tmp_path / "logs", "--redact", configured, "--case", str(case))
        try:
            client = anthropic.Anthropic(base_url=proxy.url, api_key=key, max_retries=0)
            client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
            responses = _health_responses(proxy, key)
        finally:
            assert proxy.stop() == 0
        # An upstream behind a gateway with basic-auth credentials in its URL: only health is asked for.
        gateway = RecordProcess(f"http://gateway-user:tkrel-gateway-password@127.0.0.1:{upstream.port}/tkrel-gw",
                                tmp_path / "gw", tmp_path / "logs", name="gateway")  # fmt: skip
        try:
            responses += _health_responses(gateway, key)
        finally:
            assert gateway.stop() == 0
    for response in responses:
        assert response.status_code == 200
        assert response.json().get("status") == "ok"
        shown = response.text + " ".join(f"{name}: {value}" for name, value in response.headers.items())
        for private in (str(upstream.port), "tkrel-gw", "tkrel-gateway-password", "gateway-user", configured, key,
                        str(out), "private-recordings", str(case), "search_flights"):  # fmt: skip
            assert private not in shown, f"the health endpoint shows {private!r}"
    assert secret_hits(["tkrel-gateway-password", key], tmp_path) == [], "nor is any of it written"
