"""The application layer: what a command's options mean, decided once, handed to the engines.

A command (``tracekit analyze``, ``diff``, ``run``) and the pytest plugin build one ``Analysis`` from their
options: the PATHs (paths or fsspec URLs) decoded once, the case library loaded once (with what could not
be loaded of it), the judge assembled once (kept verdicts found beside the recordings, local or under a
URL), and the ``AnalyzeSettings`` every engine (this process, ``--jobs`` workers, Ray) analyzes with. The
commands only parse options, print and exit; nothing here prints or knows click.

Example::

    analysis = Analysis.build(["recordings"], cases_dir="cases")
    outcome = write_results(analysis.files, None, analysis.settings)
    print(analysis.judge_note)          # where the judge's verdicts come from
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracekit.analyze.config import detector_options as resolve_detector_options
from tracekit.analyze.judge_store import DiagnosisJudgeProvider, JudgeProvider, find_judge_store
from tracekit.analyze.results import AnalyzeSettings
from tracekit.analyze.sources import SourceNames, iter_trace_paths, trace_paths
from tracekit.errors import OptionsError, TracekitError
from tracekit.storage import is_url, join, kind, local

if TYPE_CHECKING:
    from tracekit.cases.loader import CaseSet

__all__ = ["Analysis", "kept_judge", "library_key", "load_case_set"]


def library_key(cases_dir: str | Path) -> str:
    """How the settings name a case library: an absolute path (results do not depend on the working
    directory), or the URL as given."""
    where = local(cases_dir)
    return str(where) if is_url(where) else os.path.abspath(where)


def load_case_set(cases_dir: str | Path) -> CaseSet:
    """The case library of a folder or URL (``--cases``), loaded the one time a command needs it: what analysis
    and the reports need of it, with the case files that did not load (``CaseSet.left_out``; one bad case file
    never stops the others). ``CaseError`` with every problem when nothing loads."""
    # Lazy: the case library's code (the cases' models, PyYAML) loads only when a command is given --cases.
    # Neither module imports tracekit.application: no cycle.
    from tracekit.cases.loader import collect_library
    from tracekit.cases.yaml_source import problems_error

    library, problems = collect_library(library_key(cases_dir))
    if problems and not library.entries:
        raise problems_error(problems)
    return library.case_set(str(problem) for problem in problems)


def kept_judge(
    paths: Sequence[str | Path],
    store: str | Path | None = None,
    model: str | None = None,
    offline: bool = False,
) -> tuple[JudgeProvider | None, str]:
    """The judge every door of analysis uses (``tracekit analyze``, ``tracekit run``'s summary, ``diff``, the
    pytest plugin): kept verdicts from ``store`` or, by default, from the nearest ``judge/`` folder in or above
    the recordings (paths or URLs: ``find_judge_store``), calling ``model`` for the others unless offline.
    Returns the provider (None: no judge, judged cases stay pending) and a note that says where verdicts come
    from, or that there are none. ``OptionsError`` for a model that cannot judge."""
    found = store or find_judge_store(paths)
    if found is None and model is None:
        return None, ("note: no kept judge verdicts (no judge/ folder in or above "
                      f"{', '.join(map(str, paths))}): cases scored by the judge stay pending; "
                      "give --judge-store DIR or --judge-model MODEL")  # fmt: skip
    # Lazy: the judge package (the anthropic and openai SDKs, the proxy, aiohttp) loads only when there is a judge
    # to make. It does not import tracekit.application: no cycle.
    from tracekit.judge import JudgeConfig, JudgeError, judge_hook

    try:
        config = JudgeConfig(model=model, store=found or _new_store(paths), offline=offline or model is None)
    except JudgeError as exc:
        raise OptionsError(f"--judge-model: {exc}") from exc
    note = f"judge verdicts: kept in {config.store}"
    if model is not None and not config.offline:
        note += f", others from {model}"
    elif kind(config.store) != "directory":
        note = (f"note: no kept judge verdicts in {config.store} (no such folder): "
                "cases scored by the judge stay pending")
    return partial(judge_hook, config), note


def diagnosis_judge(
    paths: Sequence[str | Path], store: str | Path | None, model: str, offline: bool = False
) -> tuple[DiagnosisJudgeProvider, str]:
    """The judge over the evidence (``--diagnose-model``): the provider of ``AnalyzeSettings.diagnosis_judge``
    and a note; its answers are kept in the same store as the case judge's. ``OptionsError`` for a model that
    cannot judge."""
    # Lazy: the judge package (the anthropic and openai SDKs, the proxy, aiohttp) loads only when a judge is asked
    # for. It does not import tracekit.application: no cycle.
    from tracekit.judge import JudgeConfig, JudgeError
    from tracekit.judge.critical_step import STORE_FOLDER, diagnosis_hook

    try:
        config = JudgeConfig(model=model, store=store or find_judge_store(paths) or _new_store(paths),
                             offline=offline)  # fmt: skip
    except JudgeError as exc:
        raise OptionsError(f"--diagnose-model: {exc}") from exc
    where = join(str(config.store), STORE_FOLDER) if is_url(str(config.store)) else Path(config.store) / STORE_FOLDER
    how = "kept only (offline)" if offline else f"kept, others from {model}"
    return partial(diagnosis_hook, config), f"diagnosis judge: {where}, {how}"


def _new_store(paths: Sequence[str | Path]) -> str | Path:
    """Where a judge model's new verdicts are kept when no store exists yet: ``judge/`` in the first PATH."""
    first = local(paths[0]) if paths else "."
    if is_url(first):
        url = str(first)
        return join(url if kind(url) == "directory" else url.rsplit("/", 1)[0], "judge")
    folder = Path(first)
    return (folder if folder.is_dir() else folder.parent) / "judge"


@dataclass
class Analysis:
    """One analysis, as the options asked for it (see the module docstring). Built by ``build``."""

    paths: tuple[str, ...]
    """The PATH arguments, ``file://`` URLs turned into paths; other URLs as given."""
    files: list[str] | Iterator[str]
    """The trace files: a list, or a stream listed as it is analyzed when a PATH is a URL."""
    settings: AnalyzeSettings
    """What every engine analyzes the files with (the case library, the judge, the detector options)."""
    judge_note: str = ""
    """Where the judge's verdicts come from, or why there are none (empty without a library)."""

    @property
    def library(self) -> CaseSet | None:
        """The case library (``--cases``), loaded once; the settings carry it to every engine."""
        return self.settings.library

    @property
    def library_problems(self) -> list[str]:
        """Case files left out of the library (``file:line: what``)."""
        return list(self.library.left_out) if self.library is not None else []

    @classmethod
    def build(
        cls,
        paths: Sequence[str | Path],
        *,
        cases_dir: str | Path | None = None,
        library: CaseSet | None = None,
        case_id: str | None = None,
        results_dir: str | Path | None = None,
        detector_options: Sequence[str] = (),
        config_path: Path | None = None,
        detector_preset: str | None = None,
        judge_store: str | Path | None = None,
        judge_model: str | None = None,
        judge_offline: bool = False,
        judge: bool = True,
        diagnose_model: str | None = None,
    ) -> Analysis:
        """Decode the options once. ``cases_dir``: the case library to load (``load_case_set``); ``library``:
        one already loaded instead (a command that analyzes several folders against it). ``results_dir``: the
        results file's folder (``trace_file`` is relative to it). ``judge=False``: no judge (judged cases
        pending). ``OptionsError`` for what the options get wrong (a PATH that is not there, an unknown case, a
        library of which nothing loads). ``diagnose_model``: the judge over the evidence of failed traces
        (``diagnosis_judge``)."""
        given = tuple(os.fspath(local(path)) for path in paths)
        try:
            options = resolve_detector_options(config_path, tuple(detector_options), detector_preset)
            streamed = any(is_url(path) for path in given)
            files: list[str] | Iterator[str] = iter_trace_paths(given) if streamed else trace_paths(given)
            if library is None and cases_dir is not None:
                library = load_case_set(cases_dir)
            if case_id is not None:
                if library is None:
                    raise OptionsError("--case needs --cases DIR (the library the case comes from)")
                if case_id not in library.cases:
                    raise OptionsError(f"--case {case_id}: no such case in {cases_dir}")
            named = frozenset(path for path in given if kind(path) != "directory")
        except TracekitError as exc:
            raise OptionsError(str(exc)) from exc
        settings = AnalyzeSettings(library, case_id, options, named_files=named,
                                   sources=SourceNames.of(given, results_dir))  # fmt: skip
        note = ""
        if library is not None and judge:
            provider, note = kept_judge(given, judge_store, judge_model, judge_offline)
            settings = replace(settings, judge=provider)
        if diagnose_model is not None:
            diagnoser, diagnose_note = diagnosis_judge(given, judge_store, diagnose_model, judge_offline)
            settings = replace(settings, diagnosis_judge=diagnoser)
            note = f"{note}\n{diagnose_note}" if note else diagnose_note
        return cls(given, files, settings, note)

    def keeping(self, **changes: Any) -> Analysis:
        """The same analysis with ``AnalyzeSettings`` fields changed (``keep_results=True`` for reports)."""
        return replace(self, settings=replace(self.settings, **changes))

