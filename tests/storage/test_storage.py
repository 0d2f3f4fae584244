"""tracekit.storage: local paths untouched, fsspec URLs read, listed and written whole (memory:// here;
the real S3 API is in tests/scale)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracekit.errors import StorageError
from tracekit.output import atomic_output, write_text
from tracekit.storage import is_url, iter_files, kind, local, open_read, path_size, read_bytes

fsspec = pytest.importorskip("fsspec", reason="fsspec comes with the s3 extra (test extra)")


@pytest.fixture
def memory(request: pytest.FixtureRequest) -> Iterator[str]:
    """A folder of fsspec's in-memory filesystem, removed after the test."""
    fs = fsspec.filesystem("memory")
    root = f"/tk-{request.node.name}"
    yield f"memory://{root}"
    if fs.exists(root):
        fs.rm(root, recursive=True)


def test_local_paths_and_file_urls_are_not_urls(tmp_path: Path) -> None:
    assert not is_url(str(tmp_path)) and not is_url(tmp_path)  # type: ignore[arg-type]
    assert not is_url(f"file://{tmp_path}")
    assert local(f"file://{tmp_path}/x%20y.jsonl") == f"{tmp_path}/x y.jsonl"
    assert is_url("s3://bucket/key") and is_url("memory://x") and is_url("GS://b/k")


def test_a_url_is_listed_depth_first_with_names_sorted_like_a_folder(memory: str, tmp_path: Path) -> None:
    fs = fsspec.filesystem("memory")
    names = ["b/2.jsonl", "a.jsonl", "b/1.jsonl", "b-c.jsonl", "notes.txt", "a/z.jsonl"]
    for name in names:
        fs.pipe_file(f"{memory.removeprefix('memory://')}/{name}", b"{}\n")
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"{}\n")
    from tracekit.analyze.sources import trace_paths

    listed = [url.removeprefix(memory + "/") for url in iter_files(memory, ".jsonl")]
    on_disk = [Path(path).relative_to(tmp_path).as_posix() for path in trace_paths([str(tmp_path)])]
    assert listed == on_disk == ["a/z.jsonl", "a.jsonl", "b/1.jsonl", "b/2.jsonl", "b-c.jsonl"]
    assert kind(memory) == "directory" and kind(f"{memory}/a.jsonl") == "file" and kind(f"{memory}/no") is None


def test_a_url_reads_like_a_file(memory: str) -> None:
    write_text(f"{memory}/x/中文.txt", "你好\n")
    with open_read(f"{memory}/x/中文.txt") as handle:
        assert handle.read().decode() == "你好\n"
    assert path_size(f"{memory}/x/中文.txt") == len("你好\n".encode())
    assert read_bytes(f"{memory}/x/中文.txt") == "你好\n".encode()


def test_an_upload_that_raises_leaves_the_object_as_it_was(memory: str) -> None:
    target = f"{memory}/results.json"
    write_text(target, "old")
    with pytest.raises(RuntimeError), atomic_output(target) as out:
        out.write(b"half of the new")
        raise RuntimeError("stopped halfway")
    assert read_bytes(target) == b"old"


def test_secrets_are_redacted_on_the_way_to_a_url(memory: str) -> None:
    write_text(f"{memory}/log.txt", "key sk-ant-api03-" + "A" * 90)
    assert b"sk-ant-api03-AAAA" not in read_bytes(f"{memory}/log.txt")


def test_an_unknown_scheme_and_a_missing_object_say_so_in_one_line(memory: str) -> None:
    with pytest.raises(StorageError, match=r"unknown URL scheme nosuch://"):
        list(iter_files("nosuch://bucket/x", ".jsonl"))
    with pytest.raises(StorageError, match=r"no such file, folder or bucket"), open_read(f"{memory}/missing.jsonl"):
        pass


def test_a_trace_is_loaded_from_a_url_with_its_name_intact(memory: str, tmp_path: Path) -> None:
    from tracekit.trace import Header, ToolCall, load_trace
    from tracekit.trace.io import write_trace

    local_file = tmp_path / "t.jsonl"
    try:
        write_trace(local_file, [Header(trace_id="t1"), ToolCall(index=0, message_index=1, name="s", id="c1")])
        fsspec.filesystem("memory").pipe_file(f"{memory.removeprefix('memory://')}/t.jsonl", local_file.read_bytes())
    finally:
        local_file.unlink(missing_ok=True)
    for fast in (True, False):
        trace = load_trace(f"{memory}/t.jsonl", fast=fast)
        assert trace.path == f"{memory}/t.jsonl" and trace.trace_id == "t1" and len(trace.kind("tool_call")) == 1


def test_the_core_install_imports_no_storage_ray_or_arrow_library(tmp_path: Path) -> None:
    """`import tracekit`, `tracekit --help` and a local analyze import neither fsspec, s3fs, Ray nor pyarrow."""
    repo = Path(__file__).resolve().parents[2]
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "import tracekit\n"
        "from tracekit.cli.main import cli\n"
        "assert CliRunner().invoke(cli, ['--help']).exit_code == 0\n"
        f"result = CliRunner().invoke(cli, ['analyze', {str(repo / 'recordings' / 'flawed')!r}, '--json', "
        f"{str(tmp_path / 'r.json')!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "heavy = [name for name in ('fsspec', 's3fs', 'ray', 'pyarrow', 'duckdb', 'boto3') if name in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == ""


def test_a_large_object_is_streamed_a_chunk_at_a_time(
    memory: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Past the first read, a URL is read through fsspec's file in chunks, like a large local file."""
    import tracekit.storage
    import tracekit.trace.io
    from tracekit.trace import Header, ToolCall, load_trace
    from tracekit.trace.io import write_trace

    local_file = tmp_path / "large.jsonl"
    try:
        text = {"q": "机械键盘" * 20}
        calls = [ToolCall(index=n, message_index=1, name="search", id=f"c{n}", input=text) for n in range(50)]
        write_trace(local_file, [Header(trace_id="large"), *calls])
        data = local_file.read_bytes()
    finally:
        local_file.unlink(missing_ok=True)
    fsspec.filesystem("memory").pipe_file(f"{memory.removeprefix('memory://')}/large.jsonl", data)
    monkeypatch.setattr(tracekit.storage, "FIRST_READ", 256)
    monkeypatch.setattr(tracekit.trace.io, "CHUNK_BYTES", 1024)
    assert len(data) > 10 * 1024
    for fast in (True, False):
        trace = load_trace(f"{memory}/large.jsonl", fast=fast)
        assert [call.index for call in trace.kind("tool_call")] == list(range(50)) and not trace.problems
