"""Fixtures of the runner tests: the project's case library, loaded once, and a tiny stand-in model.

``canned:<text>`` is a model client registered here by decorator, as any third party would register one
(``tracekit.clients``): every job gets a fake upstream of its own that answers each turn with ``<text>``,
and the trace header says so under ``meta.canned``. It makes runs without a key and without the demo.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.cases.loader import CaseLibrary, load_cases
from tracekit.clients import ModelUse, register_model_client
from tracekit.testing import FakeEndpoint, FakeModelClient

ROOT = Path(__file__).resolve().parents[2]


@register_model_client("canned")
class CannedModel(FakeModelClient):
    """``canned:<text>``: a stand-in answering every turn with ``<text>``."""

    def __init__(self, model: str) -> None:
        super().__init__()
        self.text = model.partition(":")[2]

    def declines(self, use: ModelUse) -> str | None:
        return None if self.text else "give the text to answer after 'canned:'"

    def open(self, use: ModelUse) -> FakeEndpoint:
        case_id = use.case.id if use.case is not None else None
        return FakeEndpoint([self.text] * 50, meta={"canned": {"case": case_id, "text": self.text}})


@pytest.fixture(scope="session")
def library() -> CaseLibrary:
    """The case library in cases/ (the same one the committed recordings were made from)."""
    return load_cases(ROOT / "cases")
