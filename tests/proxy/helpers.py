"""Helpers for the proxy tests: a recording proxy in front of the scripted fake upstream, a replaying
proxy over the traces it wrote, and readers for those traces (raw JSON lines, no validation)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from tracekit.intercepts import InterceptConfig, config_from
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ScriptLike


@contextmanager
def recording(
    script: ScriptLike, out: Path, case: Any = None, **options: Any
) -> Iterator[tuple[FakeUpstream, RunningProxy]]:
    """A fake upstream playing ``script`` and a recording proxy in front of it writing to ``out``."""
    intercepts = config_from(case) if case is not None else InterceptConfig()
    with FakeUpstream(script) as upstream:
        config = ProxyConfig(upstream=upstream.url, out_dir=out, intercepts=intercepts,
                             redactor=options.pop("redactor", Redactor()), **options)  # fmt: skip
        with RunningProxy(config) as proxy:
            yield upstream, proxy


@contextmanager
def replaying(folder: Path, case: Any = None, **options: Any) -> Iterator[RunningProxy]:
    """A replaying proxy over the traces in ``folder`` (no upstream)."""
    intercepts = config_from(case) if case is not None else InterceptConfig()
    config = ProxyConfig(mode="replay", replay_dir=folder, intercepts=intercepts,
                         redactor=options.pop("redactor", Redactor()), **options)  # fmt: skip
    with RunningProxy(config) as proxy:
        yield proxy


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every line of a trace file as a dict."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def trace_records(folder: Path) -> list[list[dict[str, Any]]]:
    """The records of every trace file in ``folder``, files in name order."""
    return [read_records(path) for path in sorted(folder.glob("*.jsonl"))]


def kinds(records: list[dict[str, Any]]) -> list[str]:
    """The ``kind`` of each record."""
    return [record["kind"] for record in records]


def of_kind(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The records of one kind."""
    return [record for record in records if record["kind"] == kind]
