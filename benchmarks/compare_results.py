"""Compare two ``tracekit analyze --json`` outputs: byte for byte, else name the first difference.

Usage::

    python3 benchmarks/compare_results.py BASE.json NEW.json

Exit 0 when the files are byte-identical, or when the only differences are fields NEW adds (keys BASE
does not have, in objects both have, BASE's keys in BASE's order and with BASE's values); the added
fields are listed. Exit 1 at the first other difference, naming its JSON path and both values. Used to
check that a refactoring of the results model leaves the output of ``recordings/`` and of an imported
tau-bench folder unchanged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


class Different(Exception):
    """The first difference between BASE and NEW, with its JSON path."""


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "..."


def compare(base: Any, new: Any, path: str, added: set[str]) -> None:
    """Raise :class:`Different` at the first difference other than a key NEW adds; collect added keys."""
    if isinstance(base, dict) and isinstance(new, dict):
        base_keys = list(base)
        kept = [key for key in new if key in base]
        if kept != base_keys:
            missing = [key for key in base_keys if key not in new]
            if missing:
                raise Different(f"{path}: NEW lacks {missing}")
            raise Different(f"{path}: key order {base_keys} became {kept}")
        for key in new:
            if key not in base:
                added.add(f"{_generic(path)}.{key}")
        for key in base_keys:
            compare(base[key], new[key], f"{path}.{key}", added)
        return
    if isinstance(base, list) and isinstance(new, list):
        if len(base) != len(new):
            raise Different(f"{path}: {len(base)} items became {len(new)}")
        for index, (left, right) in enumerate(zip(base, new, strict=True)):
            compare(left, right, f"{path}[{index}]", added)
        return
    if type(base) is not type(new) or base != new:
        raise Different(f"{path}: {_show(base)} became {_show(new)}")


def _generic(path: str) -> str:
    """``$.traces[3].findings[0]`` -> ``$.traces[].findings[]``, so an added field is named once."""
    out, skipping = [], False
    for char in path:
        if char == "[":
            skipping = True
            out.append("[]")
        elif char == "]":
            skipping = False
        elif not skipping:
            out.append(char)
    return "".join(out)


def main(argv: list[str]) -> int:
    """Compare the two files named in ``argv``; print the verdict; 0 same (or only added), 1 different."""
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    base_bytes, new_bytes = Path(argv[0]).read_bytes(), Path(argv[1]).read_bytes()
    if base_bytes == new_bytes:
        print(f"byte-identical ({len(base_bytes)} bytes)")
        return 0
    added: set[str] = set()
    try:
        compare(json.loads(base_bytes), json.loads(new_bytes), "$", added)
    except Different as difference:
        print(f"DIFFERENT: {difference}")
        return 1
    if not added:
        print("same values, different bytes (formatting or number spelling)")
        return 1
    print("identical except added fields: " + ", ".join(sorted(added)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
