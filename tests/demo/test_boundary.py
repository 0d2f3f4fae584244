"""The demo stays outside the product: tracekit/ never imports it nor names its models or the library's case
ids, and tracekit loads it only when a ``scripted:`` model is asked for (the entry point)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

PRODUCT = Path(__file__).resolve().parents[2] / "tracekit"
CASE_ID = re.compile(r"\b(B2|Q3|Q1|C4)-[A-Z]{2}-0[0-9]|\bTT-0[0-9]")
DEMO_MODEL = re.compile(r"scripted:")


def product_files() -> list[Path]:
    return sorted(path for path in PRODUCT.rglob("*") if path.is_file() and path.suffix not in (".pyc",))


def test_no_product_module_imports_the_demo() -> None:
    importers = []
    for path in PRODUCT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            importers += [f"{path}:{node.lineno}" for name in names if name.split(".")[0] == "tracekit_demo"]
    assert importers == []


def test_the_product_names_no_demo_model_and_no_case_id() -> None:
    found = [
        f"{path.relative_to(PRODUCT.parent)}:{number}: {line.strip()}"
        for path in product_files()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if CASE_ID.search(line) or DEMO_MODEL.search(line)
    ]
    assert found == []


def test_the_demo_is_loaded_only_for_its_own_models() -> None:
    program = """
import sys
from tracekit.clients import model_client, model_client_prefixes
import tracekit.judge, tracekit.runner.harness, tracekit.cli.main
model_client("claude-sonnet-4-5"); model_client("llama3:8b")
assert "scripted" in model_client_prefixes()
assert not [name for name in sys.modules if name.startswith("tracekit_demo")], "loaded too early"
print(type(model_client("scripted:judge")).__module__)
"""
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tracekit_demo.clients"


def test_the_demo_is_a_distribution_of_its_own_plugged_in_like_any_users() -> None:
    from importlib.metadata import distribution

    product = distribution("tracekit")
    assert not [point for point in product.entry_points if point.value.startswith("tracekit_demo")]
    assert not [name for name in (product.read_text("top_level.txt") or "").split() if name == "tracekit_demo"]
    demo = distribution("tracekit-demo")
    points = [point for point in demo.entry_points if point.group == "tracekit.model_clients"]
    assert [(point.name, point.value) for point in points] == [("scripted", "tracekit_demo.clients:scripted_client")]
