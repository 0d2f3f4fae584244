"""analyze over a real S3 API (the moto server on loopback) and on a real Ray: the same bytes as the local engine.

The repository's recordings (about 400 trace files, judge exchanges included) are uploaded to a bucket; the
local engine and ``--engine ray`` (two Ray workers) both read them from there and write their results JSON
back to the bucket, and the two objects are compared byte for byte.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from scale_support import CASES, RECORDINGS, REPO, upload

from tracekit.cli.main import cli

JUDGE_STORE = RECORDINGS / "judge"


@pytest.fixture(scope="session")
def recordings_url(s3_server: str) -> str:
    """The recordings, uploaded once to s3://tk-recordings/recordings."""
    import boto3

    boto3.client("s3", endpoint_url=s3_server).create_bucket(Bucket="tk-recordings")
    uploaded = upload(RECORDINGS, s3_server, "s3://tk-recordings/recordings")
    assert uploaded > 300
    assert upload(CASES, s3_server, "s3://tk-recordings/cases", "*") > 50
    return "s3://tk-recordings/recordings"


def _s3_bytes(endpoint: str, url: str) -> bytes:
    import boto3

    bucket, _, key = url.removeprefix("s3://").partition("/")
    return boto3.client("s3", endpoint_url=endpoint).get_object(Bucket=bucket, Key=key)["Body"].read()


def _analyze(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["analyze", *args, "--no-progress"], catch_exceptions=False)
    return result.exit_code, result.output


def test_ray_engine_on_s3_writes_the_local_engines_bytes(
    s3_server: str, recordings_url: str, local_ray: object, tmp_path: Path
) -> None:
    # The case library is read from the bucket too (each Ray worker copies it once).
    common = ["--cases", "s3://tk-recordings/cases", "--judge-store", str(JUDGE_STORE)]
    code, output = _analyze(recordings_url, *common, "--json", "s3://tk-recordings/results-local.json")
    assert code == 0, output
    code, output = _analyze(
        recordings_url, *common, "--engine", "ray", "--json", "s3://tk-recordings/results-ray.json"
    )
    assert code == 0, output
    local_bytes = _s3_bytes(s3_server, "s3://tk-recordings/results-local.json")
    ray_bytes = _s3_bytes(s3_server, "s3://tk-recordings/results-ray.json")
    assert ray_bytes == local_bytes
    document = orjson.loads(ray_bytes)
    assert len(document["traces"]) > 250
    assert document["summary"]["skipped_judge_exchanges"] > 50
    first = document["traces"][0]
    assert first["source"].startswith("recordings/") and first["trace_file"].startswith(recordings_url + "/")

    # The same traces read from local disk: the same document, but for where each trace file is.
    on_disk = ["--cases", str(CASES), "--judge-store", str(JUDGE_STORE)]
    code, output = _analyze(str(RECORDINGS), *on_disk, "--json", str(tmp_path / "disk.json"))
    assert code == 0, output
    disk = orjson.loads((tmp_path / "disk.json").read_bytes())
    for entries in (disk["traces"], document["traces"]):
        for entry in entries:
            entry.pop("trace_file")
    assert disk == document


def _without_trace_file(document: bytes) -> bytes:
    """The results with ``traces[].trace_file`` left out: it names where the report reads each trace (the
    object's URL from a bucket, a path relative to the results file from disk), so it must differ."""
    parsed = orjson.loads(document)
    for entry in parsed["traces"]:
        entry.pop("trace_file")
    return orjson.dumps(parsed, option=orjson.OPT_NON_STR_KEYS)


def test_ray_over_s3_finds_the_kept_verdicts_under_the_url_and_gives_the_local_results(
    recordings_url: str, local_ray: object, tmp_path: Path
) -> None:
    # No --judge-store: the kept verdicts are found beside the recordings, in the bucket as on disk.
    code, output = _analyze(recordings_url, "--cases", str(CASES), "--engine", "ray",
                            "--json", str(tmp_path / "ray.json"))  # fmt: skip
    assert code == 0, output
    assert f"kept in {recordings_url}/judge" in output
    code, output = _analyze(str(RECORDINGS), "--cases", str(CASES), "--json", str(tmp_path / "local.json"))
    assert code == 0, output

    from_s3, on_disk = (tmp_path / "ray.json").read_bytes(), (tmp_path / "local.json").read_bytes()
    assert _without_trace_file(from_s3) == _without_trace_file(on_disk)  # summary and sources included
    document = orjson.loads(from_s3)
    judges = [entry["verdict"]["judge"] for entry in document["traces"] if entry["verdict"] is not None]
    assert judges.count("kept") > 50
    assert document["summary"]["verdicts"]["pending"] == 0


def test_the_summary_is_the_same_whatever_the_partitioning(local_ray: object) -> None:
    from tracekit.analyze.engine_ray import RayEngine
    from tracekit.analyze.results import AnalyzeSettings, write_results
    from tracekit.analyze.sources import SourceNames, trace_paths
    from tracekit.application import load_case_set

    files = trace_paths([str(RECORDINGS / "flawed")])
    settings = AnalyzeSettings(load_case_set(CASES), sources=SourceNames.of([str(RECORDINGS / "flawed")]))
    documents = []
    for engine in (None, RayEngine(batch_size=7), RayEngine(batch_size=1000)):
        sink = _Sink()
        write_results(files, sink, settings, engine=engine)
        documents.append(sink.data)
    assert documents[0] == documents[1] == documents[2]
    assert orjson.loads(documents[0])["summary"]["bound_to_case"] > 50


class _Sink:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> int:
        self.data += data
        return len(data)


def test_a_two_node_cluster_writes_the_same_bytes(local_ray: object, tmp_path: Path) -> None:
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        alive = [node for node in cluster.list_all_nodes() if node.remaining_processes_alive()]
        assert len(alive) == 2
        folder = str(RECORDINGS / "reference")
        common = [folder, "--cases", str(CASES), "--no-progress"]
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        command = [sys.executable, "-m", "tracekit", "analyze", *common]
        on_cluster = subprocess.run(
            [*command, "--engine", "ray", "--ray-address", cluster.address, "--json", str(tmp_path / "ray.json")],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert on_cluster.returncode == 0, on_cluster.stderr[-2000:]
    finally:
        cluster.shutdown()
    code, output = _analyze(*common[:3], "--json", str(tmp_path / "local.json"))
    assert code == 0, output
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "local.json").read_bytes()


def _one_line_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return lines[0]


def test_an_unknown_url_scheme_is_one_line_and_exit_2() -> None:
    code, output = _analyze("nosuchscheme://bucket/traces")
    assert code == 2
    assert "unknown URL scheme nosuchscheme://" in _one_line_error(output)


def test_no_such_bucket_is_one_line_and_exit_2(s3_server: str) -> None:
    code, output = _analyze("s3://tk-no-such-bucket/traces")
    assert code == 2
    assert "s3://tk-no-such-bucket/traces" in _one_line_error(output)


def test_missing_credentials_are_one_line_and_exit_2(
    recordings_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import s3fs

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        code, output = _analyze(recordings_url)
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
    assert code == 2
    line = _one_line_error(output)
    assert "no credentials for s3://" in line and "AWS_ACCESS_KEY_ID" in line


def test_an_unreachable_cluster_is_one_line_and_exit_2() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    code, output = _analyze(str(RECORDINGS / "reference"), "--engine", "ray", "--ray-address", f"127.0.0.1:{port}")
    assert code == 2
    assert "no Ray cluster answers there" in _one_line_error(output)
