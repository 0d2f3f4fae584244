"""The reliability suite (issue 9): load with faults, crashes, hostile input, secrets, exposure.

Every test here carries the ``reliability`` marker, so ``pytest -m reliability`` runs the suite alone and
``pytest -m "not reliability"`` skips it. Everything runs on loopback, bounded in count and time.
"""

from __future__ import annotations

import pytest

MARKER = "reliability"  # registered in pyproject.toml [tool.pytest.ini_options]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/reliability/" in item.nodeid.replace("\\", "/"):
            item.add_marker(MARKER)
