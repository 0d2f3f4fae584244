"""A package outside tracekit adding a detector and an importer through the entry points (tests/test_plugins.py
installs it with ``plain_wire`` from docs/architecture.md)."""

from tracekit.analyze.detectors import Finding
from tracekit.importers.common import build_trace, new_header


def greeting(context):
    """The agent greets the user ("hello" in its last answer)."""
    if "hello" not in context.final_answer.lower():
        return []
    return [Finding("greeting", "info", [], "the agent said hello")]


def import_lines(paths, problems):
    """FILE is plain text, one user message a line: one trace per file."""
    traces = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        if not lines:
            problems.append(f"{path}:1: no line to import")
            continue
        messages = [{"role": "user", "content": line} for line in lines]
        traces.append(build_trace(new_header(path.stem, "import:lines"), messages))
    return traces


def answer_mentions(run, options):
    """A case check: the final answer names ``options["word"]``."""
    from tracekit.analyze.check import Check

    word = options["word"]
    found = word.lower() in run.final_answer.lower()
    evidence = f"the answer {'names' if found else 'lacks'} {word!r}"
    return [Check("answer_mentions", "pass" if found else "fail", evidence)]


def product_keyword(expected, value, context):
    """An argument matcher: the keyword names the product, whatever the case and spacing."""
    squeezed = "".join(str(value).split()).lower()
    return expected in squeezed, f"expected a keyword naming {expected!r}, got {value!r}"
