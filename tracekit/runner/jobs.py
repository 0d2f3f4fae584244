"""The jobs of a run: which cases it covers (``select_cases``), one (case, group, repeat) triple each, and
which are already complete in the output.

A job's trace is ``DIR/<case>__<group>__r<repeat>.jsonl`` (group ``-`` for a case without skill groups).
It is written under a temporary name and renamed when the job is over, and its last record is the
``agent_run`` record that closes it: a re-run skips the jobs whose file is there and closed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from tracekit.cases.loader import CaseLibrary, load_case, nearest_ids
from tracekit.cases.model import Case
from tracekit.cases.scoring import SkillGroup
from tracekit.errors import CaseError

NO_GROUP = "-"
#: Extra sessions of one job (an external agent that opened several conversations): ``<job>~2.jsonl``.
EXTRA_SESSION_MARK = "~"


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
            nearest = nearest_ids(spec, cases)
            hint = f"did you mean {', '.join(nearest)}? " if nearest else ""
            raise CaseError(f"no case matches {spec!r} in {library.root}; {hint}"
                            "(give ids, id prefixes, 'all' or case files: `tracekit cases list` lists the ids)")
        for case_id in matched:
            chosen.setdefault(case_id, cases[case_id])
    order = {case_id: number for number, case_id in enumerate(cases)}
    return sorted(chosen.values(), key=lambda case: (order.get(case.id, len(order)), case.id))


@dataclass(frozen=True)
class Job:
    """One trial: a case, in a skill group, the ``repeat``-th time (0-based)."""

    case: Case
    group: str | None
    repeat: int

    @property
    def name(self) -> str:
        """``CASE-01__A__r0``: the trace file's stem and the ``x-tracekit-session`` value."""
        return job_name(self.case.id, self.group, self.repeat)

    @property
    def skill_group(self) -> SkillGroup | None:
        """The case's definition of this job's group."""
        return self.case.skills.groups.get(self.group) if self.group else None

    @property
    def file_name(self) -> str:
        """The trace file's name in the run folder."""
        return f"{self.name}.jsonl"


def job_name(case_id: str, group: str | None, repeat: int) -> str:
    """The name of a (case, group, repeat) triple."""
    return f"{case_id}__{group or NO_GROUP}__r{repeat}"


def case_groups(case: Case, wanted: Iterable[str] | None = None) -> list[str | None]:
    """The groups a case runs in: those it defines (``[None]`` when it defines none), narrowed to ``wanted``.

    A case that defines groups but none of the wanted ones runs in none of them (e.g. a case that defines
    only B is skipped by ``--groups A``).
    """
    defined = list(case.skills.groups)
    if not defined:
        return [None]
    if wanted is None:
        return list(defined)
    chosen = set(wanted)
    return [group for group in defined if group in chosen]


def plan_jobs(cases: Iterable[Case], groups: Iterable[str] | None = None, repeat: int = 1) -> list[Job]:
    """Every job of a run, case by case, then group, then repeat."""
    wanted = list(groups) if groups is not None else None
    return [
        Job(case, group, number)
        for case in cases
        for group in case_groups(case, wanted)
        for number in range(repeat)
    ]


def completed_jobs(out_dir: Path) -> set[str]:
    """Names of the jobs whose trace in ``out_dir`` is complete (renamed into place, closed by agent_run)."""
    if not out_dir.is_dir():
        return set()
    return {path.stem for path in out_dir.glob("*.jsonl") if EXTRA_SESSION_MARK not in path.stem and is_closed(path)}


def run_of(path: Path) -> dict[str, object]:
    """The ``meta.run`` of a trace's header (model, provider, agent): which run made it."""
    try:
        with open(path, "rb") as handle:
            header = orjson.loads(handle.readline())
    except (OSError, orjson.JSONDecodeError):
        return {}
    run = header.get("meta", {}).get("run") if isinstance(header, dict) else None
    return run if isinstance(run, dict) else {}


def is_closed(path: Path) -> bool:
    """Whether the trace file's last line is an ``agent_run`` record."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 65536))
            tail = handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        record = orjson.loads(tail)
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(record, dict) and record.get("kind") == "agent_run"
