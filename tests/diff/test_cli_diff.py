"""``tracekit diff`` on two real analyses: the reference and the flawed scripted policies' recordings,
analyzed by ``tracekit analyze`` in the test; JSON, Markdown and the --fail-on exit status."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tracekit.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def _analyze(runner: CliRunner, folder: str, out: Path) -> None:
    result = runner.invoke(cli, ["analyze", str(ROOT / "recordings" / folder), "--cases", str(ROOT / "cases"),
                                 "--json", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output


def test_diff_reference_against_flawed_writes_json_and_markdown_and_fails_on_regression(tmp_path: Path) -> None:
    runner = CliRunner()
    reference, flawed = tmp_path / "reference.json", tmp_path / "flawed.json"
    _analyze(runner, "reference", reference)
    _analyze(runner, "flawed", flawed)
    args = ["diff", str(reference), str(flawed), "--json", str(tmp_path / "d.json"),
            "--markdown", str(tmp_path / "d.md")]  # fmt: skip
    assert runner.invoke(cli, args).exit_code == 0
    failed = runner.invoke(cli, [*args, "--fail-on", "regression"])
    assert failed.exit_code == 1
    document = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    changes = [pair["change"] for pair in document["pairs"]]
    assert changes.count("regression") == document["counts"]["regression"] > 0
    assert changes == sorted(changes, key=lambda c: c != "regression")  # regressions lead
    first = document["pairs"][0]
    assert set(first["key"]) == {"case_id", "group", "repeat"} and first["verdict"]["new"] == "fail"
    markdown = (tmp_path / "d.md").read_text(encoding="utf-8")
    assert "**Regressions (" in markdown and len(markdown.splitlines()) < 40
    same = runner.invoke(cli, ["diff", str(reference), str(reference), "--fail-on", "regression"])
    assert same.exit_code == 0 and "0 regression" in same.output


def test_diff_of_a_file_that_is_not_results_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    result = CliRunner().invoke(cli, ["diff", str(bad), str(bad)])
    assert result.exit_code == 2 and "bad.json" in result.output
