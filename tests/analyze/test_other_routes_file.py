"""The recording proxy's ``*-other-routes.jsonl`` (the exchanges of routes that are not model calls) holds no
agent session: analyze of a folder skips it and counts it, instead of listing a trace with all-zero stats;
named on its own, it is analyzed like any file."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, text_reply


def test_a_folder_with_an_other_routes_file_lists_only_the_session(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    with FakeUpstream(lambda request: text_reply("hi")) as upstream, RunningProxy(
        ProxyConfig(upstream=upstream.url, out_dir=out, redactor=Redactor())
    ) as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
        client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.NotFoundError):  # the fake upstream has no model list: recorded all the same
            client.models.list()
    (other,) = out.glob("*-other-routes.jsonl")
    result = CliRunner().invoke(cli, ["analyze", str(out), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert [entry["stats"]["llm_calls"] for entry in document["traces"]] == [1]
    assert document["summary"]["skipped_other_routes"] == 1
    assert "1 files of other routes only skipped" in result.output
    named = CliRunner().invoke(cli, ["analyze", str(other), "--json", str(tmp_path / "o.json")])
    assert named.exit_code == 0, named.output
    assert len(json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))["traces"]) == 1
