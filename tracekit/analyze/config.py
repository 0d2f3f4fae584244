"""Analysis settings: detector thresholds from ``--config FILE`` and ``--detector-option kind.key=value``.

A config file is YAML (or JSON, which is YAML)::

    detectors:
      retry_storm: {failures: 5}
      repeated_call: {min_repeats: 2}
      unused_output: {enabled: false}

Command-line options are applied after the file, so they win.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracekit.analyze.detectors.registry import DetectorOptionError, resolve_options

CONFIG_SECTIONS = ("detectors",)


def parse_detector_option(text: str) -> tuple[str, str, Any]:
    """``retry_storm.failures=5`` -> ("retry_storm", "failures", 5); the value is read as a YAML scalar
    (numbers, true/false, strings)."""
    import yaml

    name, equals, raw = text.partition("=")
    kind, dot, key = name.strip().partition(".")
    if not equals or not dot or not kind or not key:
        raise DetectorOptionError(f"--detector-option {text!r}: expected KIND.KEY=VALUE, e.g. retry_storm.failures=5")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise DetectorOptionError(f"--detector-option {text!r}: unreadable value ({exc})") from None
    return kind, key, value


def load_config(path: str | Path) -> dict[str, dict[str, Any]]:
    """The detector overrides of a config file ({kind: {key: value}}), checked against the registry."""
    from tracekit.safe_yaml import safe_load_yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DetectorOptionError(f"{path}: cannot read the config ({exc})") from None
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
    config: str | Path | None = None, options: tuple[str, ...] | list[str] = ()
) -> dict[str, dict[str, Any]]:
    """Every detector's resolved options: defaults, then the config file, then command-line options."""
    overrides: dict[str, dict[str, Any]] = load_config(config) if config is not None else {}
    for text in options:
        kind, key, value = parse_detector_option(text)
        overrides.setdefault(kind, {})[key] = value
    return resolve_options(overrides)
