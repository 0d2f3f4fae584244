"""The summary is mergeable: partitions counted apart and merged in order give the same summary, bytes and all."""

from __future__ import annotations

import pickle
import random

import pytest
from scale_support import CASES, RECORDINGS

from tracekit.analyze.results import AnalyzeSettings, analyze_file
from tracekit.analyze.sources import SourceNames, trace_paths
from tracekit.analyze.summary import Summary
from tracekit.application import load_case_set


@pytest.fixture(scope="module")
def outcomes() -> list:
    files = trace_paths([str(RECORDINGS)])
    settings = AnalyzeSettings(load_case_set(CASES), sources=SourceNames.of([str(RECORDINGS)]))
    return [analyze_file(path, settings) for path in files]


def test_any_partitioning_merges_into_the_same_summary(outcomes: list) -> None:
    whole = Summary()
    for outcome in outcomes:
        whole.add_outcome(outcome)
    expected = whole.build().to_json_bytes(indent=True)
    assert whole.build().bound_to_case > 100 and whole.skipped_judge_exchanges > 50
    chooser = random.Random(19)
    for _ in range(5):
        cuts = sorted(chooser.sample(range(1, len(outcomes)), chooser.randint(1, 30)))
        merged = Summary()
        for start, end in zip([0, *cuts], [*cuts, len(outcomes)], strict=True):
            part = Summary()
            for outcome in outcomes[start:end]:
                part.add_outcome(outcome)
            merged.merge(pickle.loads(pickle.dumps(part)))  # as it travels back from a Ray task
        assert merged.build().to_json_bytes(indent=True) == expected


def test_merging_an_empty_summary_changes_nothing(outcomes: list) -> None:
    summary = Summary()
    for outcome in outcomes[:40]:
        summary.add_outcome(outcome)
    before = summary.build().to_json_bytes()
    summary.merge(Summary())
    empty = Summary()
    empty.merge(summary)
    assert summary.build().to_json_bytes() == before == empty.build().to_json_bytes()
