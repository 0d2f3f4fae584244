"""The report in a real browser: headless Chromium (Debian's ``chromium``) driven over the DevTools
protocol on a loopback websocket.

For the index, a case page, the trace page holding a hostile tool result, the ``tracekit diff`` index and
one of its pair pages, and the call graph of a 14-call tau-bench trace, it checks that the page
loads with no console error, no exception and no JavaScript dialog, that every request stays on
file:// (or data:), and that the hostile text is in the page as text with no script element, no
``on*`` attribute and no ``javascript:`` link. Screenshots go to ``$TRACEKIT_TEST_ARTIFACTS`` (default:
the test's temporary folder; .ci/run keeps them as CI artifacts).
"""

from __future__ import annotations

import asyncio
import base64
import io
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tracekit.report import write_reports

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install chromium; .ci/run installs it)"
)

HOSTILE_TEXT = "<script>alert(1)</script>"

_DOM_CHECK = """
(() => {
  const all = Array.from(document.querySelectorAll('*'));
  const handlers = all.filter(el => Array.from(el.attributes).some(a => a.name.toLowerCase().startsWith('on')));
  const links = Array.from(document.querySelectorAll('[href],[src]'))
    .map(el => el.getAttribute('href') || el.getAttribute('src'))
    .filter(v => v && v.trim().toLowerCase().startsWith('javascript:'));
  return JSON.stringify({
    scripts: document.querySelectorAll('script').length,
    handlers: handlers.length,
    jsLinks: links.length,
    hostileAsText: document.body.innerText.includes(HOSTILE),
    charset: document.characterSet,
    title: document.title,
    svg: document.querySelectorAll('svg.callgraph').length,
    nodes: document.querySelectorAll('svg.callgraph .node').length,
    aligned: document.querySelectorAll('table.aligned tr[class^="op-"]').length,
  });
})()
""".replace("HOSTILE", json.dumps(HOSTILE_TEXT))


class DevTools:
    """A minimal Chrome DevTools Protocol client: numbered calls, events collected per session."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self._pending:
                self._pending.pop(data["id"]).set_result(data)
            else:
                self.events.append(data)
                if data.get("method") == "Page.javascriptDialogOpening":  # a script ran: record it, unblock the page
                    asyncio.get_running_loop().create_task(
                        self.call("Page.handleJavaScriptDialog", data.get("sessionId"), accept=False)
                    )

    async def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        number = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[number] = future
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        await self._ws.send_str(json.dumps(message))
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def wait_for(self, method: str, session: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e.get("method") == method and e.get("sessionId") == session for e in self.events):
                return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"no {method} within {timeout} s")

    def of(self, session: str, *methods: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("sessionId") == session and e.get("method") in methods]

    async def close(self) -> None:
        self._reader.cancel()


async def _visit(browser_ws: str, url: str, screenshot: Path, clip: str | None = None, width: int = 1280,
                 probe: str | None = None) -> dict[str, Any]:
    """Load ``url`` in a ``width``-pixel window, check it, and screenshot it (the element matching the CSS
    selector ``clip``, when given, whole even below the fold); ``probe``: a JavaScript expression whose
    JSON value is returned as ``probe``."""
    async with aiohttp.ClientSession() as http, http.ws_connect(browser_ws, max_msg_size=0) as ws:
        cdp = DevTools(ws)
        try:
            target = await cdp.call("Target.createTarget", url="about:blank")
            session = (await cdp.call("Target.attachToTarget", targetId=target["targetId"], flatten=True))["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                await cdp.call(f"{domain}.enable", session)
            await cdp.call("Emulation.setDeviceMetricsOverride", session, width=width, height=1600,
                           deviceScaleFactor=1, mobile=False)
            await cdp.call("Page.navigate", session, url=url)
            await cdp.wait_for("Page.loadEventFired", session)
            await cdp.call("Runtime.evaluate", session, expression="document.fonts.ready.then(() => true)",
                           awaitPromise=True)  # laid out with its fonts: what a reviewer sees
            evaluated = await cdp.call("Runtime.evaluate", session, expression=_DOM_CHECK, returnByValue=True)
            probed = None
            if probe is not None:
                probed = (await cdp.call("Runtime.evaluate", session, expression=probe, returnByValue=True))["result"]
            options: dict[str, Any] = {"format": "png"}
            if clip is not None:
                box = await cdp.call("Runtime.evaluate", session, returnByValue=True, expression=(
                    f"(() => {{ const r = document.querySelector({json.dumps(clip)}).getBoundingClientRect();"
                    " return {x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width,"
                    " height: r.height}; })()"))
                options.update(clip={**box["result"]["value"], "scale": 1}, captureBeyondViewport=True)
            shot = await cdp.call("Page.captureScreenshot", session, **options)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
            await cdp.call("Target.closeTarget", targetId=target["targetId"])
            return {
                "dom": json.loads(evaluated["result"]["value"]),
                "console_errors": [
                    e["params"] for e in cdp.of(session, "Runtime.consoleAPICalled")
                    if e["params"].get("type") in ("error", "assert")
                ],
                "exceptions": [e["params"] for e in cdp.of(session, "Runtime.exceptionThrown")],
                "log_errors": [
                    e["params"]["entry"] for e in cdp.of(session, "Log.entryAdded")
                    if e["params"]["entry"].get("level") == "error"
                ],
                "dialogs": cdp.of(session, "Page.javascriptDialogOpening"),
                "requests": [e["params"]["request"]["url"] for e in cdp.of(session, "Network.requestWillBeSent")],
                "probe": json.loads(probed["value"]) if probed is not None else None,
            }
        finally:
            await cdp.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A headless Chromium with remote debugging on a loopback port; yields its browser websocket URL."""
    assert CHROMIUM is not None
    profile = tmp_path_factory.mktemp("chromium-profile")
    process = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
         "--disable-extensions", "--mute-audio", f"--user-data-dir={profile}",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start (exit status {process.poll()})")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        yield f"ws://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("TRACEKIT_TEST_ARTIFACTS") or tmp_path / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize("page", ["index.html", "cases/B2-PC-02.html", "traces/B2-PC-02.A.1.html"])
def test_page_loads_clean_and_inert(
    browser: str, report_inputs: dict[str, Any], tmp_path: Path, artifacts: Path, page: str
) -> None:
    write_reports(report_inputs["results"], html_dir=tmp_path / "html", cases=report_inputs["cases"])
    url = (tmp_path / "html" / page).resolve().as_uri()
    screenshot = artifacts / ("report-" + page.replace("/", "-").replace(".html", ".png"))
    seen = asyncio.run(_visit(browser, url, screenshot))

    assert seen["console_errors"] == [] and seen["log_errors"] == [] and seen["exceptions"] == []
    assert seen["dialogs"] == []
    assert seen["requests"] and all(r.startswith(("file://", "data:")) for r in seen["requests"]), seen["requests"]
    dom = seen["dom"]
    assert dom["charset"] == "UTF-8"
    assert (dom["scripts"], dom["handlers"], dom["jsLinks"]) == (0, 0, 0)
    if page.startswith("traces/"):
        assert dom["hostileAsText"] is True
        assert dom["svg"] == 1

    _assert_not_blank(screenshot, width=1280)


def _assert_not_blank(screenshot: Path, width: int | None = None) -> None:
    from PIL import Image

    with Image.open(io.BytesIO(screenshot.read_bytes())) as image:
        if width is not None:
            assert image.size[0] == width
        assert len(image.convert("L").getcolors(maxcolors=1 << 16) or range(1 << 16)) > 10  # not a blank page


def _assert_inert(seen: dict[str, Any]) -> None:
    assert seen["console_errors"] == [] and seen["log_errors"] == [] and seen["exceptions"] == []
    assert seen["dialogs"] == []
    assert seen["requests"] and all(r.startswith(("file://", "data:")) for r in seen["requests"]), seen["requests"]
    assert seen["dom"]["charset"] == "UTF-8"
    assert (seen["dom"]["scripts"], seen["dom"]["handlers"], seen["dom"]["jsLinks"]) == (0, 0, 0)


def test_diff_index_and_a_pair_page_load_clean(
    browser: str, report_inputs: dict[str, Any], tmp_path: Path, artifacts: Path
) -> None:
    """``tracekit diff``'s HTML of the fixture's results against a baseline where B2-PC-02 A always passed
    (with one call fewer in repeat 1) and C4-LD-01 A passed: the index and the flaky pair's page."""
    import copy

    from tracekit.diff import diff_results
    from tracekit.report.diff_html import write_diff_html
    from tracekit.results.model import Results

    baseline = copy.deepcopy(report_inputs["results"])
    for item in baseline["traces"]:
        if item["trace_id"] == "t-pc02-a1":
            item["verdict"]["result"] = "pass"
            item["tool_calls"] = item["tool_calls"][:-1]
        if item["trace_id"] == "t-ld01-a0":
            item["verdict"]["result"] = "pass"
    diff = diff_results(Results.model_validate(baseline), Results.model_validate(report_inputs["results"]))
    pages = write_diff_html(tmp_path / "diff", diff, base_name="baseline.json", new_name="results.json")
    assert diff.counts["regression"] == 1  # C4-LD-01 A: pass -> acceptable
    changed = next(pair for pair in diff.pairs if any(row.op != "same" for row in pair.calls))
    assert changed.change == "flaky" and [row.op for row in changed.calls][-1] == "added"  # B2-PC-02 A#1
    targets = {"diff-index.png": pages.index, "diff-pair.png": tmp_path / "diff" / str(pages.page_of(changed))}
    for name, page in targets.items():
        seen = asyncio.run(_visit(browser, page.resolve().as_uri(), artifacts / name))
        _assert_inert(seen)
        _assert_not_blank(artifacts / name, width=1280)
    assert seen["dom"]["aligned"] == len(changed.calls) + sum(1 for row in changed.calls if row.arguments)


TAU = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"


@pytest.mark.skipif(not TAU.exists(), reason="the tau-bench trajectories are not in ../shared/data")
def test_fourteen_call_tau_bench_graph_renders(browser: str, tmp_path: Path, artifacts: Path) -> None:
    """The call graph of a real 14-call trace (tau-bench airline task 13, trial 0), imported and reported here;
    the screenshot is of the graph itself."""
    from click.testing import CliRunner

    from tracekit.cli.main import cli

    trajectories = json.loads(TAU.read_text(encoding="utf-8"))
    (chosen,) = [item for item in trajectories if (item["task_id"], item["trial"]) == (13, 0)]
    calls = sum(len(message.get("tool_calls") or []) for message in chosen["traj"] if message["role"] == "assistant")
    assert calls == 14
    (tmp_path / "airline.json").write_text(json.dumps([chosen]), encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli, ["import", "tau-bench", str(tmp_path / "airline.json"),
                               "--out", str(tmp_path / "traces")]).exit_code == 0  # fmt: skip
    result = runner.invoke(cli, ["analyze", str(tmp_path / "traces"), "--html", str(tmp_path / "html")])
    assert result.exit_code == 0, result.output
    (page,) = (tmp_path / "html" / "traces").glob("*.html")
    screenshot = artifacts / "graph-14-calls.png"
    seen = asyncio.run(_visit(browser, page.resolve().as_uri(), screenshot, clip="svg.callgraph"))
    _assert_inert(seen)
    assert (seen["dom"]["svg"], seen["dom"]["nodes"]) == (1, 14)
    _assert_not_blank(screenshot)


#: The boxes of the traces table, its header cells and the cells of its first rows, and the page's width.
_TABLE_BOXES = """
(() => {
  const box = el => { const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, width: r.width, cut: el.scrollWidth > el.clientWidth + 1}; };
  const table = document.querySelector('table.traces');
  const heads = Object.fromEntries(Array.from(table.querySelectorAll('thead th'))
    .map(th => [th.textContent, box(th)]));
  const rows = Array.from(table.querySelectorAll('tbody tr')).map(tr => Array.from(tr.cells).map(td => ({
    box: box(td), title: td.getAttribute('title') || (td.querySelector('[title]') || {getAttribute: () => null})
      .getAttribute('title'), overflows: td.scrollWidth > td.clientWidth + 1, clipped: td.classList.contains('clip')
      || td.classList.contains('why')})));
  return JSON.stringify({viewport: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
                         table: box(table), heads: heads, rows: rows});
})()
"""


def test_the_traces_table_fits_a_1400_pixel_window_with_why_and_case_visible(
    browser: str, report_inputs: dict[str, Any], tmp_path: Path, artifacts: Path
) -> None:
    """A failing check with a 1,500-character evidence in one unbroken run, a 200-character case id and a
    300-character trace id: at 1,400 px the page does not scroll sideways, every column of the traces table
    (``why`` and ``case`` last) lies inside the window, and a cut value carries its whole text in a title."""
    import copy

    results = copy.deepcopy(report_inputs["results"])
    failing = next(item for item in results["traces"] if item["trace_id"] == "t-pc02-a1")
    failing["verdict"]["checks"][1]["evidence"] = "参数" + "x" * 1500 + " 结尾"
    long_case = "B2-PC-02-" + "很长的用例编号" * 28
    for item in results["traces"]:
        if item["case_id"] == "C4-LD-01":
            item["case_id"] = long_case
            item["verdict"]["case"]["id"] = long_case
        if item["case_id"] is None:
            item["trace_id"] = "trace-" + "y" * 300
    write_reports(results, html_dir=tmp_path / "html", cases=report_inputs["cases"])
    screenshot = artifacts / "report-index-1400.png"
    seen = asyncio.run(_visit(browser, (tmp_path / "html" / "index.html").resolve().as_uri(), screenshot,
                              clip="table.traces", width=1400, probe=_TABLE_BOXES))
    _assert_inert(seen)
    boxes = seen["probe"]
    assert boxes["viewport"] == 1400 and boxes["scrollWidth"] <= 1400  # nothing sticks out to the right
    assert boxes["table"]["right"] <= 1400
    for name in ("why", "case", "trace", "verdict", "findings"):
        head = boxes["heads"][name]
        assert head["left"] >= 0 and head["right"] <= boxes["table"]["right"] + 0.5 and head["width"] >= 60, name
    why_column = list(boxes["heads"]).index("why")
    case_column = list(boxes["heads"]).index("case")
    for row in boxes["rows"]:
        for cell in row:
            assert cell["box"]["right"] <= boxes["table"]["right"] + 0.5
            if cell["overflows"]:  # cut on screen: only where the whole text is in a title
                assert cell["clipped"] and cell["title"], cell
    long_rows = [row for row in boxes["rows"] if row[case_column]["title"] == long_case]
    assert long_rows and all(row[case_column]["overflows"] for row in long_rows)
    why_titles = [row[why_column]["title"] for row in boxes["rows"] if row[why_column]["title"]]
    assert any("x" * 1500 in title for title in why_titles)
    for name, head in boxes["heads"].items():  # every header readable, none cut to "rep…"
        assert not head["cut"], name
    _assert_not_blank(screenshot)


#: The aligned-calls table of a diff pair page: its box, its first row's cells and whether any cell overflows.
_ALIGNED_BOXES = """
(() => {
  const table = document.querySelector('table.aligned');
  const box = el => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, width: r.width}; };
  const cells = Array.from(table.querySelectorAll('tbody tr')).flatMap(tr => Array.from(tr.cells));
  return JSON.stringify({viewport: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
    table: box(table), first: Array.from(table.querySelector('tbody tr').cells).map(box),
    overflowing: cells.filter(td => td.scrollWidth > td.clientWidth + 1).length});
})()
"""


def test_a_diff_pair_page_keeps_its_call_columns_wide_and_wraps_a_long_argument(
    browser: str, tmp_path: Path, artifacts: Path
) -> None:
    """The reference and flawed recordings analyzed and diffed by the CLI, the flawed search's keyword made a
    2,000-character unbroken run: at 1,280 px the mark column stays narrow, base and new share the width
    equally, the argument wraps inside its cell and the page does not scroll sideways."""
    from click.testing import CliRunner

    from tracekit.cli.main import cli

    root = Path(__file__).resolve().parents[2]
    runner = CliRunner()
    for side in ("reference", "flawed"):
        result = runner.invoke(cli, ["analyze", str(root / "recordings" / side), "--cases", str(root / "cases"),
                                     "--json", str(tmp_path / side / "results.json")])  # fmt: skip
        assert result.exit_code == 0, result.output
    flawed = tmp_path / "flawed" / "results.json"
    document = json.loads(flawed.read_text(encoding="utf-8"))
    (trace,) = [item for item in document["traces"] if item["trace_id"] == "B2-PC-01__A__r0@scripted:flawed"]
    trace["tool_calls"][0]["input"]["keyword"] = "AirPods" * 300
    flawed.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(cli, ["diff", str(tmp_path / "reference" / "results.json"), str(flawed),
                                 "--html", str(tmp_path / "diff")])  # fmt: skip
    assert result.exit_code == 0, result.output
    page = tmp_path / "diff" / "pairs" / "B2-PC-01.A.0.html"
    seen = asyncio.run(_visit(browser, page.resolve().as_uri(), artifacts / "diff-pair-long-argument.png",
                              clip="table.aligned", probe=_ALIGNED_BOXES))  # fmt: skip
    _assert_inert(seen)
    boxes = seen["probe"]
    assert boxes["scrollWidth"] <= boxes["viewport"] and boxes["table"]["right"] <= boxes["viewport"]
    mark, base, new = boxes["first"]
    assert mark["width"] <= 48  # the = + − ⇄ ~ column
    assert abs(base["width"] - new["width"]) <= 2 and base["width"] >= 0.45 * boxes["table"]["width"]
    assert boxes["overflowing"] == 0  # the long keyword wraps inside its cell


#: The single-file report's in-page links: how many lead nowhere, its embedded pages, and its width.
_SINGLE_ANCHORS = """
(() => {
  const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'));
  return JSON.stringify({
    links: links.length,
    outside: links.filter(h => !h.startsWith('#')).length,
    dangling: links.filter(h => h.startsWith('#') && !document.getElementById(h.slice(1))).length,
    embedded: Array.from(document.querySelectorAll('section.embedded')).map(s => s.id),
    scrollWidth: document.documentElement.scrollWidth,
  });
})()
"""


def test_the_single_file_loads_clean_and_its_links_stay_inside(
    browser: str, report_inputs: dict[str, Any], tmp_path: Path, artifacts: Path
) -> None:
    """``--html-single``: the file loads with no request but itself, the hostile text is text, the failing
    trace's page (with its call graph) is inside it, every link lands in it, and it fits 1,280 px."""
    single = write_reports(report_inputs["results"], html_single=tmp_path / "run.html", cases=report_inputs["cases"],
                           results_dir=report_inputs["root"]).single  # fmt: skip
    assert single is not None
    url = single.path.resolve().as_uri()
    seen = asyncio.run(_visit(browser, url, artifacts / "report-single.png", probe=_SINGLE_ANCHORS))
    _assert_inert(seen)
    assert seen["requests"] == [url]
    assert seen["dom"]["hostileAsText"] is True and seen["dom"]["svg"] == 1
    probe = seen["probe"]
    assert probe["links"] > 10 and probe["outside"] == 0 and probe["dangling"] == 0
    assert probe["embedded"] == ["trace-B2-PC-02.A.1"]
    assert probe["scrollWidth"] <= 1280
    _assert_not_blank(artifacts / "report-single.png", width=1280)
