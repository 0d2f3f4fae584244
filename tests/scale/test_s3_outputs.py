"""Outputs to object storage on a real S3 API (moto): import --out, analyze --json/--parquet, export parquet."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from click.testing import CliRunner
from scale_support import CASES, RECORDINGS

from tracekit.cli.main import cli


def _objects(endpoint: str, bucket: str, prefix: str) -> list[str]:
    import boto3

    pages = boto3.client("s3", endpoint_url=endpoint).get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=prefix
    )
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def test_import_writes_traces_to_a_bucket_that_analyze_reads(s3_server: str, bucket: str, tmp_path: Path) -> None:
    source = tmp_path / "seed.json"
    secret = "sk-ant-api03-" + "B" * 90
    messages = [{"role": "user", "content": f"你好, key {secret}"}, {"role": "assistant", "content": "您好！"}]
    source.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    url = f"s3://{bucket}/imported"
    result = CliRunner().invoke(cli, ["import", "anthropic-messages", str(source), "--out", url])
    assert result.exit_code == 0, result.output
    assert f"wrote 1 trace to {url}" in result.output
    assert _objects(s3_server, bucket, "imported/") == ["imported/seed.jsonl"]
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server)
    trace = client.get_object(Bucket=bucket, Key="imported/seed.jsonl")["Body"].read()
    assert secret.encode() not in trace and "你好".encode() in trace  # redacted on the way up, Chinese kept

    result = CliRunner().invoke(cli, ["analyze", url, "--json", f"s3://{bucket}/results.json", "--no-progress"])
    assert result.exit_code == 0, result.output
    document = orjson.loads(client.get_object(Bucket=bucket, Key="results.json")["Body"].read())
    assert [entry["source"] for entry in document["traces"]] == ["imported/seed.jsonl"]
    assert document["traces"][0]["trace_file"] == f"{url}/seed.jsonl"


def test_tables_are_written_to_a_bucket(s3_server: str, bucket: str, tmp_path: Path) -> None:
    import pyarrow.dataset as ds
    import s3fs

    results = tmp_path / "results.json"
    result = CliRunner().invoke(cli, ["analyze", str(RECORDINGS / "flawed"), "--json", str(results), "--no-progress",
                                      "--parquet", f"s3://{bucket}/tables"])  # fmt: skip
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli, ["export", "parquet", str(results), "--out", f"s3://{bucket}/again"])
    assert result.exit_code == 0, result.output
    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": s3_server})
    traces = orjson.loads(results.read_bytes())["traces"]
    for prefix in ("tables", "again"):
        keys = _objects(s3_server, bucket, f"{prefix}/")
        assert {key.split("/")[1] for key in keys} == {"traces", "calls", "findings", "checks"}
        assert all("/run_key=" in key and "/date=" in key for key in keys)
        table = ds.dataset(f"{bucket}/{prefix}/traces", filesystem=fs, format="parquet", partitioning="hive").to_table()
        assert table.num_rows == len(traces)


def test_a_report_is_read_from_and_written_to_a_bucket(s3_server: str, bucket: str) -> None:
    results = f"s3://{bucket}/results.json"
    result = CliRunner().invoke(cli, ["analyze", str(RECORDINGS / "flawed"), "--json", results, "--no-progress"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli, ["report", results, "--baseline", results, "--markdown",
                                      f"s3://{bucket}/report/summary.md", "--junit", f"s3://{bucket}/report/junit.xml",
                                      "--html", f"s3://{bucket}/report/html"])  # fmt: skip
    assert result.exit_code == 0, result.output
    keys = _objects(s3_server, bucket, "report/")
    assert {"report/junit.xml", "report/summary.md", "report/html/index.html"} <= set(keys)
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server)
    traces = orjson.loads(client.get_object(Bucket=bucket, Key="results.json")["Body"].read())["traces"]
    assert len([key for key in keys if key.startswith("report/html/traces/")]) == len(traces)
    index = client.get_object(Bucket=bucket, Key="report/html/index.html")["Body"].read().decode("utf-8")
    assert f"{len(traces)} traces" in index and "traces/" in index


def test_a_diff_is_read_from_and_written_to_a_bucket(s3_server: str, bucket: str) -> None:
    runner = CliRunner()
    for side in ("reference", "flawed"):
        result = runner.invoke(cli, ["analyze", str(RECORDINGS / side), "--cases", str(CASES),
                                     "--json", f"s3://{bucket}/{side}.json", "--no-progress"])  # fmt: skip
        assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["diff", f"s3://{bucket}/reference.json", f"s3://{bucket}/flawed.json",
                                 "--html", f"s3://{bucket}/diff", "--markdown", f"s3://{bucket}/diff.md",
                                 "--json", f"s3://{bucket}/diff.json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server)
    document = orjson.loads(client.get_object(Bucket=bucket, Key="diff.json")["Body"].read())
    changed = [pair for pair in document["pairs"] if pair["change"] != "unchanged"]
    keys = _objects(s3_server, bucket, "diff/")
    assert "diff/index.html" in keys and len([key for key in keys if key.startswith("diff/pairs/")]) == len(changed)
    markdown = client.get_object(Bucket=bucket, Key="diff.md")["Body"].read().decode("utf-8")
    assert document["counts"]["regression"] > 0 and f"](s3://{bucket}/diff/pairs/" in markdown  # linked where they are
    assert any(pair["latency_ms"]["base"] is not None for pair in document["pairs"])  # local traces, results in S3


def test_export_otel_reads_traces_from_a_bucket_and_writes_there(s3_server: str, bucket: str, tmp_path: Path) -> None:
    from scale_support import upload

    assert upload(RECORDINGS / "flawed", s3_server, f"s3://{bucket}/flawed") > 100
    result = CliRunner().invoke(cli, ["export", "otel", f"s3://{bucket}/flawed", "--out", f"s3://{bucket}/otel.json"])
    assert result.exit_code == 0, result.output
    local = CliRunner().invoke(cli, ["export", "otel", str(RECORDINGS / "flawed"), "--out", str(tmp_path / "o.json")])
    import boto3

    body = boto3.client("s3", endpoint_url=s3_server).get_object(Bucket=bucket, Key="otel.json")["Body"].read()
    spans = orjson.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) > 100 and result.output.split(",")[0] == local.output.split(",")[0]
