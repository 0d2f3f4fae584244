"""``tracekit record --help``, ``replay --help``, ``fake-upstream --help`` and ``cases --help`` load none of the
proxy, the fake upstream or the case models (issue 20: every command's help under 0.1 s; aiohttp, pydantic and
the trace models took 0.2-0.5 s), and the proxy package's names still load on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tracekit.proxy

HEAVY = ("aiohttp", "pydantic", "tracekit.proxy.server", "tracekit.proxy.launch", "tracekit.trace", "tracekit.testing")

PROBE = """
import sys
from click.testing import CliRunner
from tracekit.cli.main import cli
result = CliRunner().invoke(cli, [{command!r}, "--help"])
assert result.exit_code == 0, result.output
assert {option!r} in result.output, result.output
print(" ".join(name for name in {heavy!r} if name in sys.modules))
"""


@pytest.mark.parametrize(
    ("command", "option"),
    [("record", "--max-body-bytes"), ("replay", "--guard"), ("fake-upstream", "--script"), ("cases", "validate")],
)
def test_help_loads_none_of_the_proxy(command: str, option: str) -> None:
    probe = PROBE.format(command=command, option=option, heavy=HEAVY)
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.split() == []


def test_every_public_name_of_the_package_loads_on_first_use() -> None:
    for name in tracekit.proxy.__all__:
        assert getattr(tracekit.proxy, name) is not None, name
    assert set(dir(tracekit.proxy)) >= set(tracekit.proxy.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = tracekit.proxy.Nothing  # type: ignore[attr-defined]


def test_replay_serves_before_loading_the_proxy_models_or_yaml() -> None:
    """What ``tracekit replay`` imports before its port opens and answers health (issue 31 item 5: start-up at
    most 0.5 s) leaves out what is imported in the background: aiohttp (the front door answers meanwhile),
    pydantic, the record models, the proxy itself and PyYAML (read only when the recordings have a
    ``replay.yaml``)."""
    probe = (
        "import sys\nimport tracekit.cli.main, tracekit.cli.replay, tracekit.proxy.launch\n"
        f"print(' '.join(name for name in {BUILT_IN_BACKGROUND!r} if name in sys.modules))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.split() == []


BUILT_IN_BACKGROUND = (
    "aiohttp", "pydantic", "yaml", "tracekit.proxy.server", "tracekit.trace.models", "tracekit.cases"
)
