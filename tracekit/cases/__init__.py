"""The case library: the Case model, safe YAML loading, lints, relative dates and the tool catalog."""

from tracekit.cases.catalog import Catalog, MockResponse, Suitability, ToolFamily, ToolSpec, load_catalog
from tracekit.cases.dates import DateError, DateSpan, parse_date_value, resolve_date
from tracekit.cases.lint import lint_library
from tracekit.cases.loader import CaseEntry, CaseLibrary, collect_library, load_case, load_cases
from tracekit.cases.model import (
    ArgMatcher,
    Case,
    CaseInput,
    Context,
    Criteria,
    Expect,
    ExpectedCall,
    Fault,
    Intercept,
    Judge,
    MockedCall,
    SkillGroup,
    Skills,
    Tiers,
    ToolIntercept,
    ToolMock,
    ToolTiers,
)
from tracekit.cases.schema_check import check_value
from tracekit.cases.yaml_source import Problem

__all__ = [
    "ArgMatcher",
    "Case",
    "CaseEntry",
    "CaseInput",
    "CaseLibrary",
    "Catalog",
    "Context",
    "Criteria",
    "DateError",
    "DateSpan",
    "Expect",
    "ExpectedCall",
    "Fault",
    "Intercept",
    "Judge",
    "MockResponse",
    "MockedCall",
    "Problem",
    "SkillGroup",
    "Skills",
    "Suitability",
    "Tiers",
    "ToolFamily",
    "ToolIntercept",
    "ToolMock",
    "ToolSpec",
    "ToolTiers",
    "check_value",
    "collect_library",
    "lint_library",
    "load_case",
    "load_cases",
    "load_catalog",
    "parse_date_value",
    "resolve_date",
]
