"""The structure issue 13 settled, checked on the source so that it cannot drift back:

- every exception class of the package is defined in ``tracekit/errors.py`` (its docstring draws the tree),
  but for the CLI's ``InputError``, a click exception too, beside the exit statuses in ``tracekit/cli/exits.py``;
- click is the CLI's: no module under ``tracekit/`` outside ``tracekit/cli/`` imports it (issue 26);
- a function-level import of a tracekit module says why it is there (a comment at the import, or the
  module's own note that its commands import inside them to keep start-up fast), so no import hides a
  cycle the layers would refuse;
- the layers ``lint-imports`` enforces (``[tool.importlinter]`` in pyproject.toml) are the ones README.md's
  "Layout and dependencies" lists, in the same order.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tracekit"
#: The note a module gives once for all the imports inside its functions (the CLI's commands, the plugin).
MODULE_NOTE = re.compile(r"^#.*\bimported inside\b", re.MULTILINE)


def _modules() -> list[tuple[Path, str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found.append((path, text, ast.parse(text)))
    return found


#: The modules that define exception classes: the package's errors, and the CLI's one click exception.
ERROR_MODULES = (PACKAGE / "errors.py", PACKAGE / "cli" / "exits.py")


def test_every_exception_class_is_defined_in_errors_py() -> None:
    known = set()
    for module in ERROR_MODULES:
        errors = ast.parse(module.read_text(encoding="utf-8"))
        known |= {node.name for node in errors.body if isinstance(node, ast.ClassDef)}
    assert {"TracekitError", "InputError", "GuardConfigError"} <= known
    elsewhere = []
    for path, _text, tree in _modules():
        if path in ERROR_MODULES:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "") for base in node.bases}
            if bases & known or any(re.search(r"(Error|Exception|Warning)$", base) for base in bases):
                elsewhere.append(f"{path.relative_to(ROOT)}:{node.lineno}: class {node.name}")
    assert elsewhere == []


def test_only_the_cli_imports_click() -> None:
    importers = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path, _text, tree in _modules()
        if PACKAGE / "cli" not in path.parents
        for node in ast.walk(tree)
        if _imported_roots(node) & {"click"}
    ]
    assert importers == []


def _imported_roots(node: ast.AST) -> set[str]:
    if isinstance(node, ast.ImportFrom) and node.level == 0:
        return {(node.module or "").split(".")[0]}
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    return set()


def test_every_function_level_import_of_tracekit_says_why() -> None:
    unexplained = []
    for path, text, tree in _modules():
        if MODULE_NOTE.search(text):
            continue
        lines = text.splitlines()
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if _imports_tracekit(node) and not _commented(lines, node.lineno):
                    unexplained.append(f"{path.relative_to(ROOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert unexplained == []


def test_the_checker_finds_an_unexplained_import() -> None:
    source = "def f():\n    x = 1\n    from tracekit.trace import load_trace\n    return load_trace\n"
    tree = ast.parse(source)
    node = next(node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom))
    assert _imports_tracekit(node) and not _commented(source.splitlines(), node.lineno)
    explained = source.replace("    x = 1\n", "    x = 1\n    # networkx is slow to import: only when asked for\n")
    assert _commented(explained.splitlines(), node.lineno + 1)


def test_the_import_layers_are_the_readme_layers() -> None:
    # The one layers contract of [tool.importlinter] (read without tomllib, which Python 3.10 lacks).
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (block,) = re.findall(r"^layers = \[(.*?)^\]", pyproject, flags=re.MULTILINE | re.DOTALL)
    layers = re.findall(r'"([^"]+)"', block)
    enforced = [set(re.split(r"\s*[:|]\s*", layer.strip())) for layer in reversed(layers)]
    assert _readme_layers() == enforced


def _readme_layers() -> list[set[str]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Layout and dependencies", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^\d+\. (.*(?:\n {3}.*)*)", section, flags=re.MULTILINE)
    assert items, "README.md: no numbered layer list under 'Layout and dependencies'"
    layers = []
    for item in items:
        names = re.sub(r"\([^)]*\)", "", " ".join(item.split()).split(";")[0])
        layers.append(set(re.findall(r"`([\w.]+)`", names)))
    return layers


def _imports_tracekit(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "tracekit"
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "tracekit" for alias in node.names)
    return False


def _commented(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line, or just above it (over the other imports of the same block)."""
    if "#" in lines[lineno - 1]:
        return True
    number = lineno - 2
    while number >= 0:
        line = lines[number].strip()
        if line.startswith("#"):
            return True
        if not (line.startswith(("from ", "import ")) or line.endswith(",") or line in ("", ")")):
            return False
        number -= 1
    return False
