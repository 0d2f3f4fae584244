"""Every name in every ``__all__`` of every tracekit package resolves (a lazy-export map cannot go stale),
and ``tracekit.lazy`` imports a name only when it is asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import tracekit
from tracekit.lazy import lazy_exports

PACKAGE = Path(tracekit.__file__).resolve().parent
PACKAGES = sorted(
    ".".join(("tracekit", *init.parent.relative_to(PACKAGE).parts)) for init in PACKAGE.rglob("__init__.py")
)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_all_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in getattr(module, "__all__", []) if not _resolves(module, name)]
    assert missing == []
    assert set(getattr(module, "__all__", [])) <= set(dir(module))


def _resolves(module: object, name: str) -> bool:
    try:
        getattr(module, name)
    except (AttributeError, ImportError):
        return False
    return True


def test_an_unknown_name_is_an_attribute_error() -> None:
    getattr_, _dir = lazy_exports("tracekit.runner", {"jobs": ["select_cases"]})
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr_("no_such_name")


def test_a_name_is_imported_when_asked_for() -> None:
    code = (
        "import sys, tracekit.runner as runner\n"
        "assert 'tracekit.runner.jobs' not in sys.modules\n"
        "runner.select_cases\n"
        "assert 'tracekit.runner.jobs' in sys.modules and 'select_cases' in vars(runner)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
