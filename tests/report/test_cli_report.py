"""``tracekit report``: files written, --fail-on exit statuses, unreadable input exits 2."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from tracekit.cli import cli
from tracekit.output import write_json


def _results_file(report_inputs: dict[str, Any], tmp_path: Path) -> Path:
    return write_json(tmp_path / "results.json", report_inputs["results"])


def test_report_writes_all_three(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = _results_file(report_inputs, tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["report", str(results), "--html", str(out / "html"),
                                      "--markdown", str(out / "summary.md"), "--junit", str(out / "junit.xml")])
    assert result.exit_code == 0, result.output
    assert (out / "html" / "index.html").is_file() and (out / "summary.md").is_file()
    assert (out / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert "HTML report:" in result.output and "pages)" in result.output


def test_fail_on_sets_the_exit_status(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = _results_file(report_inputs, tmp_path)
    failing = CliRunner().invoke(cli, ["report", str(results), "--junit", str(tmp_path / "j.xml"), "--fail-on", "fail"])
    assert failing.exit_code == 1
    assert "1 runs fail under --fail-on fail" in failing.output
    data = orjson.loads(results.read_bytes())
    data["traces"] = [t for t in data["traces"] if (t.get("verdict") or {}).get("result") != "fail"]
    passing_file = write_json(tmp_path / "passing.json", data)
    assert CliRunner().invoke(cli, ["report", str(passing_file), "--fail-on", "fail"]).exit_code == 0
    strict = CliRunner().invoke(cli, ["report", str(passing_file), "--fail-on", "acceptable"])
    assert strict.exit_code == 1  # C4-LD-01 A#0 is acceptable


def test_relative_trace_paths_resolve_from_the_results_folder(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    data = report_inputs["results"]
    for entry in data["traces"]:
        entry["source"] = os.path.relpath(entry["source"], tmp_path)
    results = write_json(tmp_path / "results.json", data)
    out = tmp_path / "html"
    result = CliRunner().invoke(cli, ["report", str(results), "--html", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "traces" / "B2-PC-02.A.0.html").read_text(encoding="utf-8")
    assert "could not be read" not in page and "我先查城市编号。" in page


def test_bad_input_exits_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["report", str(tmp_path / "nope.json"), "--html", str(tmp_path / "h")])
    assert missing.exit_code == 2 and "cannot read" in missing.output
    (tmp_path / "bad.json").write_text('{"summary": {}}', encoding="utf-8")
    bad = CliRunner().invoke(cli, ["report", str(tmp_path / "bad.json"), "--html", str(tmp_path / "h")])
    assert bad.exit_code == 2 and "not a tracekit analyze JSON" in bad.output
    nothing = CliRunner().invoke(cli, ["report", str(tmp_path / "bad.json")])
    assert nothing.exit_code == 2 and "nothing to do" in nothing.output
