"""The one progress display: a line per finished item off a terminal, one redrawn bar on it."""

from __future__ import annotations

import io
import threading

from tracekit.progress import BAR_WIDTH, Progress


def test_one_line_per_item_off_a_terminal() -> None:
    lines = io.StringIO()
    progress = Progress(2, stream=lines, interactive=False)
    progress.advance("B2-TS-01__A__r0 end_turn")
    progress.advance("B2-TS-02__A__r0 api_error", ok=False)
    assert lines.getvalue().splitlines() == [
        "[1/2] B2-TS-01__A__r0 end_turn ok",
        "[2/2] B2-TS-02__A__r0 api_error error",
    ]
    assert (progress.done, progress.failed) == (2, 1)


def test_redrawn_bar_on_a_terminal_ends_its_line() -> None:
    out = io.StringIO()
    with Progress(4, label="Analyzing", stream=out, interactive=True) as progress:
        progress.advance("a.jsonl")
    text = out.getvalue()
    assert text.startswith("\rAnalyzing [" + "#" * (BAR_WIDTH // 4) + "." * (BAR_WIDTH - BAR_WIDTH // 4) + "] 1/4")
    assert "a.jsonl ok" in text and text.endswith("\n")


def test_wrap_counts_items_as_they_are_consumed() -> None:
    out = io.StringIO()
    progress = Progress(3, label="importing", stream=out, interactive=False)
    assert list(progress.wrap(["a", "b", "c"])) == ["a", "b", "c"]
    assert out.getvalue().splitlines() == ["importing [1/3] ok", "importing [2/3] ok", "importing [3/3] ok"]


def test_disabled_counts_without_showing() -> None:
    out = io.StringIO()
    progress = Progress(1, stream=out, enabled=False, interactive=True)
    progress.advance("x", ok=False)
    progress.close()
    assert out.getvalue() == "" and progress.failed == 1


def test_threads_count_every_item_once() -> None:
    out = io.StringIO()
    progress = Progress(400, stream=out, interactive=False)
    workers = [threading.Thread(target=lambda: [progress.advance() for _ in range(100)]) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    lines = out.getvalue().splitlines()
    assert progress.done == 400 and len(lines) == 400 and lines[-1] == "[400/400] ok"


def test_an_unknown_total_shows_a_running_count() -> None:
    out = io.StringIO()
    with Progress(None, label="Analyzing", stream=out, interactive=False) as progress:
        progress.advance("a.jsonl")
        progress.advance("b.jsonl", ok=False)
    assert out.getvalue() == "Analyzing [1] a.jsonl ok\nAnalyzing [2] b.jsonl error\n"
    redrawn = io.StringIO()
    with Progress(None, label="Analyzing", stream=redrawn, interactive=True) as progress:
        progress.advance("a.jsonl")
    assert redrawn.getvalue().startswith("\rAnalyzing [1] 00:0") and "#" not in redrawn.getvalue()
