"""`tracekit cases list / show / validate / schema`."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tracekit.cli.cases import cases

CASES_DIR = Path(__file__).resolve().parents[2] / "cases"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cases, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_list_json_names_every_case() -> None:
    code, out, _ = run("list", "--json", str(CASES_DIR))
    assert code == 0
    rows = json.loads(out)
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)) and "B2-PC-02" in ids
    row = next(row for row in rows if row["id"] == "B2-PC-02")
    assert row["dimension"] == "B2" and row["scoring"] == "auto" and row["difficulty"] == "中等"
    assert ids[:7] == [f"B2-TS-0{n}" for n in range(1, 7)] + ["B2-PC-01"]  # seed order


def test_list_text() -> None:
    code, out, _ = run("list", str(CASES_DIR))
    assert code == 0 and "B2-TS-01" in out and "机票" in out


def test_show_prints_the_case_with_chinese_intact() -> None:
    code, out, _ = run("show", "B2-PC-02", "--dir", str(CASES_DIR))
    assert code == 0 and "查下周五北京到上海的机票" in out and "relative_date: 下周五" in out
    code, out, _ = run("show", "B2-PC-02", "--dir", str(CASES_DIR), "--json")
    assert json.loads(out)["expect"]["calls"][0]["args"]["date"] == {"relative_date": "下周五"}
    code, _, err = run("show", "B2-XX-99", "--dir", str(CASES_DIR))
    assert code == 2 and "no case 'B2-XX-99'" in err


def test_show_takes_an_id_in_any_letter_case() -> None:
    code, out, _ = run("show", "b2-pc-02", "--dir", str(CASES_DIR))
    assert code == 0 and out.startswith("# ") and "id: B2-PC-02" in out


def test_show_of_an_unknown_id_names_the_nearest_ones() -> None:
    code, _, err = run("show", "b2-pc-2", "--dir", str(CASES_DIR))
    assert code == 2
    assert err.startswith(f"no case 'b2-pc-2' in {CASES_DIR} (")
    nearest = err.split("did you mean ")[1].rstrip("?\n").split(", ")
    assert nearest[0] == "B2-PC-02" and 1 < len(nearest) <= 5
    code, _, err = run("show", "nothing-like-it", "--dir", str(CASES_DIR))
    assert code == 2 and "`tracekit cases list" in err


def test_validate_clean_library_exits_0() -> None:
    code, out, err = run("validate", str(CASES_DIR))
    assert code == 0, out
    assert out == "" and "0 problems" in err


def test_validate_broken_library_exits_2_with_one_line_per_problem(tmp_path: Path) -> None:
    (tmp_path / "b2").mkdir()
    (tmp_path / "b2" / "B2-TS-01.yaml").write_text("id: B2-TS-01\ndimension: B2\n", encoding="utf-8")
    (tmp_path / "b2" / "B2-TS-02.yaml").write_text("id: [\n", encoding="utf-8")
    code, out, _ = run("validate", str(tmp_path))
    assert code == 2
    lines = out.splitlines()
    assert any("B2-TS-01.yaml:1: missing required field 'category'" in line for line in lines)
    assert any("B2-TS-02.yaml:2: invalid YAML" in line for line in lines)
    assert any("no tool catalog found" in line for line in lines)


def test_schema_is_json_schema_of_the_case_model() -> None:
    code, out, _ = run("schema")
    schema = json.loads(out)
    assert code == 0 and schema["title"] == "Case" and "expect" in schema["properties"]
    assert schema["additionalProperties"] is False
    code, out, _ = run("schema", "--catalog")
    assert json.loads(out)["title"] == "ToolFamily"


def test_every_command_has_help() -> None:
    for command in ([], ["list"], ["show"], ["validate"], ["schema"]):
        code, out, _ = run(*command, "--help")
        assert code == 0 and "Usage" in out
