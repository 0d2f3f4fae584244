"""A port another program holds: record and replay say so with the way out (--port 0) before doing anything
else: record creates no --out folder, replay loads no recording."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli import cli
from tracekit.testing import text_reply

from .helpers import recording


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port held by a listening socket for the test's length."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_record_on_a_taken_port_hints_port_0_and_creates_no_out(taken_port: int, tmp_path: Path) -> None:
    out = tmp_path / "traces"
    result = CliRunner().invoke(cli, ["record", "--upstream", "http://127.0.0.1:9", "--port", str(taken_port),
                                      "--out", str(out)])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert f"cannot listen on 127.0.0.1:{taken_port}" in result.output
    assert "--port 0 for a free one" in result.output
    assert not out.exists(), "nothing is created for a proxy that cannot start"


def test_replay_on_a_taken_port_refuses_before_loading_the_recordings(taken_port: int, tmp_path: Path) -> None:
    with recording([text_reply("好")], tmp_path) as (_, proxy):
        import anthropic

        anthropic.Anthropic(base_url=proxy.url, api_key="k").messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "你好"}]
        )
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--port", str(taken_port)])
    assert result.exit_code == 2, result.output
    assert "--port 0 for a free one" in result.output
    assert "recorded answers" not in result.output, "the recordings are loaded only once the port is bound"
