"""A small, deterministic mutation fuzzer for importer inputs: every field of a real producer's JSON gets a
value of another type (or a deeply nested one), one field per mutated document.

The mutations are chosen by a seeded ``random.Random`` and capped in number, so a run is repeatable and
bounded: ``mutations(document, seed=27, limit=300)`` always yields the same documents.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

Path_ = tuple[str | int, ...]

_DEEP = "\x00deep\x00"
#: Values of other types put in place of a field's value; ``_DEEP`` stands for lists nested 300 deep (past
#: the depth orjson can write back, below the one it reads).
REPLACEMENTS: list[Any] = [
    None, True, -1, 2**63, 1e308, "", "文本\x1b]0;title\x07", [], {}, [None], {"k": None}, _DEEP,
]  # fmt: skip
DEEP_LEVELS = 300


def field_paths(document: Any) -> list[Path_]:
    """The path of every value in ``document`` (the root excluded), in document order."""
    paths: list[Path_] = []
    stack: list[tuple[Path_, Any]] = [((), document)]
    while stack:
        path, value = stack.pop()
        if path:
            paths.append(path)
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend(reversed([((*path, key), child) for key, child in children]))
    return paths


def replaced(document: Any, path: Path_, value: Any) -> Any:
    """A copy of ``document`` with the value at ``path`` replaced by ``value``."""
    result = copy.deepcopy(document)
    target = result
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return result


def encode(document: Any) -> bytes:
    """``document`` as JSON bytes, the deep-nesting marker written as lists nested ``DEEP_LEVELS`` deep."""
    text = json.dumps(document, ensure_ascii=False)
    deep = "[" * DEEP_LEVELS + "]" * DEEP_LEVELS
    return text.replace(json.dumps(_DEEP), deep).encode()


def mutations(document: Any, *, seed: int, limit: int) -> Iterator[tuple[str, bytes]]:
    """Up to ``limit`` mutated copies of ``document`` as ``(what was changed, JSON bytes)``: each field once
    with a replacement drawn from ``REPLACEMENTS`` (fields sampled evenly when there are more than
    ``limit``)."""
    rng = random.Random(seed)
    paths = field_paths(document)
    if len(paths) > limit:
        paths = sorted(rng.sample(paths, limit), key=lambda p: [str(k) for k in p])
    for path in paths:
        value = rng.choice(REPLACEMENTS)
        label = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
        yield f"{label} = {'<300 deep>' if value == _DEEP else repr(value)}", encode(replaced(document, path, value))
