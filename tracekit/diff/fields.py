"""A changed call's arguments as a reviewer reads them: one line per field that differs, ``path: old → new``.

Paths are written as in JSONPath's dot notation (``passengers[0].name``; a key that is not a plain identifier
in brackets, ``["first name"]``); a field only one side has shows the other side as absent (``None`` in
``old`` or ``new`` with ``added``/``removed`` set). Lists are compared item by item at the same index.

Example::

    field_changes({"q": "a", "n": 1}, {"q": "b", "tags": ["x"]})
    # [FieldChange(path='n', old=1, new=None, kind='removed'), FieldChange(path='q', old='a', new='b', ...),
    #  FieldChange(path='tags', old=None, new=['x'], kind='added')]
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class FieldChange:
    """One field of a call's arguments that differs between base and new."""

    path: str
    """Where, from the arguments' root (``""``: the arguments as a whole)."""
    old: Any
    new: Any
    kind: Literal["changed", "added", "removed"]


def field_changes(base: Any, new: Any) -> list[FieldChange]:
    """Every leaf that differs between two argument values, in path order (dict keys sorted)."""
    found: list[FieldChange] = []
    _walk(base, new, "", found)
    return found


def _key_path(path: str, key: str) -> str:
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _walk(old: Any, now: Any, path: str, found: list[FieldChange]) -> None:
    if isinstance(old, dict) and isinstance(now, dict):
        for key in sorted(set(old) | set(now), key=str):
            where = _key_path(path, str(key))
            if key not in now:
                found.append(FieldChange(where, old[key], None, "removed"))
            elif key not in old:
                found.append(FieldChange(where, None, now[key], "added"))
            else:
                _walk(old[key], now[key], where, found)
        return
    if isinstance(old, list) and isinstance(now, list):
        for index in range(max(len(old), len(now))):
            where = f"{path}[{index}]"
            if index >= len(now):
                found.append(FieldChange(where, old[index], None, "removed"))
            elif index >= len(old):
                found.append(FieldChange(where, None, now[index], "added"))
            else:
                _walk(old[index], now[index], where, found)
        return
    if old != now or type(old) is not type(now):
        found.append(FieldChange(path, old, now, "changed"))
