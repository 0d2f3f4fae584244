"""Write cases/README.md from the case files: the layout, then a table per dimension.

    python cases/make_readme.py          # rewrite cases/README.md
    python cases/make_readme.py --check  # exit 1 when README.md is out of date

The tables (id | seed file | section | title) are generated, so that they always match the files;
edit the text around them here, not in README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tracekit.cases.loader import load_cases
from tracekit.cases.model import Case

HERE = Path(__file__).resolve().parent

DIMENSIONS = {
    "B2": ("B2 · Tool Use（工具使用）", "b2/"),
    "Q3": ("Q3 · Efficiency（效率）", "q3/"),
    "Q1": ("Q1 · Hallucination and knowledge boundary（幻觉与知识边界）", "q1/"),
    "C4": ("C4 · Execution stability（任务执行稳态）", "c4/"),
    "TT": ("TT · Tool-selection traps（工具选择陷阱）", "traps/"),
}

INTRO = """\
# The case library

Every test case of the seeds (`../shared/seeds/` from the repository root, Chinese specifications), one YAML file each, under
the ids of DESIGN.md's contracts. Validate with `tracekit cases validate cases`; list with
`tracekit cases list [--json]`; print the JSON Schema for your editor with `tracekit cases schema`.
The Case model (`tracekit/cases/model.py`) is the authority on the format; unknown fields are errors.

| path | what |
|---|---|
| `b2/ q3/ q1/ c4/ traps/` | the cases, one folder per dimension |
| `tools/*.yaml` | the tool catalog: JSON Schemas, analyzer metadata, deterministic mock results |
| `skills/*.md` | the skill documents Group B activates |
| `assets/*.png` | the images of the multimodal cases, drawn by `assets/make_images.py` |
| `make_readme.py` | writes this file from the case files |

Seed text (user messages, injected messages, intercept and mock configs, 期望行为, 判定标准, 评分方式,
skill groups) is carried verbatim. Titles, the offered tools, the machine checks (`expect`) and the
judge rubrics were written from it. Seed 000 lost its first section heading; the B2 `TS` section is
named 工具选择准确率 from its content and ids.
"""


def table(cases: list[Case]) -> str:
    """The Markdown table of one dimension's cases, in seed order."""
    rows = ["| id | seed file | section | title |", "|---|---|---|---|"]
    for case in cases:
        title = case.title.replace("|", "\\|")
        rows.append(f"| {case.id} | `{case.seed.file}` | {case.seed.section} | {title} |")
    return "\n".join(rows)


def render(root: Path = HERE) -> str:
    """README.md's text for the library at ``root``."""
    library = load_cases(root)
    parts = [INTRO]
    for dimension, (heading, folder) in DIMENSIONS.items():
        cases = sorted((case for case in library if case.dimension == dimension), key=lambda case: case.sort_key)
        parts.append(f"## {heading}\n\nFolder `{folder}`, {len(cases)} cases.\n")
        if cases:
            parts.append(table(cases) + "\n")
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    """Write (or with --check, compare) cases/README.md."""
    text = render()
    target = HERE / "README.md"
    if "--check" in argv:
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            print("cases/README.md is out of date: run python cases/make_readme.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
