"""Running the jobs of a run: resumable, concurrent, interruptible.

- Jobs already complete in the output folder are skipped (``tracekit.runner.jobs.completed_jobs``);
  temporary files an interrupted run left behind are removed first. Work in progress lives in a temporary
  folder outside the run folder, removed when the run ends or is interrupted.
- ``concurrency`` worker threads run jobs (each with its own proxy and its own endpoint of the model,
  e.g. an in-process stand-in's server). The workers are daemon threads and the main thread waits in
  short slices, so Ctrl-C stops the run at once: running agent processes are killed, unfinished jobs
  leave no trace file (a job's trace is renamed into place only when it is complete), and a re-run picks
  up where this one stopped.
"""

from __future__ import annotations

import dataclasses
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tracekit.progress import Progress
from tracekit.runner.external import kill_live_agents
from tracekit.runner.finalize import remove_partial
from tracekit.runner.harness import SCRATCH_DIR, JobResult, RunSettings, RunSetupError, run_job
from tracekit.runner.jobs import Job, completed_jobs, run_of


@dataclass
class RunReport:
    """What a run did."""

    jobs: list[Job]
    skipped: list[Job] = field(default_factory=list)
    """Jobs already complete in the output folder."""
    results: list[JobResult] = field(default_factory=list)
    interrupted: bool = False

    @property
    def errors(self) -> list[JobResult]:
        """Jobs that ended with an error (the agent's or the harness's)."""
        return [result for result in self.results if result.error is not None]


def run_jobs(
    jobs: list[Job],
    settings: RunSettings,
    *,
    concurrency: int = 1,
    progress: Progress | None = None,
    resume: bool = True,
    job_runner: Callable[[Job, RunSettings], JobResult] = run_job,
) -> RunReport:
    """Run every job not yet complete in ``settings.out_dir`` (see the module docstring)."""
    settings.check()
    out_dir = settings.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    remove_partial(out_dir)
    shutil.rmtree(out_dir / SCRATCH_DIR, ignore_errors=True)
    done = completed_jobs(out_dir) if resume else set()
    _check_same_run(out_dir, done, settings)
    report = RunReport(jobs, skipped=[job for job in jobs if job.name in done])
    todo = [job for job in jobs if job.name not in done]
    if not todo:
        return report
    scratch = Path(tempfile.mkdtemp(prefix="tracekit-run-"))
    settings = dataclasses.replace(settings, scratch_dir=scratch)
    pending: queue.Queue[Job] = queue.Queue()
    for job in todo:
        pending.put(job)
    finished: queue.Queue[JobResult] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                job = pending.get_nowait()
            except queue.Empty:
                return
            try:
                result = job_runner(job, settings)
            except Exception as exc:  # one broken job must not stop the run; it stays incomplete
                result = JobResult(job, None, "error", f"{type(exc).__name__}: {exc}")
            finished.put(result)

    workers = [threading.Thread(target=work, name=f"tracekit-run-{n}", daemon=True)
               for n in range(max(1, min(concurrency, len(todo))))]
    for worker in workers:
        worker.start()
    try:
        while len(report.results) < len(todo):
            try:
                result = finished.get(timeout=0.2)
            except queue.Empty:
                continue
            report.results.append(result)
            if progress is not None:
                progress.advance(f"{result.job.name} {result.stop}", ok=result.error is None)
    except KeyboardInterrupt:
        stop.set()
        kill_live_agents()
        report.interrupted = True
    finally:
        if progress is not None:
            progress.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def _check_same_run(out_dir: Path, done: set[str], settings: RunSettings) -> None:
    """Resuming is only for the same model, provider and agent: a folder of another run is an error."""
    wanted = {"model": settings.model, "provider": settings.provider, "agent": settings.agent_cmd or "reference"}
    for name in sorted(done):
        found = run_of(out_dir / f"{name}.jsonl")
        other = {key: found.get(key) for key in wanted}
        if other != wanted:
            raise RunSetupError(
                f"{out_dir / name}.jsonl was made by another run ({other}); this run is {wanted}. "
                "Use another --out folder, or remove the old traces."
            )
