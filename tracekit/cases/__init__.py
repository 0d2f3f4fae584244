"""The case library: the Case model, safe YAML loading, lints, relative dates and the tool catalog.

The Case model is assembled from one module per concept: ``context`` (provenance, context, input),
``injections`` (intercepts, mocks, transport faults), ``matchers`` (expected calls and argument matchers),
``tiers``, ``expect`` (the machine checks), ``scoring`` (criteria, judge, skill groups) and ``model``
(the Case itself). Every public name is importable from here.
"""

from tracekit.cases.base import CASE_ID_PATTERN, NO_TOOL, SECTION_ORDER, Dimension, StrictModel
from tracekit.cases.catalog import (
    Catalog,
    MockResponse,
    Suitability,
    ToolFamily,
    ToolSpec,
    load_catalog,
    load_catalog_into,
)
from tracekit.cases.context import CaseInput, Context, ImageRef, SeedRef, SimulatedUser
from tracekit.cases.dates import DateError, DateSpan, parse_date_value, resolve_date
from tracekit.cases.expect import AnswerCheck, CallOrder, DataFlow, Expect, OrderMode, Recovery, RecoveryMode
from tracekit.cases.injections import (
    Fault,
    HttpErrorFault,
    InjectedResult,
    Intercept,
    LatencyFault,
    MockedCall,
    StreamCutFault,
    StreamErrorFault,
    ToolIntercept,
    ToolMock,
)
from tracekit.cases.lint import lint_library
from tracekit.cases.loader import CaseEntry, CaseLibrary, CaseSet, case_files, collect_library, load_case, load_cases
from tracekit.cases.matchers import MATCHER_NAMES, ArgMatcher, ExpectedCall, NamedExtension, NumberRange, OutputRef
from tracekit.cases.model import Case
from tracekit.cases.scoring import Bound, Criteria, Judge, Scoring, SkillGroup, Skills, Tiers, ToolTiers
from tracekit.cases.tool_schema import check_value, property_schema
from tracekit.cases.yaml_source import Problem

__all__ = [
    "CASE_ID_PATTERN",
    "MATCHER_NAMES",
    "NO_TOOL",
    "SECTION_ORDER",
    "AnswerCheck",
    "ArgMatcher",
    "Bound",
    "CallOrder",
    "Case",
    "CaseEntry",
    "CaseInput",
    "CaseLibrary",
    "CaseSet",
    "Catalog",
    "Context",
    "Criteria",
    "DataFlow",
    "DateError",
    "DateSpan",
    "Dimension",
    "Expect",
    "ExpectedCall",
    "Fault",
    "HttpErrorFault",
    "ImageRef",
    "InjectedResult",
    "Intercept",
    "Judge",
    "LatencyFault",
    "MockResponse",
    "MockedCall",
    "NamedExtension",
    "NumberRange",
    "OrderMode",
    "OutputRef",
    "Problem",
    "Recovery",
    "RecoveryMode",
    "Scoring",
    "SeedRef",
    "SimulatedUser",
    "SkillGroup",
    "Skills",
    "StreamCutFault",
    "StreamErrorFault",
    "StrictModel",
    "Suitability",
    "Tiers",
    "ToolFamily",
    "ToolIntercept",
    "ToolMock",
    "ToolSpec",
    "ToolTiers",
    "case_files",
    "check_value",
    "collect_library",
    "lint_library",
    "load_case",
    "load_cases",
    "load_catalog",
    "load_catalog_into",
    "parse_date_value",
    "property_schema",
    "resolve_date",
]
