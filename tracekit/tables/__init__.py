"""Analyze results as tables for a query engine: ``traces``, ``calls``, ``findings``, ``checks`` in Parquet.

``tracekit analyze ... --parquet DIR`` and ``tracekit export parquet RESULTS --out DIR`` write them; DuckDB,
Athena, Spark or pandas read them. The columns are documented in docs/tables.md; the README ("Scale")
shows queries. Every value comes from the results JSON as written (through the redactor), plus the times
the trace files hold (``rows.Timings``).

Example::

    from tracekit.tables import write_tables
    write_tables(read_results_file("results.json"), "tables/", base="reports/")
    # duckdb: SELECT * FROM read_parquet('tables/traces/**/*.parquet', hive_partitioning = true)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from tracekit.redact import default_redactor
from tracekit.results.model import Results
from tracekit.storage import is_url, join, local
from tracekit.tables.rows import Timings, entry_rows, partition_key, trace_timings
from tracekit.tables.writer import PARTITIONS, TABLES, schemas, write_table
from tracekit.trace import load_trace

__all__ = [
    "PARTITIONS",
    "TABLES",
    "Timings",
    "entry_rows",
    "partition_key",
    "schemas",
    "trace_timings",
    "write_table",
    "write_tables",
]


def write_tables(results: Results | dict[str, Any], out_dir: str | Path, base: str | Path | None = None) -> list[str]:
    """Write the four tables of ``results`` under ``out_dir`` (a folder or URL); returns the table names.

    ``base``: the folder ``traces[].trace_file`` is relative to (the results file's folder; default: the
    working directory), where the trace files' times are read from. A trace that cannot be read leaves its
    time columns null; its rows are still written."""
    if isinstance(results, Results):
        data = default_redactor().redact_bytes(results.to_json_bytes())
        results = orjson.loads(data)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    for entry in results.get("traces") or []:
        for name, added in entry_rows(entry, _timings(entry.get("trace_file"), base)).items():
            rows[name].extend(added)
    for name in TABLES:
        write_table(name, rows[name], os.fspath(out_dir))
    return list(TABLES)


def _timings(trace_file: str | None, base: str | Path | None) -> Timings | None:
    """The times of the trace a results entry names; None when it cannot be read."""
    if not trace_file:
        return None
    where: str | Path = trace_file
    if not is_url(trace_file) and not os.path.isabs(trace_file):
        folder = os.fspath(local(base)) if base is not None else os.getcwd()
        where = join(folder, trace_file) if is_url(folder) else Path(folder) / trace_file
    try:
        return trace_timings(load_trace(where, fast=True))
    except Exception:  # the tables are still written; the time columns stay null for this trace
        return None
