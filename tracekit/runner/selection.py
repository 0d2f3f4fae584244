"""Which cases a run covers: case ids, id prefixes, ``all``, or case file paths."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tracekit.cases.loader import CaseLibrary, load_case
from tracekit.cases.model import Case
from tracekit.errors import CaseError


def select_cases(library: CaseLibrary, specs: Iterable[str]) -> list[Case]:
    """The cases named by ``specs``, in library order, each once.

    A spec is ``all``, a case id (``CASE-01``), an id prefix (``B2-TS``, ``C4``, ``TT-``), or a path to a
    case file (``.yaml``/``.yml``; a case not in the library is loaded from the file). A spec that
    matches nothing is a CaseError naming it.
    """
    cases = library.cases
    chosen: dict[str, Case] = {}
    for spec in specs:
        if spec == "all":
            chosen.update(cases)
            continue
        path = Path(spec)
        if path.suffix in (".yaml", ".yml") and path.is_file():
            case = load_case(path)
            chosen.setdefault(case.id, cases.get(case.id, case))
            continue
        if spec in cases:
            chosen.setdefault(spec, cases[spec])
            continue
        matched = [case_id for case_id in cases if case_id.startswith(spec.rstrip("-*"))]
        if not matched:
            raise CaseError(f"no case matches {spec!r} in {library.root} (give ids, id prefixes, 'all' or case files)")
        for case_id in matched:
            chosen.setdefault(case_id, cases[case_id])
    order = {case_id: number for number, case_id in enumerate(cases)}
    return sorted(chosen.values(), key=lambda case: (order.get(case.id, len(order)), case.id))
