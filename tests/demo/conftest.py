"""Fixtures of the demo's tests: the project's case library, loaded once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.cases import CaseLibrary, load_cases

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def library() -> CaseLibrary:
    """The case library in cases/ (the one the demo's policies and rules were written for)."""
    return load_cases(ROOT / "cases")
