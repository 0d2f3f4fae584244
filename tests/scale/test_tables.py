"""The Parquet tables: written from the recordings' results, read back by DuckDB with the README's queries."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from scale_support import CASES, RECORDINGS, REPO

from tracekit.cli.main import cli

duckdb = pytest.importorskip("duckdb", reason="duckdb is in the test extra")
pytest.importorskip("pyarrow", reason="pyarrow is in the test extra")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """``analyze recordings --parquet`` once, run from an unrelated folder (the trace files' times are found
    from the results file, not the working directory): the tables folder and the results document."""
    where = tmp_path_factory.mktemp("tables")
    with pytest.MonkeyPatch.context() as patch:
        elsewhere = tmp_path_factory.mktemp("elsewhere") / "deeper" / "than" / "the" / "results"
        elsewhere.mkdir(parents=True)
        patch.chdir(elsewhere)
        result = CliRunner().invoke(cli, [
            "analyze", str(RECORDINGS), "--cases", str(CASES), "--no-progress",
            "--json", str(where / "results.json"), "--parquet", str(where / "tables"),
        ], catch_exceptions=False)  # fmt: skip
    assert result.exit_code == 0, result.output
    return where / "tables", orjson.loads((where / "results.json").read_bytes())


def readme_queries() -> list[str]:
    """The SQL blocks of the README's "Scale" section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Scale\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, flags=re.S)


def run(query: str, tables: Path) -> list[tuple]:
    return duckdb.sql(query.replace("'tables/", f"'{tables.as_posix()}/")).fetchall()


def test_the_readme_has_three_queries() -> None:
    assert len(readme_queries()) == 3


def test_pass_rate_by_case_and_run_matches_the_results(written: tuple[Path, dict]) -> None:
    tables, results = written
    rows = run(readme_queries()[0], tables)
    decided = [entry for entry in results["traces"]
               if entry["verdict"] and entry["verdict"]["result"] in ("pass", "acceptable", "fail")]  # fmt: skip
    assert len(rows) == len({(entry["run"], entry["case_id"]) for entry in decided}) > 50
    assert sum(row[2] for row in rows) == len(decided)
    passed = {(entry["run"], entry["case_id"]) for entry in decided if entry["verdict"]["result"] == "pass"}
    assert {(row[0], row[1]) for row in rows if row[3] > 0} == passed


def test_tools_most_often_in_loops_come_from_the_loop_findings(written: tuple[Path, dict]) -> None:
    tables, results = written
    rows = run(readme_queries()[1], tables)
    looping: dict[str, int] = {}
    for entry in results["traces"]:
        names = {call["index"]: call["name"] for call in entry["tool_calls"]}
        flagged = {index for finding in entry["findings"]
                   if finding["kind"] in ("repeated_call", "retry_storm", "alternating_loop")
                   for index in finding["calls"]}  # fmt: skip
        for index in flagged:
            looping[names[index]] = looping.get(names[index], 0) + 1
    assert rows, "the recordings hold loops (recordings/flawed)"
    expected = sorted(looping.items(), key=lambda item: (-item[1], item[0]))[:10]
    assert [(row[0], row[1]) for row in rows] == expected


def test_the_slowest_calls_are_timed_from_the_trace_files(written: tuple[Path, dict]) -> None:
    tables, _ = written
    rows = run(readme_queries()[2], tables)
    assert len(rows) == 10
    latencies = [row[4] for row in rows]
    assert latencies == sorted(latencies, reverse=True) and latencies[0] > 0


def test_the_tables_are_partitioned_by_run_and_date(written: tuple[Path, dict]) -> None:
    tables, results = written
    counted = duckdb.sql(
        f"SELECT run_key, run, date, count(*) FROM read_parquet('{tables.as_posix()}/traces/**/*.parquet', "
        "hive_partitioning = true) GROUP BY ALL"
    ).fetchall()
    assert sum(row[3] for row in counted) == len(results["traces"])
    assert {row[1] for row in counted} == {entry["run"] for entry in results["traces"]}
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", row[0]) for row in counted)
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(row[2])) for row in counted)


def test_export_parquet_writes_the_same_tables_as_analyze(written: tuple[Path, dict], tmp_path: Path) -> None:
    tables, _ = written
    results = tables.parent / "results.json"
    outcome = CliRunner().invoke(cli, ["export", "parquet", str(results), "--out", str(tmp_path / "again")])
    assert outcome.exit_code == 0, outcome.output
    for name in ("traces", "calls", "findings", "checks"):
        first, second = (f"(SELECT * FROM read_parquet('{where.as_posix()}/{name}/**/*.parquet', "
                         "hive_partitioning = true))" for where in (tables, tmp_path / "again"))  # fmt: skip
        counts = duckdb.sql(f"SELECT (SELECT count(*) FROM {first}), (SELECT count(*) FROM {second})").fetchone()
        assert counts is not None and counts[0] == counts[1] > 0
        differing = duckdb.sql(f"SELECT count(*) FROM (({first} EXCEPT ALL {second}) UNION ALL "
                               f"({second} EXCEPT ALL {first}))").fetchone()  # fmt: skip
        assert differing == (0,)


def test_every_column_is_documented() -> None:
    from tracekit.tables import schemas

    doc = (REPO / "docs" / "tables.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", doc, flags=re.M))
    for name, schema in schemas().items():
        assert f"## `{name}`" in doc
        assert set(schema.names) <= documented, set(schema.names) - documented


def test_a_table_without_rows_is_still_a_table(tmp_path: Path) -> None:
    """Without --cases there are no checks: the checks table is one empty file that queries still read."""
    result = CliRunner().invoke(cli, ["analyze", str(RECORDINGS / "flawed"), "--no-progress",
                                      "--parquet", str(tmp_path / "tables")])  # fmt: skip
    assert result.exit_code == 0, result.output
    query = "SELECT count(*) FROM read_parquet('{}/{}/**/*.parquet', hive_partitioning = true)"
    assert duckdb.sql(query.format((tmp_path / "tables").as_posix(), "checks")).fetchone() == (0,)
    assert duckdb.sql(query.format((tmp_path / "tables").as_posix(), "traces")).fetchone()[0] > 0
