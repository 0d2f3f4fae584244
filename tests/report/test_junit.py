"""JUnit XML: parses, follows the schema CI systems read, one testcase per case × group × repeat."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from typing import Any

from report_support import complete

from tracekit.report import render_junit, runs_from_results

# The constraints of the JUnit schema Jenkins' xunit plugin validates against (junit-10.xsd, MIT,
# jenkinsci/xunit-plugin), which other CI test reporters read too: elements, their children and their
# attributes (required ones marked), and the pattern of `time` on suites.
_SCHEMA: dict[str, tuple[set[str], set[str], set[str]]] = {
    # element: (children, attributes, required attributes)
    "testsuites": ({"testsuite"}, {"name", "time", "tests", "failures", "errors"}, set()),
    "testsuite": (
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
        {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname", "id",
         "package", "file", "log", "url"},
        {"name", "tests", "failures", "errors"},
    ),
    "testcase": (
        {"skipped", "error", "failure", "system-out", "system-err", "rerunFailure", "rerunError",
         "flakyFailure", "flakyError"},
        {"name", "time", "classname", "group"},
        {"name"},
    ),
    "failure": (set(), {"type", "message"}, set()),
    "error": (set(), {"type", "message"}, set()),
    "skipped": (set(), {"type", "message"}, set()),
    "properties": ({"property"}, set(), set()),
    "property": (set(), {"name", "value"}, {"name", "value"}),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}
_SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


def _validate(element: ET.Element) -> None:
    children, attributes, required = _SCHEMA[element.tag]
    assert set(element.attrib) <= attributes, (element.tag, set(element.attrib) - attributes)
    assert required <= set(element.attrib), (element.tag, required - set(element.attrib))
    if element.tag in ("testsuite", "testsuites") and "time" in element.attrib:
        assert _SUREFIRE_TIME.fullmatch(element.attrib["time"]), element.attrib["time"]
    for child in element:
        assert child.tag in children, (element.tag, child.tag)
        _validate(child)


def test_junit_parses_and_follows_the_schema(report_inputs: dict[str, Any]) -> None:
    xml = render_junit(runs_from_results(complete(report_inputs["results"])))
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == "testsuites"
    _validate(root)


def test_one_testcase_per_case_group_repeat(report_inputs: dict[str, Any]) -> None:
    root = ET.fromstring(render_junit(runs_from_results(complete(report_inputs["results"]))).encode())
    cases = root.findall(".//testcase")
    names = sorted(case.get("name") or "" for case in cases)
    assert names == ["B2-PC-02[A]#0", "B2-PC-02[A]#1", "B2-PC-02[B]#0", "B2-PC-02[B]#1",
                     "C4-LD-01[A]#0", "C4-LD-01[B]#0"]  # the trace bound to no case is not a test
    assert root.get("tests") == "6" and root.get("failures") == "1"
    by_name = {case.get("name"): case for case in cases}
    failure = by_name["B2-PC-02[A]#1"].find("failure")
    assert failure is not None and "数据流 city_id" in (failure.get("message") or "")
    assert "<script>" in (failure.text or "")  # escaped by the XML writer, intact when parsed
    assert by_name["C4-LD-01[B]#0"].find("skipped") is not None
    assert by_name["C4-LD-01[A]#0"].find("failure") is None
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert suites["tracekit.B2"].get("tests") == "4" and suites["tracekit.C4"].get("skipped") == "1"


def test_fail_on_acceptable_fails_acceptable_verdicts(report_inputs: dict[str, Any]) -> None:
    runs = runs_from_results(complete(report_inputs["results"]))
    root = ET.fromstring(render_junit(runs, fail_on="acceptable").encode())
    assert root.get("failures") == "2"
    acceptable = next(case for case in root.iter("testcase") if case.get("name") == "C4-LD-01[A]#0")
    assert acceptable.find("failure") is not None


def test_control_characters_do_not_break_the_xml(report_inputs: dict[str, Any]) -> None:
    results = copy.deepcopy(report_inputs["results"])
    results["traces"][1]["verdict"]["checks"][1]["evidence"] = "bell \x07 and nul \x00 and 中文"
    xml = render_junit(runs_from_results(complete(results)))
    root = ET.fromstring(xml.encode())
    _validate(root)
    assert "中文" in xml


def test_system_out_is_readable_text_not_python_reprs(report_inputs: dict[str, Any]) -> None:
    root = ET.fromstring(render_junit(runs_from_results(complete(report_inputs["results"]))).encode())
    outputs = [case.findtext("system-out") or "" for case in root.iter("testcase")]
    assert outputs and all("{'" not in text and "':" not in text for text in outputs)
    assert all("tool-use score: " in text for text in outputs)
    assert any("failed check 数据流 city_id" in text for text in outputs)
