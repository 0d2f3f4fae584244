"""What the scale tests share besides fixtures (a module of its own: every test folder has a conftest)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RECORDINGS = REPO / "recordings"
CASES = REPO / "cases"


def upload(folder: Path, endpoint: str, target: str, pattern: str = "*.jsonl") -> int:
    """Copy the files under ``folder`` matching ``pattern`` to the S3 URL ``target`` (keys keep their relative
    paths)."""
    import s3fs

    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": endpoint})
    count = 0
    for path in sorted(folder.rglob(pattern)):
        if path.is_file():
            fs.pipe_file(f"{target.removeprefix('s3://')}/{path.relative_to(folder).as_posix()}", path.read_bytes())
            count += 1
    return count
