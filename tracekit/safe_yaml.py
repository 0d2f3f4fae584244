"""Safe YAML loading for every YAML file tracekit reads: safe constructors only, and no YAML bombs.

``yaml.safe_load`` already refuses Python objects, but not a few kB of anchors and aliases standing for
billions of nodes, nor nesting deep enough to overflow the composer's stack (libyaml's is C: a crash, not
an exception). ``yaml_shape_problem`` reads the parser's events, which is iterative, and names the line
where a file goes past the bounds, before anything recurses or expands an alias.
"""

from __future__ import annotations

from typing import Any

import yaml

from tracekit.errors import TracekitError

#: Deeper nesting is refused before composing (real case files nest about 8 deep; the composer recurses).
MAX_DEPTH = 64
#: More aliases than this, or aliases standing for more nodes than MAX_ALIAS_NODES, are refused (case files
#: use none today; a few kB of anchors and aliases can stand for billions of nodes).
MAX_ALIASES = 100
MAX_ALIAS_NODES = 10_000

#: Longer integers are refused where they are written: Python cannot print an integer of more than 4300
#: digits (a ValueError far from the file), and no case, config or script needs one.
MAX_INT_DIGITS = 1000
_INT_LIMIT = 10**MAX_INT_DIGITS

# libyaml's parser when PyYAML was built with it (several times faster), else the pure-Python one.
_EventLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SafeLoader(_EventLoader):  # type: ignore[valid-type,misc]
    """PyYAML's safe loader (libyaml's parser when there is one) whose integers are bounded and whose mappings
    hold each key once: a longer integer or a key given twice is a ``MarkedYAMLError`` naming its line, like
    any other error in the file (YAML 1.2 requires keys to be unique; PyYAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping of ``node``; refused when a key is given twice (keys merged in by ``<<`` may be
        overridden, as YAML's merge key allows)."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {key!r} (first given on line {seen[key]})", key_node.start_mark
                        )
                    seen[key] = key_node.start_mark.line + 1
                except TypeError:  # an unhashable key: construct_mapping itself says so
                    continue
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping

    def construct_bounded_int(self, node: yaml.ScalarNode) -> int:
        """The integer of ``node``; refused past ``MAX_INT_DIGITS`` digits."""
        try:
            value: int = self.construct_yaml_int(node)
        except ValueError:  # a decimal string past Python's own limit on conversion
            value = _INT_LIMIT
        if abs(value) >= _INT_LIMIT:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of more than {MAX_INT_DIGITS} digits", node.start_mark
            )
        return value


SafeLoader.add_constructor("tag:yaml.org,2002:int", SafeLoader.construct_bounded_int)


def safe_load_yaml(text: str, name: str, error: type[TracekitError] = TracekitError) -> Any:
    """Parse YAML ``text`` with the safe loader after the bomb check; raises ``error`` naming ``name``
    and the line when the text is a bomb or not YAML."""
    problem = yaml_shape_problem(text)
    if problem is not None:
        line, message = problem
        raise error(f"{name}:{line}: {message}" if line else f"{name}: {message}")
    try:
        return yaml.load(text, Loader=SafeLoader)  # safe constructors only: no Python objects
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        detail = " ".join(part for part in (exc.context, exc.problem) if part)
        raise error(f"{where}: not valid YAML: {detail}") from None
    except yaml.YAMLError as exc:
        raise error(f"{name}: not valid YAML: {exc}") from None


def yaml_shape_problem(text: str) -> tuple[int | None, str] | None:
    """``(line, message)`` when ``text`` looks like a YAML bomb, else None; read from the parser's events,
    before anything recurses or expands aliases.

    The parser is iterative; the composer is not (libyaml's overflows the C stack on 50 000 nested ``[``), and
    aliased nodes are shared, so every later walk over the data (duplicate keys, pydantic, error messages)
    would visit each alias expansion: nine anchors of nine aliases are 9**9 nodes.
    """
    open_sizes: list[int] = []  # nodes seen so far in each open collection, aliases expanded
    open_anchors: list[str | None] = []
    anchor_sizes: dict[str, int] = {}  # expanded node count of each finished anchored node
    aliases = alias_nodes = 0
    loader = _EventLoader(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            size = 0
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_sizes) >= MAX_DEPTH:
                    return _problem(event, f"nested deeper than {MAX_DEPTH} levels")
                open_sizes.append(1)
                open_anchors.append(event.anchor)
            elif isinstance(event, yaml.CollectionEndEvent):
                size, anchor = open_sizes.pop(), open_anchors.pop()
                if anchor is not None:
                    anchor_sizes[anchor] = size
            elif isinstance(event, yaml.ScalarEvent):
                size = 1
                if event.anchor is not None:
                    anchor_sizes[event.anchor] = size
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor in open_anchors:
                    return _problem(event, f"alias *{event.anchor} inside the node it names")
                size = anchor_sizes.get(event.anchor or "", 1)  # an undefined alias is left to the composer
                aliases, alias_nodes = aliases + 1, alias_nodes + size
                if aliases > MAX_ALIASES:
                    return _problem(event, f"more than {MAX_ALIASES} aliases")
                if alias_nodes > MAX_ALIAS_NODES:
                    return _problem(event, f"aliases stand for more than {MAX_ALIAS_NODES} nodes")
            if open_sizes and size:
                open_sizes[-1] += size
    except yaml.YAMLError:
        return None  # not a bomb: the caller's own loading reports the syntax error with its line
    finally:
        loader.dispose()
    return None


def _problem(event: yaml.Event, message: str) -> tuple[int | None, str]:
    line = event.start_mark.line + 1 if event.start_mark is not None else None
    return line, f"{message} (a YAML bomb?)"
