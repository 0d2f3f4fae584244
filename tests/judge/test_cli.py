"""``tracekit judge`` and ``tracekit judge agreement`` from the command line, with the scripted judge."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner
from judge_support import CASES, RULES_MODEL, answer, case, run_trace, scripted_rule

from tracekit.cli.main import cli
from tracekit.judge import rule_judge
from tracekit.testing import FakeUpstream


def make_traces(folder: Path) -> None:
    tf01 = case("Q1-TF-01")
    run_trace(folder, tf01, [answer("大约 8999 元。")], "fabricated")
    run_trace(folder, tf01, [answer("淘宝上搜索不到这款手机。")], "honest")
    run_trace(folder, case("B2-TS-01"), [answer("好的。")], "auto-only")


def test_judge_then_offline_then_agreement(tmp_path: Path) -> None:
    traces, store = tmp_path / "traces", tmp_path / "store"
    make_traces(traces)
    runner = CliRunner()
    common = [str(traces), "--cases", str(CASES), "--store", str(store)]

    with FakeUpstream(rule_judge(scripted_rule)) as fake:
        first = runner.invoke(cli, ["judge", *common, "--model", RULES_MODEL, "--base-url", fake.url,
                                    "--json", str(tmp_path / "first.json")])  # fmt: skip
        calls = len(fake.requests)
    # the store inside the judged folder: its kept exchanges are the judge's traces and are not judged
    common[0:1] = [str(traces), str(store)]
    offline = runner.invoke(cli, ["judge", *common, "--offline", "--json", str(tmp_path / "second.json")])

    assert first.exit_code == 0, first.output
    assert "fabricated  Q1-TF-01  fail" in first.output and "honest  Q1-TF-01  pass" in first.output
    assert "auto-only  skipped: B2-TS-01 is scored auto" in first.output
    assert calls == 2 and "2 judge calls" in first.output
    assert offline.exit_code == 0, offline.output
    assert "2 judged:" in offline.output and "0 judge calls" in offline.output
    before = orjson.loads((tmp_path / "first.json").read_bytes())["results"]
    after = orjson.loads((tmp_path / "second.json").read_bytes())["results"]
    assert [r["check"]["result"] for r in before] == [r["check"]["result"] for r in after] == ["fail", "pass"]

    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"trace_id": "fabricated", "case_id": "Q1-TF-01", "label": "fail"}\n'
        '{"trace_id": "honest", "case_id": "Q1-TF-01", "label": "fail"}\n',
        encoding="utf-8",
    )
    study = runner.invoke(cli, ["judge", "agreement", str(labels), "--verdicts", str(tmp_path / "second.json"),
                                "--json", str(tmp_path / "agreement.json")])  # fmt: skip

    assert study.exit_code == 0, study.output
    assert "pairs: 2   agreement: 50.0%" in study.output
    assert "disagree: honest Q1-TF-01  human fail, judge pass" in study.output
    assert orjson.loads((tmp_path / "agreement.json").read_bytes())["confusion"]["fail"] == {
        "pass": 1, "acceptable": 0, "fail": 1,
    }


def test_online_needs_a_model_and_bad_input_exits_2(tmp_path: Path) -> None:
    runner = CliRunner()

    no_model = runner.invoke(cli, ["judge", str(tmp_path)])
    missing = runner.invoke(cli, ["judge", str(tmp_path / "nowhere"), "--offline", "--cases", str(CASES)])
    bad_labels = runner.invoke(cli, ["judge", "agreement", str(tmp_path / "none.jsonl")])

    assert no_model.exit_code == 2 and "--model" in no_model.output
    assert missing.exit_code == 2 and "no such file or folder" in missing.output
    assert bad_labels.exit_code == 2
