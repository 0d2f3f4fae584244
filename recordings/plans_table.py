"""Print the table of recordings/README.md: what each scripted policy does in each case.

    python recordings/plans_table.py > /tmp/table.md
"""

from __future__ import annotations

from pathlib import Path

from tracekit.cases.loader import load_cases
from tracekit_demo.policies import plan_for
from tracekit_demo.policies.scripts import REFERENCE

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    library = load_cases(ROOT / "cases")
    print("| case | scoring | reference plan | flawed plan: failure shown |")
    print("|---|---|---|---|")
    for case in library:
        reference = plan_for("reference", case, library.catalog)
        flawed = plan_for("flawed", case, library.catalog)
        note = reference.note if case.id in REFERENCE else f"*{reference.note}*"
        print(f"| {case.id} | {case.scoring} | {note} | **{flawed.failure}**: {flawed.note} |")


if __name__ == "__main__":
    main()
