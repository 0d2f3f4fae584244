"""Real parts for the scale tests: an S3 API on loopback (the moto server) and a local Ray with two workers.

Both are started once per test session (Ray takes seconds to start on two cores); the fake AWS keys and the
endpoint are set in the environment only while the server runs, before Ray starts, so that Ray's workers
read the same bucket.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """The endpoint URL of a moto S3 server on a free loopback port, with fake credentials in the environment."""
    server_module = pytest.importorskip("moto.server", reason="moto[server] is in the test extra")
    pytest.importorskip("s3fs", reason="s3fs is in the test extra")
    port = _free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "testing")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        patch.setenv("AWS_ENDPOINT_URL", endpoint)
        patch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        patch.delenv("AWS_PROFILE", raising=False)
        try:
            yield endpoint
        finally:
            server.stop()


@pytest.fixture
def bucket(s3_server: str, request: pytest.FixtureRequest) -> str:
    """A new, empty bucket on the S3 server, named after the test."""
    import boto3
    import s3fs

    name = "tk-" + "".join(ch if ch.isalnum() else "-" for ch in request.node.name.lower())[:50].strip("-")
    boto3.client("s3", endpoint_url=s3_server).create_bucket(Bucket=name)
    s3fs.S3FileSystem.clear_instance_cache()
    return name


@pytest.fixture(scope="session")
def local_ray(s3_server: str) -> Iterator[object]:
    """A local Ray with two worker slots, started after the S3 environment so its workers see it."""
    ray = pytest.importorskip("ray", reason="ray[data] is in the test extra")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
