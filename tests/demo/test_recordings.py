"""The committed demo recordings (recordings/): honest headers, small, replayable, and the verdicts the
policies were written for. They were made by `tracekit run all --model scripted:<policy>` (recordings/README.md)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tracekit.analyze.results import analyze_trace
from tracekit.cases import CaseLibrary
from tracekit.intercepts import config_from
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.runner.agent import run_agent
from tracekit.runner.conversation import agent_start
from tracekit.runner.mock_tools import MockToolExecutor
from tracekit.runner.turn_clients import AnthropicTurnClient
from tracekit.trace import load_trace

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
POLICIES = ("reference", "flawed")


def first_and_last(path: Path) -> tuple[dict[str, object], dict[str, object]]:
    lines = path.read_bytes().splitlines()
    return orjson.loads(lines[0]), orjson.loads(lines[-1])


@pytest.mark.parametrize("policy", POLICIES)
def test_every_case_and_group_is_recorded_and_says_how(policy: str, library: CaseLibrary) -> None:
    files = sorted((RECORDINGS / policy).glob("*.jsonl"))
    expected = {f"{case.id}__{group or '-'}__r0" for case in library for group in (case.skills.groups or [None])}
    assert {path.stem for path in files} == expected
    for path in files:
        header, closing = first_and_last(path)
        assert header["source"] == f"run:scripted:{policy}" and header["model"] == f"scripted:{policy}"
        meta = header["meta"]
        assert isinstance(meta, dict) and "no model was called" in meta["policy"]["made_by"]
        assert closing["kind"] == "agent_run"
        assert b'"request":' not in path.read_bytes()  # --drop-request-bodies


def test_recordings_stay_small() -> None:
    total = sum(path.stat().st_size for path in RECORDINGS.rglob("*") if path.is_file())
    assert total < 4_000_000


def test_verdicts_are_the_ones_the_policies_were_written_for(library: CaseLibrary) -> None:
    for path in sorted((RECORDINGS / "reference").glob("*.jsonl")):
        verdict = analyze_trace(load_trace(path), library=library)["verdict"]
        assert verdict["result"] in ("pass", "acceptable", "pending"), path.name
        assert not [check for check in verdict["checks"] if check["result"] == "fail"], path.name
    for path in sorted((RECORDINGS / "flawed").glob("*.jsonl")):
        case = library.get(path.stem.split("__")[0])
        verdict = analyze_trace(load_trace(path), library=library)["verdict"]
        expected = "pending" if case.scoring == "judge" else "fail"
        assert verdict["result"] == expected, (path.name, verdict["result"])


@pytest.mark.parametrize("name", ["C4-LD-01__A__r0", "B2-TC-03__B__r0"])
def test_the_reference_agent_replays_a_recording_exactly(name: str, library: CaseLibrary, tmp_path: Path) -> None:
    (tmp_path / f"{name}.jsonl").write_bytes((RECORDINGS / "reference" / f"{name}.jsonl").read_bytes())
    case_id, group, _ = name.split("__")
    case = library.get(case_id)
    tools = MockToolExecutor.for_case(library.catalog, case.context.tools)
    start = agent_start(case, case.skills.groups[group], tools.tool_params(), library.skills, library.root)
    config = ProxyConfig(mode="replay", replay_dir=tmp_path, intercepts=config_from(case), redactor=Redactor())
    with RunningProxy(config) as proxy:
        outcome = run_agent(start, AnthropicTurnClient("scripted:reference", proxy.url, "k"), tools)
        assert proxy.proxy.misses == []
    recorded = [record for record in load_trace(tmp_path / f"{name}.jsonl").records
                if getattr(record, "kind", "") == "assistant_message"]
    assert outcome.stop == "end_turn" and outcome.turns == len(recorded)
    assert outcome.messages is not None and outcome.messages[-1]["content"] == recorded[-1].content


def test_mocked_results_are_recorded_as_intercepts() -> None:
    path = RECORDINGS / "reference" / "C4-LD-02__A__r0.jsonl"
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    mocked = [record for record in records if record["kind"] == "intercept"]
    assert {r["tool"] for r in mocked} == {"weibo_search_posts", "weibo_get_post_detail", "weibo_get_post_comments"}
    assert all(r["mode"] == "tool_mock" for r in mocked) and len(mocked) == 5
