"""Guard files that must be refused before or while they are read (issue 27, C): a device, a FIFO, a file too
large, a key given twice, a boolean limit, a negative count. Each is a ``GuardConfigError`` naming the file
(and the line and field where there is one); ``tracekit record --guard`` exits 2 on it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cases.loader import load_case
from tracekit.cli import cli
from tracekit.errors import CaseError, GuardConfigError
from tracekit.guard.config import MAX_GUARD_BYTES, load_guard_config
from tracekit.safe_yaml import safe_load_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_a_device_is_refused_before_reading() -> None:
    with pytest.raises(GuardConfigError, match="/dev/zero: not a regular file"):
        load_guard_config("/dev/zero")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "guard.yaml"
    os.mkfifo(fifo)
    with pytest.raises(GuardConfigError, match="not a regular file"):
        load_guard_config(fifo)  # opening it would wait for a writer that never comes


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "guard.yaml"
    path.write_text("# " + "x" * MAX_GUARD_BYTES + "\n", encoding="utf-8")
    with pytest.raises(GuardConfigError, match="more than a guard file may be"):
        load_guard_config(path)


def test_a_key_given_twice_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "guard.yaml"
    path.write_text("budgets:\n  tokens: {limit: 100}\n  tokens: {limit: 1000000}\n", encoding="utf-8")
    with pytest.raises(GuardConfigError, match=r"guard.yaml:3: .*duplicate key 'tokens' \(first given on line 2\)"):
        load_guard_config(path)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("budgets:\n  tokens: {limit: true}\n", r":2: budgets.tokens.limit: .*boolean"),
        ("budgets:\n  model_calls:\n    limit: -1\n", r":3: budgets.model_calls.limit"),
        ("detectors:\n  alternating_loop:\n    min_repeats: -1\n", r":3: detectors.alternating_loop.min_repeats: -1 is "
         r"negative"),
        ("detectors:\n  alternating_loop:\n    min_repeats: true\n", r":3: detectors.alternating_loop.min_repeats: "
         r"expected a number"),
    ],
)  # fmt: skip
def test_booleans_are_not_numbers_and_counts_are_not_negative(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "guard.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GuardConfigError, match=where):
        load_guard_config(path)


def test_record_exits_2_on_a_bad_guard_file(tmp_path: Path) -> None:
    path = tmp_path / "guard.yaml"
    path.write_text("findings: {}\nfindings: {}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["record", "--guard", str(path), "--out", str(tmp_path / "out"),
                                      "--upstream", "http://127.0.0.1:9", "--port", "0"])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "duplicate key 'findings'" in result.output and "Traceback" not in result.output


def test_every_yaml_tracekit_reads_refuses_duplicate_keys(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match=r"s.yaml:2: .*duplicate key 'a'"):
        safe_load_yaml("a: 1\na: 2\n", "s.yaml", CaseError)
    case = next((ROOT / "cases").rglob("*.yaml"))
    copy = tmp_path / case.name
    shutil.copy(case, copy)
    copy.write_text(copy.read_text(encoding="utf-8") + "\nid: again\n", encoding="utf-8")
    with pytest.raises(CaseError, match="duplicate key"):
        load_case(copy)


def test_the_case_library_still_loads() -> None:
    from tracekit.cases.loader import collect_library

    library, problems = collect_library(ROOT / "cases")
    assert problems == [] and len(library.cases) > 50
