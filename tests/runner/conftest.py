"""Fixtures of the runner tests: the project's case library, loaded once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.cases.loader import CaseLibrary, load_cases

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def library() -> CaseLibrary:
    """The case library in cases/ (the same one the committed recordings were made from)."""
    return load_cases(ROOT / "cases")
