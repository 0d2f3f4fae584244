"""``tracekit record --help`` and ``tracekit replay --help`` load none of the proxy (issue 20: every command's
help under 0.1 s; the proxy with aiohttp and the trace models took 0.35-0.5 s), and the package's names still
load on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tracekit.proxy

HEAVY = ("aiohttp", "pydantic", "tracekit.proxy.server", "tracekit.proxy.launch", "tracekit.trace")

PROBE = """
import sys
from click.testing import CliRunner
from tracekit.cli.main import cli
result = CliRunner().invoke(cli, [{command!r}, "--help"])
assert result.exit_code == 0, result.output
assert "--max-body-bytes" in result.output and "--guard" in result.output, result.output
print(" ".join(name for name in {heavy!r} if name in sys.modules))
"""


@pytest.mark.parametrize("command", ["record", "replay"])
def test_help_loads_none_of_the_proxy(command: str) -> None:
    probe = PROBE.format(command=command, heavy=HEAVY)
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.split() == []


def test_every_public_name_of_the_package_loads_on_first_use() -> None:
    for name in tracekit.proxy.__all__:
        assert getattr(tracekit.proxy, name) is not None, name
    assert set(dir(tracekit.proxy)) >= set(tracekit.proxy.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = tracekit.proxy.Nothing  # type: ignore[attr-defined]
