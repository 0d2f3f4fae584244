"""analyze streams a URL prefix: the first trace is analyzed before the listing has ended, and the bytes are
those of the whole list.

2,500 traces (three ListObjectsV2 pages of 1,000 keys) on the moto server; the pages the listing has asked
for are counted by botocore's own ``before-call`` event, and read when the first outcome arrives, for the
serial engine, a ``--jobs 2`` pool and a Ray engine whose window is smaller than a page.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from scale_support import RECORDINGS

from tracekit.analyze.engine_ray import RayEngine
from tracekit.analyze.results import AnalyzeSettings, FileOutcome, write_results
from tracekit.analyze.sources import SourceNames, iter_trace_paths, trace_paths
from tracekit.cli.main import cli
from tracekit.storage import filesystem

TRACES = 2500
URL = "s3://tk-streaming/runs/day1"


def _bodies() -> list[bytes]:
    return [path.read_bytes() for path in sorted((RECORDINGS / "flawed").glob("*.jsonl"))]


@pytest.fixture(scope="module")
def prefix(s3_server: str) -> str:
    """2,500 traces (the flawed recordings, over and over) under ``URL``."""
    import boto3
    import s3fs

    boto3.client("s3", endpoint_url=s3_server).create_bucket(Bucket="tk-streaming")
    bodies = _bodies()
    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": s3_server})
    where = URL.removeprefix("s3://")
    fs.pipe({f"{where}/{number:05d}.jsonl": bodies[number % len(bodies)] for number in range(TRACES)})
    s3fs.S3FileSystem.clear_instance_cache()
    return URL


def _count_pages() -> list[Any]:
    """Every ListObjectsV2 request the listing's filesystem makes from now on."""
    fs, _ = filesystem(URL)
    asyncio.run_coroutine_threadsafe(fs.set_session(), fs.loop).result()
    pages: list[Any] = []
    fs.s3.meta.events.register("before-call.s3.ListObjectsV2", lambda **kwargs: pages.append(kwargs))
    return pages


class _Sink:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> int:
        self.data += data
        return len(data)


def _settings() -> AnalyzeSettings:
    return AnalyzeSettings(sources=SourceNames.of([URL]))


def _streamed(jobs: int = 1, engine: RayEngine | None = None) -> tuple[bytes, int, int]:
    """The results of the streamed listing, the pages asked for when the first outcome arrived, and in all."""
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
    pages = _count_pages()
    at_first: list[int] = []

    def on_outcome(outcome: FileOutcome) -> None:
        if not at_first:
            at_first.append(len(pages))

    sink = _Sink()
    write_results(iter_trace_paths([URL]), sink, _settings(), jobs=jobs, on_outcome=on_outcome, engine=engine)
    return sink.data, at_first[0], len(pages)


@pytest.fixture(scope="module")
def listed(prefix: str) -> bytes:
    """The results of the whole list, made first (what ``tracekit analyze`` wrote before it streamed)."""
    files = trace_paths([prefix])
    assert len(files) == TRACES
    sink = _Sink()
    write_results(files, sink, _settings())
    return sink.data


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_first_trace_is_analyzed_before_the_listing_ends(listed: bytes, jobs: int) -> None:
    data, at_first, in_all = _streamed(jobs=jobs)
    # Three pages list 2,500 keys: when the first outcome arrived, the last two had not been asked for.
    assert in_all - at_first == 2, (at_first, in_all)
    assert data == listed
    assert len(orjson.loads(data)["traces"]) == TRACES


def test_the_ray_engine_takes_the_listing_a_window_at_a_time(listed: bytes, local_ray: object) -> None:
    data, at_first, in_all = _streamed(engine=RayEngine(batch_size=64, window=256))
    assert in_all - at_first == 2, (at_first, in_all)
    assert data == listed


def test_a_url_prefix_and_the_same_files_on_disk_give_the_same_results(
    listed: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "runs" / "day1"
    folder.mkdir(parents=True)
    bodies = _bodies()
    for number in range(TRACES):
        (folder / f"{number:05d}.jsonl").write_bytes(bodies[number % len(bodies)])
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for where, name in ((URL, "url.json"), ("runs/day1", "disk.json")):
        result = runner.invoke(cli, ["analyze", where, "--jobs", "2", "--json", name, "--no-progress"])
        assert result.exit_code == 0, result.output
    on_s3, on_disk = (orjson.loads((tmp_path / name).read_bytes()) for name in ("url.json", "disk.json"))
    assert [entry.pop("trace_file") for entry in on_s3["traces"]][:1] == [f"{URL}/00000.jsonl"]
    assert [entry.pop("trace_file") for entry in on_disk["traces"]][:1] == ["runs/day1/00000.jsonl"]
    assert on_s3 == on_disk  # the same entries in the same order, the same summary
    assert (tmp_path / "url.json").read_bytes() == listed  # the CLI, streamed to a --jobs pool: the same bytes


def test_a_streamed_run_shows_a_running_count_without_a_total(prefix: str) -> None:
    result = CliRunner().invoke(cli, ["analyze", prefix, "--progress"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Analyzing [")]
    assert len(lines) == TRACES
    assert lines[0].startswith("Analyzing [1] ") and lines[-1].startswith(f"Analyzing [{TRACES}] ")
    assert "/" not in lines[-1].split("]")[0]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_listing_that_fails_midway_is_one_line_and_exit_2(
    prefix: str, jobs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import s3fs
    from botocore.exceptions import EndpointConnectionError

    s3fs.S3FileSystem.clear_instance_cache()
    pages = _count_pages()
    fs, _ = filesystem(URL)

    def second_page_fails(**kwargs: Any) -> None:
        if kwargs["params"].get("ContinuationToken"):  # the store stops answering after the first page
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")

    fs.s3.meta.events.register("before-parameter-build.s3.ListObjectsV2", second_page_fails)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["analyze", prefix, "--jobs", jobs, "--json", "out.json", "--no-progress"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"Error: {prefix}: cannot reach the storage endpoint "
                     '(Could not connect to the endpoint URL: "http://127.0.0.1:1")'], lines  # fmt: skip
    assert len(pages) >= 2 and not (tmp_path / "out.json").exists()
