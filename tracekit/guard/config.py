"""The guard file: what the live guard does about each finding kind and each session budget.

The shape is a contract (``docs/guard.md``)::

    findings:                 # per finding kind: record | warn | stop
      repeated_call: {action: stop}
      alternating_loop: {action: warn}
    budgets:                  # per session
      tokens: {limit: 200000, action: stop}      # input + output
      model_calls: {limit: 50, action: stop}
      tool_calls: {limit: 100, action: warn}
      seconds: {limit: 600, action: stop}
      errors: {limit: 5, action: stop}           # tool results that were errors
    detectors: {}             # the same detector options as `analyze --config`
    preset: openhands         # optional: a `--detector-preset`, applied before `detectors`

A finding kind the file does not name is recorded (``record``); a budget it does not name has no limit.
Budgets can also be given on the command line (``--guard-budget tokens=200000``, ``with_budgets``), in
place of the file's budget of the same name.
Without a file (``--guard`` alone) every finding is recorded and there is no budget (``GuardConfig()``).
The file is read with the safe YAML loader and checked by pydantic; an error names the file, the line and
the field. Only a regular file of at most ``MAX_GUARD_BYTES`` is read (a device, a FIFO or a huge file is
refused before reading); a key given twice, a boolean where a number belongs and a negative count or limit
are errors.

Example::

    config = load_guard_config("guard.yaml")
    config.action_for("repeated_call")  # 'stop'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tracekit.analyze.config import preset_options
from tracekit.analyze.detectors import REGISTRY, resolve_options
from tracekit.errors import DetectorOptionError, GuardConfigError
from tracekit.safe_yaml import SafeLoader, safe_load_yaml

Action = Literal["record", "warn", "stop"]
BUDGETS = ("tokens", "model_calls", "tool_calls", "seconds", "errors")
#: The largest guard file read (real ones are under 2 kB).
MAX_GUARD_BYTES = 256 * 1024


class FindingRule(BaseModel):
    """What to do when a detector reports a finding of one kind."""

    model_config = ConfigDict(extra="forbid")
    action: Action = Field(default="record", description="record | warn | stop")


class Budget(BaseModel):
    """A per-session limit and what to do once the session goes over it."""

    model_config = ConfigDict(extra="forbid")
    limit: float = Field(gt=0, description="The most the session may use; going over it fires the action.")
    action: Action = Field(default="stop", description="record | warn | stop")

    @field_validator("limit", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML's true is no limit of 1
            raise ValueError("expected a number, got a boolean")
        return value


class Budgets(BaseModel):
    """Per-session budgets; a budget not given has no limit."""

    model_config = ConfigDict(extra="forbid")
    tokens: Budget | None = Field(default=None, description="Input (cache included) + output tokens.")
    model_calls: Budget | None = Field(default=None, description="Model requests, the one about to be made included.")
    tool_calls: Budget | None = Field(default=None, description="Tool calls the model asked for.")
    seconds: Budget | None = Field(default=None, description="Wall time since the session's first request.")
    errors: Budget | None = Field(default=None, description="Tool results that were errors.")


class GuardConfig(BaseModel):
    """The guard file, checked (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    findings: dict[str, FindingRule] = Field(default_factory=dict, description="Action per finding kind.")
    budgets: Budgets = Field(default_factory=Budgets)
    detectors: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Detector options, as in `tracekit analyze --config`."
    )
    preset: str | None = Field(default=None, description="A detector preset, applied before `detectors`.")

    @field_validator("findings")
    @classmethod
    def _known_kinds(cls, value: dict[str, FindingRule]) -> dict[str, FindingRule]:
        unknown = sorted(set(value) - set(REGISTRY))
        if unknown:
            raise ValueError(f"unknown finding kind(s) {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
        return value

    def action_for(self, kind: str) -> Action:
        """The action for a finding of ``kind`` (``record`` when the file does not name it)."""
        rule = self.findings.get(kind)
        return rule.action if rule is not None else "record"

    def detector_options(self) -> dict[str, dict[str, Any]]:
        """Every detector's resolved options: defaults, then the preset, then ``detectors``."""
        overrides: dict[str, dict[str, Any]] = preset_options(self.preset) if self.preset else {}
        for kind, values in self.detectors.items():
            overrides.setdefault(kind, {}).update(values)
        return resolve_options(overrides)


def load_guard_config(path: str | Path | None) -> GuardConfig:
    """The guard file at ``path`` checked (the default configuration for None); raises ``GuardConfigError``."""
    if path is None:
        return GuardConfig()
    path = Path(path)
    text = _read_text(path)
    document = safe_load_yaml(text, str(path), GuardConfigError)
    if document is None:
        return GuardConfig()
    if not isinstance(document, dict):
        raise GuardConfigError(f"{path}:1: expected a mapping with findings, budgets and detectors")
    findings = document.get("findings")
    if isinstance(findings, dict):
        for kind in findings:
            if kind not in REGISTRY:
                line = _line_of(text, ["findings", str(kind)])
                raise GuardConfigError(f"{path}:{line}: findings.{kind}: unknown finding kind; known: "
                                       f"{', '.join(REGISTRY)}")  # fmt: skip
    try:
        config = GuardConfig.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = [str(part) for part in error["loc"]]
        line = _line_of(text, where)
        field = ".".join(where) or "(top level)"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise GuardConfigError(f"{path}:{line}: {field}: {message}") from None
    for kind, options in config.detectors.items():
        defaults = REGISTRY[kind].defaults if kind in REGISTRY else {}
        for key, value in options.items():
            default = defaults.get(key)
            why = None
            if isinstance(value, bool) and isinstance(default, (int, float)) and not isinstance(default, bool):
                why = f"expected a number, got {str(value).lower()}"
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
                why = f"{value} is negative; give 0 or more"
            if why:
                line = _line_of(text, ["detectors", kind, key])
                raise GuardConfigError(f"{path}:{line}: detectors.{kind}.{key}: {why}")
    try:
        config.detector_options()
    except DetectorOptionError as exc:
        line = _line_of(text, ["preset"] if "preset" in str(exc) else ["detectors"])
        raise GuardConfigError(f"{path}:{line}: {exc}") from None
    return config


def _read_text(path: Path) -> str:
    """The text of the guard file: a regular file of at most ``MAX_GUARD_BYTES``, checked before it is opened
    (opening a FIFO waits for a writer, reading /dev/zero never ends)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise GuardConfigError(f"{path}: not a regular file (a device, a FIFO or a folder); give a YAML file")
        if info.st_size > MAX_GUARD_BYTES:
            raise GuardConfigError(f"{path}: {info.st_size:,} bytes, more than a guard file may be "
                                   f"({MAX_GUARD_BYTES:,}); give the guard's YAML file")
        with open(path, "rb") as file:
            data = file.read(MAX_GUARD_BYTES + 1)  # the file may have grown since
        if len(data) > MAX_GUARD_BYTES:
            raise GuardConfigError(f"{path}: more than {MAX_GUARD_BYTES:,} bytes; give the guard's YAML file")
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GuardConfigError(f"{path}: cannot read the guard file ({exc})") from None


def with_budgets(config: GuardConfig, specs: Iterable[str]) -> GuardConfig:
    """``config`` with the budgets of ``specs`` (``NAME=LIMIT[:ACTION]``, e.g. ``tokens=200000`` or
    ``tool_calls=100:warn``; the action is ``stop`` when not given) in place of the file's budgets of
    the same names; raises ``GuardConfigError`` naming the spec that is wrong."""
    given: dict[str, Budget] = {}
    for spec in specs:
        name, _, value = spec.partition("=")
        limit, _, action = value.partition(":")
        name = name.strip()
        if name not in BUDGETS:
            raise GuardConfigError(f"budget {spec!r}: unknown budget {name!r}; known: {', '.join(BUDGETS)}")
        try:
            given[name] = Budget.model_validate({"limit": limit.strip(), "action": action.strip() or "stop"})
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"])
            raise GuardConfigError(f"budget {spec!r}: {field}: {error['msg']} (give NAME=LIMIT[:ACTION])") from None
    return config.model_copy(update={"budgets": config.budgets.model_copy(update=given)})


def _line_of(text: str, where: list[str]) -> int:
    """The 1-based line of the deepest node of ``where`` the file has (1 when none)."""
    node = yaml.compose(text, Loader=SafeLoader)  # safe: the text passed the bomb check already
    line = 1
    for key in where:
        if not isinstance(node, yaml.MappingNode):
            break
        for key_node, value_node in node.value:
            if key_node.value == key:
                line = key_node.start_mark.line + 1
                node = value_node
                break
        else:
            break
    return line
