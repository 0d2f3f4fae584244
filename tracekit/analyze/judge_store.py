"""Where analysis meets the judge: the hook it calls (made by a ``JudgeProvider``) and where kept verdicts are.

Analysis does not import the judge (it sits a layer below it). Whoever starts an analysis (the CLI, the
pytest plugin, ``tracekit run``) hands it a ``JudgeProvider``: a picklable callable that makes the
``JudgeHook`` (``tracekit.analyze.verdict``) in each process. The judge package's ``judge_hook`` is one::

    from functools import partial
    from tracekit.judge import JudgeConfig, judge_hook

    store = find_judge_store(["recordings"])               # recordings/judge, wherever tracekit runs
    provider = partial(judge_hook, JudgeConfig(model=None, store=store, offline=True))
    settings = AnalyzeSettings(library=load_cases("cases").case_set(), judge=provider)

A test can hand a plain function instead::

    def always_pass(run, checks):
        return [Check("judge", "pass", "looks right")]

    settings = AnalyzeSettings(library=library, judge=lambda: always_pass)   # serial analysis only

Kept verdicts are found from the recordings, never from the working directory: ``find_judge_store`` looks
for a ``judge/`` folder in each PATH argument (a file's own folder) and then in the folders above it, and
takes the nearest. Recordings given as a URL find their store under the URL the same way, so that the same
recordings give the same verdicts from every storage and engine.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tracekit.storage import is_url, kind, local

if TYPE_CHECKING:
    from tracekit.analyze.detectors import Finding
    from tracekit.analyze.verdict import JudgeHook
    from tracekit.results.diagnosis import Diagnosis, DiagnosisJudgement
    from tracekit.trace import Trace

#: The folder name of a store of kept judge verdicts, beside the recordings they judge.
JUDGE_FOLDER = "judge"


class JudgeProvider(Protocol):
    """Makes the judge hook analysis calls for cases scored by the judge (see the module docstring).

    It travels to worker processes under ``--jobs``, so it must pickle: a module-level function, or a
    ``functools.partial`` of one."""

    def __call__(self) -> JudgeHook:
        """The hook: (case run, machine checks) -> judged checks, or None when it cannot judge."""
        ...


class DiagnosisJudgeProvider(Protocol):
    """Makes the hook analysis calls for each diagnosed trace (``--diagnose-model``): (trace, findings, the
    rule-based diagnosis) -> the judge's ``DiagnosisJudgement``. Picklable, like ``JudgeProvider``
    (``functools.partial(tracekit.judge.critical_step.diagnosis_hook, config)``)."""

    def __call__(self) -> Callable[[Trace, list[Finding], Diagnosis], DiagnosisJudgement]:
        """The hook."""
        ...


def find_judge_store(paths: Iterable[str | Path]) -> str | Path | None:
    """The kept judge verdicts that belong to these recordings: the nearest ``judge/`` folder in a PATH
    argument (a folder, or a file's folder) or above it; None when there is none. The first PATH that has
    one decides. A PATH that is a URL (``s3://bucket/recordings``) is searched the same way, up to its
    bucket, and gives the store's URL."""
    for path in paths:
        path = local(path)
        if is_url(path):
            found = _store_under_url(str(path))
            if found is not None:
                return found
            continue
        start = Path(os.path.abspath(path))
        folder = start if start.is_dir() else start.parent
        for candidate in (folder, *folder.parents):
            store = candidate / JUDGE_FOLDER
            if store.is_dir():
                return store
    return None


def _store_under_url(url: str) -> str | None:
    """``find_judge_store`` for one URL: its folder (or its file's folder), then each folder above it."""
    scheme, _, rest = url.rstrip("/").partition("://")
    parts = rest.split("/")
    if kind(url) != "directory":
        parts = parts[:-1]
    while parts:
        candidate = f"{scheme}://{'/'.join([*parts, JUDGE_FOLDER])}"
        if kind(candidate) == "directory":
            return candidate
        parts = parts[:-1]
    return None
