"""A prefix is listed lazily on a real S3 API: one ListObjectsV2 page (1,000 keys) at a time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tracekit.storage import filesystem, iter_files


def test_a_prefix_is_listed_a_page_at_a_time(s3_server: str, bucket: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server)
    for number in range(2500):
        client.put_object(Bucket=bucket, Key=f"traces/{number:05d}.jsonl", Body=b"")
    client.put_object(Bucket=bucket, Key="traces/readme.txt", Body=b"")
    client.put_object(Bucket=bucket, Key="traces-other/x.jsonl", Body=b"")

    fs, _ = filesystem(f"s3://{bucket}/traces")
    asyncio.run_coroutine_threadsafe(fs.set_session(), fs.loop).result()
    pages: list[Any] = []
    fs.s3.meta.events.register("before-call.s3.ListObjectsV2", lambda **kwargs: pages.append(kwargs))

    listing = iter_files(f"s3://{bucket}/traces", ".jsonl")
    first = next(listing)
    assert first == f"s3://{bucket}/traces/00000.jsonl"
    assert len(pages) == 1, "the first name came after one page, not after the whole listing"
    rest = list(listing)
    assert len(rest) == 2499 and rest[-1] == f"s3://{bucket}/traces/02499.jsonl"
    assert len(pages) == 3


@pytest.mark.parametrize("name", ["traces", "traces/"])
def test_a_prefix_with_or_without_its_slash_lists_the_same(s3_server: str, bucket: str, name: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server)
    for key in ("traces/a.jsonl", "traces/sub/b.jsonl", "tracesX/c.jsonl"):
        client.put_object(Bucket=bucket, Key=key, Body=b"")
    assert list(iter_files(f"s3://{bucket}/{name}", ".jsonl")) == [
        f"s3://{bucket}/traces/a.jsonl", f"s3://{bucket}/traces/sub/b.jsonl"
    ]
