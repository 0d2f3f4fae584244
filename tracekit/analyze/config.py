"""Analysis settings: detector thresholds from ``--config FILE`` and ``--detector-option kind.key=value``.

A config file is YAML (or JSON, which is YAML)::

    detectors:
      retry_storm: {failures: 5}
      repeated_call: {min_repeats: 2}
      unused_output: {enabled: false}

Command-line options are applied after the file, so they win. A preset (``--detector-preset``) sets the
loop detectors the way a peer tool decides that an agent is stuck; the file and the command-line options
are applied after it. ``docs/detectors.md`` says where each preset comes from and where the defaults
differ from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracekit.analyze.detectors.registry import DetectorOptionError, resolve_options

CONFIG_SECTIONS = ("detectors",)

_OPENHANDS: dict[str, dict[str, Any]] = {
    # openhands/controller/stuck.py (StuckDetector.is_stuck, headless mode): user messages are filtered out;
    # an agent message without a tool call is an action of its own, so it breaks a back-to-back run.
    "repeated_call": {  # scenario 1: the last 4 actions and the last 4 observations identical, errors or not
        "consecutive": True, "same_outcome": True, "require_success": False, "min_repeats": 3,
        "agent_text_breaks": True,
    },
    "retry_storm": {"consecutive": True, "failures": 3, "agent_text_breaks": True},  # scenario 2: 3 errors
    "alternating_loop": {  # scenario 4: A B A B A B over the last 6 actions and observations
        "min_period": 2, "max_period": 2, "min_repeats": 3, "same_outcome": True, "agent_text_breaks": True,
    },
    "repeated_text": {"message_repeats": 3, "chunk_repeats": 0, "reset_on_user_message": False},  # monologue
}

#: Loop-detector settings that reproduce a peer's published rule, by preset name.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "openhands": _OPENHANDS,
    # Interactive mode: only the history after the last user message counts.
    "openhands-interactive": {
        kind: {**options, "reset_on_user_message": True} for kind, options in _OPENHANDS.items()
    },
    # Roo Code src/core/tools/ToolRepetitionDetector.ts: consecutive identical calls only, whatever they
    # returned; limit 3 blocks the 4th, and the counter starts again after blocking. Browser scroll actions
    # are not subject to it (isBrowserScrollAction): they neither count nor break a run.
    "roo": {
        "repeated_call": {
            "consecutive": True, "min_repeats": 3, "require_success": False, "restart_after_flag": True,
            "ignore": [
                {"tool": "browser_action", "args": {"action": "scroll_down"}},
                {"tool": "browser_action", "args": {"action": "scroll_up"}},
            ],
        },
        "retry_storm": {"enabled": False},
        "alternating_loop": {"enabled": False},
        "repeated_text": {"enabled": False},
    },
    # Gemini CLI packages/core/src/services/loopDetectionService.ts: the last k calls (k = 1..5) repeated
    # 5 times back to back, whatever they returned, and the content loop (50 characters x 10); a new prompt
    # resets both.
    "gemini-cli": {
        "repeated_call": {
            "consecutive": True, "min_repeats": 4, "require_success": False, "reset_on_user_message": True,
        },
        "retry_storm": {"enabled": False},
        "alternating_loop": {"min_period": 2, "max_period": 5, "min_repeats": 5, "reset_on_user_message": True},
        "repeated_text": {
            "message_repeats": 0, "chunk_size": 50, "chunk_repeats": 10, "chunk_spread": 5,
            "reset_on_user_message": True,
        },
    },
}


def preset_options(name: str) -> dict[str, dict[str, Any]]:
    """The detector overrides of a preset ({kind: {key: value}}); raises ``DetectorOptionError`` for an unknown
    name."""
    try:
        preset = PRESETS[name]
    except KeyError:
        raise DetectorOptionError(f"unknown detector preset {name!r}; known: {', '.join(PRESETS)}") from None
    return {kind: dict(options) for kind, options in preset.items()}


def parse_detector_option(text: str) -> tuple[str, str, Any]:
    """``retry_storm.failures=5`` -> ("retry_storm", "failures", 5); the value is read as a YAML scalar
    (numbers, true/false, strings)."""
    name, equals, raw = text.partition("=")
    kind, dot, key = name.strip().partition(".")
    if not equals or not dot or not kind or not key:
        raise DetectorOptionError(f"--detector-option {text!r}: expected KIND.KEY=VALUE, e.g. retry_storm.failures=5")
    # YAML is imported only when an option or a config file is given: it costs 40 ms of analyze's start-up.
    import yaml

    # Lazy with PyYAML, for the same reason; safe_yaml imports nothing of tracekit.analyze: no cycle.
    from tracekit.safe_yaml import SafeLoader

    try:
        value = yaml.load(raw, Loader=SafeLoader) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise DetectorOptionError(f"--detector-option {text!r}: unreadable value ({exc})") from None
    return kind, key, value


def load_config(path: str | Path) -> dict[str, dict[str, Any]]:
    """The detector overrides of a config file ({kind: {key: value}}), checked against the registry."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DetectorOptionError(f"{path}: cannot read the config ({exc})") from None
    # Lazy: PyYAML only with a config file (40 ms of start-up, as above); no cycle, as above.
    from tracekit.safe_yaml import safe_load_yaml

    document = safe_load_yaml(text, str(path), DetectorOptionError) or {}
    if not isinstance(document, dict):
        raise DetectorOptionError(f"{path}: expected a mapping with a 'detectors' section")
    unknown = sorted(set(document) - set(CONFIG_SECTIONS))
    if unknown:
        raise DetectorOptionError(f"{path}: unknown section(s) {', '.join(unknown)}; known: detectors")
    detectors = document.get("detectors") or {}
    if not isinstance(detectors, dict) or not all(isinstance(v, dict) for v in detectors.values()):
        raise DetectorOptionError(f"{path}: 'detectors' maps each detector kind to a mapping of options")
    try:
        resolve_options(detectors)
    except DetectorOptionError as exc:
        raise DetectorOptionError(f"{path}: {exc}") from None
    return {str(kind): dict(options) for kind, options in detectors.items()}


def detector_options(
    config: str | Path | None = None, options: tuple[str, ...] | list[str] = (), preset: str | None = None
) -> dict[str, dict[str, Any]]:
    """Every detector's resolved options: defaults, then the preset, then the config file, then command-line
    options."""
    overrides: dict[str, dict[str, Any]] = preset_options(preset) if preset is not None else {}
    for kind, values in (load_config(config) if config is not None else {}).items():
        overrides.setdefault(kind, {}).update(values)
    for text in options:
        kind, key, value = parse_detector_option(text)
        overrides.setdefault(kind, {})[key] = value
    return resolve_options(overrides)
