"""``tracekit analyze --engine ray``: the same per-trace analysis, mapped over partitions by Ray Data.

The driver lists the files (lazily, ``tracekit.storage``) and hands their names to Ray Data a window at a
time (``window`` names, ``BATCH_SIZE`` x ``WINDOW_BATCHES`` by default: one Ray Data execution each, so a
listing of a million keys is never held whole and the first results come after the first window); each Ray task
reads its files through the same storage layer and runs the same ``analyze_file`` the local engine runs,
then counts them in a ``Summary`` of its own (the map). The driver takes the partitions back in input order
(Ray Data's ``preserve_order``), writes their entries as they come and merges their summaries (the reduce):
the results document is byte for byte the local engine's on the same files, whatever the partitioning.

Without an address a local Ray is started (``num_cpus`` worker slots: all cores by default); with one
(``--ray-address HOST:PORT``, ``ray://HOST:10001`` or ``auto``) the driver joins that cluster, whose
workers must have tracekit installed and, for ``s3://`` input, credentials in their own environment.

Ray is an optional dependency (``pip install 'tracekit[ray]'``), imported only when this engine runs.

Example::

    engine = RayEngine(address=None, num_cpus=2)
    outcome = write_results(files, out, settings, engine=engine)
"""

from __future__ import annotations

import logging
import pickle
import socket
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from tracekit.analyze.feed import windows
from tracekit.analyze.summary import Summary
from tracekit.errors import EngineError

if TYPE_CHECKING:
    from tracekit.analyze.results import FileOutcome

#: Traces per Ray task: large enough that a task's overhead (a few ms) is small next to its work (about
#: 0.2 ms a trace), small enough that the progress moves and the partitions spread over the workers.
BATCH_SIZE = 256
#: Batches per Ray Data execution: the names the driver holds at once are ``BATCH_SIZE`` x this; each
#: window costs one execution's start (a fraction of a second) and waits for its slowest batch.
WINDOW_BATCHES = 64


@dataclass
class RayEngine:
    """Maps the per-trace analysis over Ray Data partitions (``results.Engine``)."""

    address: str | None = None
    num_cpus: int | None = None
    batch_size: int = BATCH_SIZE
    window: int = 0
    """Names per Ray Data execution (the most the driver holds at once; 0: ``batch_size`` x ``WINDOW_BATCHES``)."""

    def __post_init__(self) -> None:
        self.window = self.window or self.batch_size * WINDOW_BATCHES

    def partitions(
        self, files: Iterable[str], task: Callable[[str], FileOutcome]
    ) -> Iterator[tuple[list[FileOutcome], Summary]]:
        """Each partition's outcomes, in input order, with the ``Summary`` counted in the Ray task; ``files``
        is taken a window at a time (a stream is listed as it goes)."""
        ray: Any = None
        for window in windows(files, self.window):
            if ray is None:
                ray = connect(self.address, self.num_cpus)
            yield from self._window(ray, window, task)

    def _window(
        self, ray: Any, files: list[str], task: Callable[[str], FileOutcome]
    ) -> Iterator[tuple[list[FileOutcome], Summary]]:
        """One Ray Data execution over ``files``: their partitions, in order."""
        data = import_module("ray.data")
        context = data.DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False  # tracekit's own progress counts the traces on the driver
        context.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # its INFO/WARNING lines drown the summary
        blocks = max(1, -(-len(files) // self.batch_size))
        dataset = data.from_items(files, override_num_blocks=blocks).map_batches(
            _analyze_batch, fn_kwargs={"task": task}, batch_size=self.batch_size, batch_format="numpy"
        )
        try:
            for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
                for payload in batch["partition"]:
                    outcomes, counted = pickle.loads(payload)
                    yield outcomes, counted
        except ray.exceptions.RayError as exc:  # a file's own errors are outcomes: this is Ray failing
            lines = [line for line in str(exc).splitlines() if line.strip()]
            last = lines[-1] if lines else type(exc).__name__
            raise EngineError(f"--engine ray: the Ray job failed ({last})") from None


def _analyze_batch(batch: dict[str, Any], task: Callable[[str], FileOutcome]) -> dict[str, Any]:
    """The map: analyze a batch of files, count them, and pack both into one row (outcomes are Python
    objects, not columns)."""
    import numpy

    outcomes = [task(str(path)) for path in batch["item"]]
    counted = Summary()
    for outcome in outcomes:
        counted.add_outcome(outcome)
    payload = pickle.dumps((outcomes, counted), protocol=pickle.HIGHEST_PROTOCOL)
    column = numpy.empty(1, dtype=object)
    column[0] = payload
    return {"partition": column}


def connect(address: str | None, num_cpus: int | None = None) -> Any:
    """The ``ray`` module, connected: to the cluster at ``address``, or to a new local Ray. ``EngineError``
    (one line) when Ray is not installed or the cluster cannot be reached."""
    try:
        import ray
    except ImportError:
        raise EngineError("--engine ray needs Ray: pip install 'tracekit[ray]'") from None
    if address not in (None, "auto", "local"):
        _reachable(address)
    if ray.is_initialized():  # a driver already connected (a test, a notebook) keeps its Ray
        return ray
    try:
        if address is None or address == "local":
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ... with pages of detail
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EngineError(f"--ray-address {address or 'local'}: cannot start or join Ray ({detail})") from None
    return ray


def _reachable(address: str) -> None:
    """Fail in seconds, with one line, when nothing answers at the cluster's address (Ray itself retries
    for a minute before it gives up)."""
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise EngineError(f"--ray-address {address}: expected HOST:PORT, ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            pass
    except OSError as exc:
        raise EngineError(
            f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc}); start one with "
            "`ray start --head` or leave --ray-address out for a local Ray"
        ) from None
