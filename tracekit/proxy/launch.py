"""What ``tracekit record`` and ``tracekit replay`` share: options to config, binding checks, running (their
options and the exit statuses are the CLI's, ``tracekit.cli.proxy_options``), and log output through the
redactor.

What they print on stderr is written too, through the redactor: a replay miss quotes the request where it
differs from the nearest recording, and an agent may have pasted its key into the prompt; an aiohttp
traceback may show a header. ``RedactingFilter`` sits on the handlers and replaces every secret the
redactor knows (at the time the line is written) in the message and in the exception text.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracekit.errors import ProxySetupError, TracekitError
from tracekit.loop_thread import stop_on_signals
from tracekit.proxy.config import ProxyConfig, check_config
from tracekit.proxy.front_door import FrontDoor
from tracekit.proxy.listening import announce_to_stdout, bind, check_host, url_of
from tracekit.proxy.matching import RUNGS, MatchRules
from tracekit.redact import Redactor, default_redactor

if TYPE_CHECKING:
    from tracekit.intercepts import InterceptConfig
    from tracekit.proxy.loading import LoadingProxy
    from tracekit.proxy.recorder import RecordingStats
    from tracekit.proxy.server import Proxy


def redactor_with(values: Iterable[str]) -> Redactor:
    """The process redactor with the ``--redact`` values added (literal, or ``re:`` + a pattern)."""
    redactor = default_redactor()
    for value in values:
        redactor.add_secret(value)
    return redactor


REPLAY_CONFIG = "replay.yaml"
"""A file beside the recordings that ``tracekit replay`` reads: ``ignore:`` (a list of path patterns) and
``builtin_rules:`` (true by default), as ``--ignore`` and ``--no-builtin-rules`` give them."""


def match_rules(directory: Path, ignore: Iterable[str], builtin: bool = True) -> MatchRules:
    """The replay ladder's rules: ``directory/replay.yaml`` when present, then the ``--ignore`` patterns."""
    patterns = list(ignore)
    config_file = directory / REPLAY_CONFIG
    if config_file.is_file():
        where = str(config_file)
        try:
            text = config_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ProxySetupError(f"{where}: cannot read it ({exc})") from exc
        # Lazy: PyYAML costs ~50 ms of the replay start-up (issue 31 item 5), and most recordings have
        # no replay.yaml. safe_yaml imports nothing of the proxy, so this hides no cycle.
        from tracekit.safe_yaml import safe_load_yaml

        document = safe_load_yaml(text, where, ProxySetupError) or {}
        if not isinstance(document, dict) or set(document) - {"ignore", "builtin_rules"}:
            raise ProxySetupError(
                f"{where}: expected a mapping with 'ignore' (a list) and 'builtin_rules' (true/false)"
            )
        listed = document.get("ignore", [])
        if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
            raise ProxySetupError(f"{where}: field 'ignore' must be a list of path patterns such as client_metadata")
        flag = document.get("builtin_rules", True)
        if not isinstance(flag, bool):
            raise ProxySetupError(f"{where}: field 'builtin_rules' must be true or false")
        patterns = listed + patterns
        builtin = builtin and flag
    return MatchRules.from_texts(patterns, builtin=builtin)


def case_config(path: Path | None) -> InterceptConfig | None:
    """The intercepts and faults of ``--case FILE`` (None without it); a bad file raises a ``TracekitError``."""
    if path is None:
        return None
    # Lazy: the case library (its models, PyYAML) loads only with --case; replay's start-up does without it.
    # tracekit.intercepts does not import this module: no cycle.
    from tracekit.intercepts import load_intercept_config

    return load_intercept_config(path)


def build_proxy(config: ProxyConfig) -> Proxy:
    """The proxy for ``config`` (replay: its recordings loaded); a ``ProxySetupError`` for what it cannot start
    with."""
    # Lazy: the proxy's modules (aiohttp's client, the providers, the record models) load here, in replay's
    # background build, after the port is open (tracekit.proxy.loading). server does not import launch: no cycle.
    from tracekit.proxy.server import Proxy

    try:
        return Proxy(config)
    except TracekitError:
        raise
    except ValueError as exc:
        raise ProxySetupError(str(exc)) from exc


def run(config: ProxyConfig, host: str, port: int, allow_remote: bool, say: Callable[[str], None]) -> None:
    """Check the bind address, build the proxy (replay: in the background, serving meanwhile, ``loading``) and
    serve until SIGTERM / SIGINT. Everything it gives ``say``
    (one line for stderr) and every log line goes through ``config.redactor``; what it cannot start with
    raises a ``TracekitError`` (``ProxySetupError`` for a bad configuration)."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    redact_logs(config.redactor)

    def echo(message: str) -> None:
        say(config.redactor.redact_text(message))

    try:
        check_host(host, allow_remote, echo)
        check_config(config)
        sock = bind(host, port)  # before the proxy: a taken port creates no --out and loads no recording
    except ValueError as exc:
        raise ProxySetupError(str(exc)) from exc
    if config.mode == "replay":
        loading = asyncio.run(_replay(config, host, sock, lambda built: _loaded(built, echo)))
        if loading is not None and loading.failure is not None:
            raise loading.failure
        if loading is None or loading.proxy is None:
            echo("tracekit replay: stopped before the recordings were loaded")
            echo(replay_summary({}, []))
            return
        proxy = loading.proxy
    else:
        try:
            proxy = build_proxy(config)
        except TracekitError:
            sock.close()
            raise
        serve, _ = _server_side()
        asyncio.run(serve(proxy, host, port, announce_to_stdout(config.mode), sock))
    errors = proxy.tracker.recording_errors
    if errors:
        echo(f"tracekit {config.mode}: {len(errors)} exchanges could not be recorded: {errors[0]!r}")
    if proxy.index is not None:
        for rung, where in proxy.loose_matches[:LISTED_MATCHES]:
            echo(f"tracekit replay: {rung:<8} answered from {where}")
        if len(proxy.loose_matches) > LISTED_MATCHES:
            echo(f"tracekit replay: ... and {len(proxy.loose_matches) - LISTED_MATCHES} more not answered exactly")
        echo(replay_summary(proxy.matches, proxy.misses))
    recorder = proxy.tracker.recorder
    if recorder is not None and (config.mode == "record" or recorder.stats.exchanges):
        echo(recording_summary(config.mode, recorder.stats, recorder.out_dir))


async def _replay(
    config: ProxyConfig, host: str, sock: socket.socket, ready: Callable[[Proxy], None]
) -> LoadingProxy | None:
    """Serve replay from ``sock`` at once and until stopped: health at the front door while aiohttp is imported
    in a thread, then the recordings loaded in the background (``LoadingProxy``), which takes over the
    connections the door held. None when a stop came before aiohttp was imported."""
    stopping = asyncio.Event()
    stop_on_signals(stopping)
    door = await FrontDoor.open(sock, config.max_connections)
    announce_to_stdout(config.mode)(url_of(host, sock.getsockname()[1]))
    importing = asyncio.ensure_future(asyncio.to_thread(_server_side))
    stop_asked = asyncio.ensure_future(stopping.wait())
    await asyncio.wait((importing, stop_asked), return_when=asyncio.FIRST_COMPLETED)
    stop_asked.cancel()
    if stopping.is_set():
        door.close()
        return None
    serve, loading_proxy = importing.result()
    loading = loading_proxy(config, lambda: build_proxy(config), ready=ready, failed=stopping.set)
    await serve(loading, host, sock.getsockname()[1], None, sock, stopping, door)
    return loading


def _server_side() -> tuple[Callable[..., Coroutine[Any, Any, None]], type[LoadingProxy]]:
    """``serve`` and ``LoadingProxy``: aiohttp's side of serving, about 0.3 s of import that replay spends
    answering health at its front door (issue 31 item 5). Nothing of the proxy imports this module, so the
    late import hides no cycle."""
    # Lazy: aiohttp's 0.3 s of import, made after replay's port answers (tracekit.proxy.front_door); no cycle, as
    # the docstring says.
    from tracekit.proxy.loading import LoadingProxy
    from tracekit.proxy.runner import serve

    return serve, LoadingProxy


#: Requests answered by a rung other than ``exact`` that replay lists by name at exit.
LISTED_MATCHES = 50


def _loaded(proxy: Proxy, echo: Callable[[str], None]) -> None:
    index = proxy.index
    if index is not None:
        echo(f"tracekit replay: {len(index)} recorded answers from {index.files} trace files")
        for problem in index.problems[:10]:
            echo(f"tracekit replay: skipped {problem}")


def replay_summary(matches: Mapping[str, int], misses: list[str]) -> str:
    """The line replay prints at exit: requests answered, by the rung that matched, and misses.

    >>> replay_summary({"exact": 3, "session": 1}, ["no recording matches ..."])
    'tracekit replay: answered 4 model requests (exact 3, volatile 0, session 1); 1 missed'
    """
    rungs = ", ".join(f"{rung} {matches.get(rung, 0)}" for rung in RUNGS)
    answered = sum(matches.values())
    return f"tracekit replay: answered {answered} model requests ({rungs}); {len(misses)} missed"


def recording_summary(mode: str, stats: RecordingStats, out_dir: Path | None) -> str:
    """What a recording wrote, in one sentence (so that an empty or unreadable recording never goes unnoticed)."""
    where = f" in {out_dir}" if out_dir is not None else ""
    text = (f"tracekit {mode}: wrote {stats.sessions} sessions, {stats.exchanges} exchanges{where} "
            f"({stats.other_routes} to other routes, {stats.unread} with model output tracekit does not read)")
    if not stats.exchanges:
        text += "; no request reached the proxy"
    elif stats.unread:
        text += "; analyze does not see those"
    return text


# -- log output through the redactor ------------------------------------------------------------------

_FORMATTER = logging.Formatter()


class RedactingFilter(logging.Filter):
    """Redacts each record's message, exception and stack text in place (it never drops a record)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        redact = self.redactor.redact_text
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = _FORMATTER.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def redact_logs(redactor: Redactor, logger: logging.Logger | None = None) -> RedactingFilter:
    """Put a ``RedactingFilter`` on every handler of ``logger`` (the root logger by default)."""
    redacting = RedactingFilter(redactor)
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(redacting)
    return redacting
