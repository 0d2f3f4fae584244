"""What a newcomer mistypes is refused at start-up with one line that says what to do (exit status 2):
a binary fake-upstream script, an upstream without a scheme, a mistyped command or case id."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tracekit.cli import cli

CASES = Path(__file__).resolve().parents[2] / "cases"


def test_a_binary_fake_upstream_script_is_refused_naming_the_file(tmp_path: Path) -> None:
    script = tmp_path / "replies.yaml"
    script.write_bytes(b"- \xff\xfe\x00binary" + bytes(range(256)))
    result = CliRunner().invoke(cli, ["fake-upstream", "--script", str(script), "--port", "0"])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert f"{script}: not a text file (byte 2 is not UTF-8)" in result.output


def test_record_refuses_an_upstream_without_a_scheme_and_creates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    # A subprocess: a proxy that started anyway would serve until stopped, so the bound is the test's failure.
    finished = subprocess.run(
        [sys.executable, "-m", "tracekit", "record", "--upstream", "api.anthropic.com", "--port", "0",
         "--out", str(out)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert finished.returncode == 2, finished.stderr
    assert "listening" not in finished.stdout
    assert "--upstream 'api.anthropic.com' is not an http(s) URL" in finished.stderr
    assert "e.g. https://api.anthropic.com" in finished.stderr
    assert not out.exists()


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = CliRunner().invoke(cli, ["anlyze", "recordings"])
    assert result.exit_code == 2
    assert "no command 'anlyze'; did you mean 'analyze'?" in result.output


def test_a_command_like_nothing_points_at_the_help() -> None:
    result = CliRunner().invoke(cli, ["zzzz"])
    assert result.exit_code == 2
    assert "no command 'zzzz'; see 'tracekit --help'" in result.output


def test_run_with_a_case_id_that_does_not_exist_suggests_the_nearest(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "B2-FR-1", "--model", "demo:any", "--out", str(tmp_path / "run"),
                                      "--cases-dir", str(CASES)])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "no case matches 'B2-FR-1'" in result.output and "did you mean B2-FR-01" in result.output
    assert not (tmp_path / "run").exists()
