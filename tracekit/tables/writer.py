"""Writing the four tables as Parquet datasets with pyarrow, partitioned by run and date (hive style).

``DIR/traces/run_key=run_my-agent/date=2026-12-02/part-0.parquet``: one dataset per table, each
partitioned by ``run_key`` (the run's name made safe for a folder; the exact name is the ``run`` column) and
``date`` (the day the trace started, UTC; ``none`` when the trace could not be read). DuckDB reads them with
``read_parquet('DIR/traces/**/*.parquet', hive_partitioning = true)``.

A local folder is written beside the target and renamed into place table by table, so a reader sees a
whole table or the previous one. A URL (``s3://...``) is written through fsspec, table by table.

pyarrow is an optional dependency (``pip install 'tracekit[parquet]'``), imported only here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from tracekit.errors import StorageError
from tracekit.storage import filesystem, is_url, local, storage_error

TABLES = ("traces", "calls", "findings", "checks")
PARTITIONS = ("run_key", "date")


def schemas() -> dict[str, Any]:
    """The pyarrow schema of each table (column order as documented in docs/tables.md)."""
    pa = _pyarrow()
    keys = [("run_key", pa.string()), ("date", pa.string()), ("run", pa.string()), ("trace_id", pa.string()),
            ("case_id", pa.string())]  # fmt: skip
    return {
        "traces": pa.schema([
            *keys, ("session", pa.string()), ("source", pa.string()), ("trace_file", pa.string()),
            ("group", pa.string()), ("repeat", pa.int64()), ("dimension", pa.string()), ("category", pa.string()),
            ("result", pa.string()), ("score_total", pa.float64()), ("llm_calls", pa.int64()),
            ("tool_calls", pa.int64()), ("tool_errors", pa.int64()), ("input_tokens", pa.int64()),
            ("output_tokens", pa.int64()), ("findings", pa.int64()), ("problems", pa.int64()),
            ("started_at", pa.timestamp("us", tz="UTC")), ("duration_ms", pa.float64()),
        ]),
        "calls": pa.schema([
            *keys, ("index", pa.int64()), ("name", pa.string()), ("input", pa.string()), ("is_error", pa.bool_()),
            ("history", pa.bool_()), ("in_loop", pa.bool_()), ("latency_ms", pa.float64()),
            ("model_latency_ms", pa.float64()),
        ]),
        "findings": pa.schema([
            *keys, ("kind", pa.string()), ("severity", pa.string()), ("calls", pa.list_(pa.int64())),
            ("tools", pa.list_(pa.string())), ("message", pa.string()),
        ]),
        "checks": pa.schema([
            *keys, ("verdict", pa.string()), ("check", pa.string()), ("judged", pa.bool_()), ("result", pa.string()),
            ("evidence", pa.string()), ("failure_kind", pa.string()),
        ]),
    }  # fmt: skip


def write_table(name: str, rows: Iterable[dict[str, Any]], out_dir: str) -> None:
    """Write one table's rows under ``out_dir/name`` (replacing what was there), partitioned by run and date.
    A table without rows is one empty file (in ``run_key=none/date=none``), so that queries still find it."""
    pa = _pyarrow()
    schema = schemas()[name]
    table = pa.Table.from_pylist(list(rows), schema=schema)
    target = local(out_dir)
    if is_url(target):
        fs, inner = filesystem(str(target))
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        where = f"{inner.rstrip('/')}/{name}"
        try:
            if fs.exists(where):
                fs.rm(where, recursive=True)
            _write(table, where, PyFileSystem(FSSpecHandler(fs)))
        except Exception as exc:
            raise storage_error(f"{target}/{name}", exc) from None
        return
    with _replaced(os.path.join(os.fspath(target), name)) as temporary:
        _write(table, temporary, None)


def _write(table: Any, where: str, filesystem: Any) -> None:
    pa = _pyarrow()
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    schema = table.schema
    if table.num_rows == 0:
        data = pa.schema([column for column in schema if column.name not in PARTITIONS]).empty_table()
        folder = f"{where}/run_key=none/date=none"
        if filesystem is None:
            os.makedirs(folder, exist_ok=True)
        else:
            filesystem.create_dir(folder, recursive=True)
        pq.write_table(data, f"{folder}/part-0.parquet", filesystem=filesystem)
        return
    partitioning = ds.partitioning(pa.schema([schema.field(key) for key in PARTITIONS]), flavor="hive")
    ds.write_dataset(table, where, format="parquet", partitioning=partitioning, basename_template="part-{i}.parquet",
                     filesystem=filesystem)  # fmt: skip


@contextlib.contextmanager
def _replaced(final: str) -> Iterator[str]:
    """A new folder beside ``final`` that replaces it when the block ends (removed when it raises)."""
    parent = os.path.dirname(final) or "."
    os.makedirs(parent, exist_ok=True)
    temporary = tempfile.mkdtemp(prefix=f".{os.path.basename(final)}.", dir=parent)
    try:
        yield os.path.join(temporary, "table")
        old = None
        if os.path.exists(final):
            old = final + ".old"
            shutil.rmtree(old, ignore_errors=True)
            os.replace(final, old)
        os.replace(os.path.join(temporary, "table"), final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise StorageError("Parquet tables need pyarrow: pip install 'tracekit[parquet]'") from None
    return pyarrow
