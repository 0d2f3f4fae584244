"""``tracekit replay`` refuses a folder with nothing to replay before it listens."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tracekit.cli import cli


def test_replay_of_a_folder_without_traces_says_so_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no traces here")
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--port", "0"])
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: no trace files found in {tmp_path} (a trace file ends in .jsonl)")


def test_a_refused_address_is_said_before_the_empty_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["replay", str(tmp_path), "--port", "0", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "refusing to listen on 0.0.0.0" in result.output
