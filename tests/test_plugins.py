"""Extension points (``tracekit.plugins``): each decorator's example runs as printed, and a package outside
``tracekit/`` adds a provider, a detector, an importer, a case check and an argument matcher through the entry
points that ``tracekit record``, ``replay``, ``analyze``, ``import`` and ``plugins`` then use (each run as a
process)."""

from __future__ import annotations

import doctest
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tracekit.plugins import EXTENSION_POINTS

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ROOT / "tests" / "data" / "outside_plugin"
ENTRY_POINTS = """\
[tracekit.providers]
plain = plain_wire:Plain

[tracekit.detectors]
greeting = outside_checks:greeting

[tracekit.importers]
lines = outside_checks:import_lines

[tracekit.checks]
answer_mentions = outside_checks:answer_mentions

[tracekit.matchers]
product_keyword = outside_checks:product_keyword
"""


@pytest.mark.parametrize("point", EXTENSION_POINTS, ids=lambda point: point.name)
def test_each_decorator_has_an_example_that_runs_as_printed(point) -> None:
    # In a process of its own: the examples register a detector, a provider, a client, an importer.
    decorator = point.decorator_function()
    assert ">>>" in (decorator.__doc__ or ""), f"{point.decorator} has no example"
    module, _, name = point.decorator.partition(":")
    program = (
        "import doctest, importlib, sys\n"
        f"function = getattr(importlib.import_module({module!r}), {name!r})\n"
        "finder = doctest.DocTestFinder(recurse=False)\n"
        "runner = doctest.DocTestRunner()\n"
        "for test in finder.find(function, globs={}):\n"
        "    runner.run(test)\n"
        "sys.exit(1 if runner.failures or not runner.tries else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_doctest_runner_fails_a_wrong_example() -> None:
    test = doctest.DocTestParser().get_doctest(">>> 1 + 1\n3\n", {}, "wrong", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda _text: None)
    assert runner.failures == 1


def docs_example() -> str:
    """The provider example of docs/architecture.md, as printed there."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- example: plain_wire\.py[^>]*-->\n```python\n(.*?)```", page, re.DOTALL)
    assert match, "docs/architecture.md: no plain_wire.py example"
    return match.group(1)


@pytest.fixture
def installed(tmp_path: Path) -> dict[str, str]:
    """A distribution outside tracekit/ on PYTHONPATH: the docs' provider and tests/data's detector and
    importer, with their entry points in a dist-info as pip would write it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "plain_wire.py").write_text(docs_example(), encoding="utf-8")
    (site / "outside_checks.py").write_text((OUTSIDE / "outside_checks.py").read_text(encoding="utf-8"), "utf-8")
    info = site / "outside_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: outside-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


class PlainUpstream(BaseHTTPRequestHandler):
    """A model API in the plain format: answers "hello, <prompt>"."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        answer = json.dumps({"id": "p-1", "model": body["model"], "text": f"hello, {body['prompt']}"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), PlainUpstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def tracekit(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tracekit", *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def serving(env: dict[str, str], *args: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``tracekit record`` / ``replay`` and read the URL it announces."""
    process = subprocess.Popen(["tracekit", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    if "listening on" not in line:
        process.kill()
        raise AssertionError(f"no URL announced: {line!r} {process.communicate()[1]}")
    return process, line.split()[-1]


def ask(url: str, prompt: str) -> dict[str, object]:
    import urllib.request

    request = urllib.request.Request(f"{url}/v1/plain", data=json.dumps({"model": "m", "prompt": prompt}).encode(),
                                     headers={"content-type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, object] = json.loads(response.read())
    return answer


def stopped(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    return err


def test_a_provider_detector_and_importer_from_outside_are_used_by_the_commands(
    installed: dict[str, str], upstream: str, tmp_path: Path
) -> None:
    listed = tracekit(installed, "plugins", "--check")
    assert listed.returncode == 0, listed.stderr
    for name, value in re.findall(r"^(\w+) = (\S+)$", ENTRY_POINTS, flags=re.MULTILINE):
        assert f"  {name} = {value}" in listed.stdout

    recordings = tmp_path / "recordings"
    process, url = serving(installed, "record", "--upstream", upstream, "--port", "0", "--out", str(recordings))
    assert ask(url, "你好") == {"id": "p-1", "model": "m", "text": "hello, 你好"}
    assert "wrote 1 sessions, 1 exchanges" in stopped(process)
    (trace,) = recordings.glob("*.jsonl")
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert records[0]["provider"] == "plain"
    assert [record["kind"] for record in records[1:]] == ["user_message", "model_call", "assistant_message"]
    assert records[-1]["content"] == [{"type": "text", "text": "hello, 你好"}]

    process, url = serving(installed, "replay", str(recordings), "--port", "0")
    assert ask(url, "你好") == {"id": "p-1", "model": "m", "text": "hello, 你好"}
    stopped(process)

    results = tmp_path / "results.json"
    analyzed = tracekit(installed, "analyze", str(recordings), "--json", str(results))
    assert analyzed.returncode == 0, analyzed.stderr
    (entry,) = json.loads(results.read_text(encoding="utf-8"))["traces"]
    assert [finding["kind"] for finding in entry["findings"]] == ["greeting"]

    transcript = tmp_path / "talk.txt"
    transcript.write_text("第一句\nsecond line\n", encoding="utf-8")
    imported = tracekit(installed, "import", "lines", str(transcript), "--out", str(tmp_path / "imported"))
    assert imported.returncode == 0, imported.stderr
    (written,) = (tmp_path / "imported").glob("*.jsonl")
    lines = [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["source"] == "import:lines"
    assert [line.get("content") for line in lines if line["kind"] == "user_message"] == ["第一句", "second line"]
    assert "lines" in tracekit(installed, "import", "--help").stdout


def case_library_naming_the_outside_check_and_matcher(tmp_path: Path, check: str) -> Path:
    """A copy of the case library whose B2-PC-01 checks its keyword with the outside matcher and its answer
    with the check named ``check``."""
    cases = tmp_path / "cases"
    shutil.copytree(ROOT / "cases", cases)
    case = cases / "b2" / "B2-PC-01.yaml"
    text = case.read_text(encoding="utf-8")
    old = "      keyword: {regex: '(?i)^\\s*airpods\\s*pro\\s*2\\s*$'}\n"
    assert old in text
    new = ("      keyword: {custom: {name: product_keyword, value: airpodspro2}}\n"
           f"  checks:\n  - {{name: {check}, value: {{word: AirPods}}}}\n")  # fmt: skip
    case.write_text(text.replace(old, new), encoding="utf-8")
    return cases


def test_a_case_check_and_an_argument_matcher_from_outside_judge_the_case(
    installed: dict[str, str], tmp_path: Path
) -> None:
    cases = case_library_naming_the_outside_check_and_matcher(tmp_path, "answer_mentions")
    results = tmp_path / "results.json"
    traces = [str(ROOT / "recordings" / run / "B2-PC-01__A__r0.jsonl") for run in ("reference", "flawed")]
    analyzed = tracekit(installed, "analyze", *traces, "--cases", str(cases), "--json", str(results))
    assert analyzed.returncode == 0, analyzed.stderr
    reference, flawed = json.loads(results.read_text(encoding="utf-8"))["traces"]
    checks = {check["check"]: check for check in reference["verdict"]["checks"]}
    assert checks["answer_mentions"] == {"check": "answer_mentions", "result": "pass",
                                         "evidence": "the answer names 'AirPods'"}  # fmt: skip
    (keyword,) = [check for name, check in checks.items() if name.startswith("calls[0]")]
    assert keyword["result"] == "pass" and "expected a keyword naming 'airpodspro2'" in keyword["evidence"]
    assert reference["verdict"]["result"] == "pass"
    assert flawed["verdict"]["result"] == "fail"


def test_a_case_naming_a_check_no_package_offers_is_left_undecided_never_passed(tmp_path: Path) -> None:
    cases = case_library_naming_the_outside_check_and_matcher(tmp_path, "not_installed")
    results = tmp_path / "results.json"
    trace = str(ROOT / "recordings" / "reference" / "B2-PC-01__A__r0.jsonl")
    analyzed = tracekit(dict(os.environ), "analyze", trace, "--cases", str(cases), "--json", str(results))
    assert analyzed.returncode == 0, analyzed.stderr
    (entry,) = json.loads(results.read_text(encoding="utf-8"))["traces"]
    checks = {check["check"]: check for check in entry["verdict"]["checks"]}
    assert checks["not_installed"]["result"] == "error"
    assert "tracekit plugins" in checks["not_installed"]["evidence"]
    (keyword,) = [check for name, check in checks.items() if name.startswith("calls[0]")]
    assert keyword["result"] == "fail" and "no argument matcher named 'product_keyword'" in keyword["evidence"]
    assert entry["verdict"]["result"] != "pass"


def test_an_installed_extension_that_cannot_load_is_named_with_exit_status_2(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[tracekit.detectors]\nnothing = no_such_module:nothing\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(site)}
    checked = tracekit(env, "plugins", "--check")
    assert checked.returncode == 2
    assert "'nothing' is installed as 'no_such_module:nothing'" in checked.stderr
    analyzed = tracekit(env, "analyze", str(ROOT / "recordings"), "--json", str(tmp_path / "r.json"))
    assert analyzed.returncode == 2 and "no_such_module" in analyzed.stderr and "Traceback" not in analyzed.stderr
