"""Schema invariants, with no configuration: every call checked against the schema its agent declared.

A recorded model call keeps its request (``model_call.request``), and with it the tools the agent
offered the model in that request: Anthropic ``tools[].input_schema``, OpenAI Chat Completions
``tools[].function.parameters``, OpenAI Responses ``tools[].parameters``. A tool call names the model call
that issued it (``tool_call.model_call``), so each call is checked against the schema declared in the
very request that produced it: required fields, types, enums, formats, unknown keys where
``additionalProperties`` is false; and a call to a tool that request did not declare. Traces with no
request (imported conversations) can be given the schemas by the policy file (``tools:``).

Validators are made once per schema (cached by the schema's content hash), so a trace whose requests all
declare the same tools compiles each schema once in the process.

Example::

    for violation in schema_violations(trace, conversation):
        print(violation.call, violation.rule, violation.message)
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from tracekit.diagnose.violation import INVALID, Violation

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError

    from tracekit.diagnose.conversation import CallStep, Conversation
    from tracekit.trace import Trace


def declared_tools(request: Any) -> dict[str, Any] | None:
    """{tool name: input JSON Schema} of a model request, or None when it declares no tools.

    A declared tool without a schema (a provider's built-in tool, a custom grammar tool) maps to None:
    calls of it are not undeclared, and not checked."""
    if not isinstance(request, Mapping):
        return None
    tools = request.get("tools")
    if not isinstance(tools, list):
        return None
    declared: dict[str, Any] = {}
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        inner = tool.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
        name = function.get("name")
        if not isinstance(name, str):
            continue
        schema = function.get("input_schema", function.get("parameters"))
        declared[name] = schema if isinstance(schema, Mapping) else None
    return declared


def schema_violations(
    trace: Trace, conversation: Conversation, fallback: Mapping[str, Any] | None = None
) -> list[Violation]:
    """A violation per broken rule of every call's declared schema, and one per call of an undeclared tool.

    ``fallback``: {tool: schema} for calls whose model call kept no request with tools (the policy's
    ``tools``)."""
    requests = {record.index: declared_tools(record.request) for record in trace.kind("model_call")}
    violations: list[Violation] = []
    for call in conversation.calls:
        declared = requests.get(call.model_call) if call.model_call is not None else None
        if declared is None:
            declared = dict(fallback) if fallback else None
        if declared is None:
            continue
        if call.name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            violations.append(Violation(
                "schema_violation", "schema:undeclared_tool", call.step, call.index,
                f"call #{call.index} {call.name}: the request declared no tool of that name (declared: {known}); "
                "call only the tools offered.", INVALID))  # fmt: skip
            continue
        schema = declared[call.name]
        if schema is not None:
            violations.extend(_call_violations(call, schema))
    return violations


def _call_violations(call: CallStep, schema: Mapping[str, Any]) -> list[Violation]:
    validator = _validator(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))
    if validator is None:
        return []
    violations = []
    for error in sorted(validator.iter_errors(call.arguments), key=lambda e: list(e.absolute_path)):
        field = _field(error)
        rule = str(error.validator)
        violations.append(Violation(
            "schema_violation", f"schema:{rule}", call.step, call.index,
            f"call #{call.index} {call.name}: {field or 'arguments'} breaks the schema's {rule!r} rule "
            f"({_shorten(error.message)}).", INVALID))  # fmt: skip
    return violations


def _field(error: ValidationError) -> str:
    """The argument the error is about, as a dotted path (a missing or unknown key named by the error)."""
    path = ".".join(str(part) for part in error.absolute_path)
    extra: list[str] = []
    instance = error.instance
    if error.validator == "required" and isinstance(instance, Mapping):
        extra = [name for name in error.validator_value if name not in instance]
    elif error.validator == "additionalProperties" and isinstance(instance, Mapping):
        known = set(error.schema.get("properties", {}))
        extra = [name for name in instance if name not in known]
    if extra:
        names = ",".join(str(name) for name in extra)
        return f"{path}.{names}" if path else names
    return path


@lru_cache(maxsize=256)
def _validator(schema_json: bytes) -> Draft202012Validator | None:
    """A compiled validator per schema text (None for a schema that is not a valid JSON Schema)."""
    # jsonschema is imported here, on first use: it is a fifth of analyze's start-up, and most traces
    # (imported conversations) declare no schema.
    from jsonschema import Draft202012Validator, FormatChecker
    from jsonschema.exceptions import SchemaError

    schema = orjson.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return None
    return Draft202012Validator(schema, format_checker=FormatChecker())


def _shorten(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
