"""YAML sources that remember where each value came from, so errors can name file, field path and line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from kopa_gen.language.diagnostics import Diagnostic, Diagnostics, UserError

Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


def format_path(loc: Sequence[str | int]) -> str:
    """`("paths", "/list.json", "get", 0)` -> `paths./list.json.get[0]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass
class Source:
    """One loaded YAML document with a map from field paths to 1-based line numbers."""

    file: str
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)

    def line(self, loc: Sequence[str | int]) -> int | None:
        """Line of the deepest known ancestor of `loc`."""
        key = tuple(loc)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return None

    def diag(self, loc: Sequence[str | int], message: str) -> Diagnostic:
        return Diagnostic(self.file, format_path(loc), message, line=self.line(loc))


# libyaml when available: one parse gives both the node tree (for line numbers) and the data.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_DEPTH = 64
"""Nesting a kopa-gen YAML file may have, aliases expanded (the deepest spec nests 16 levels)."""
MAX_VALUES = 1_000_000
"""Values a kopa-gen YAML file may stand for, aliases expanded (the largest spec, 31,000): an alias bomb (nine
lines, each an anchor of nine aliases of the one before, stand for 387 million) is refused before it is built."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_nodes(node: yaml.Node, name: str) -> None:
    """Refuse, with the field path and line, what safe loading still allows and what would take the machine: an
    alias that makes a value contain itself, aliases that expand past `MAX_VALUES` values, nesting past
    `MAX_DEPTH`. Aliases are counted as what they stand for, each anchored value measured once, without
    recursion (the composed tree may be deeper than Python's stack)."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_: set[int] = set()  # entered, not finished: the ancestors of what is popped next
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        key = id(current)
        if done:
            below = _children(current)
            size[key] = 1 + sum(size[id(c)] for c in below)
            height[key] = 1 + max((height[id(c)] for c in below), default=0)
            open_.discard(key)
        elif key in open_:
            raise YamlError(_located(node, name, current, "a YAML alias makes this value contain itself"))
        elif key not in size:
            open_.add(key)
            stack.append((current, True))
            stack.extend((c, False) for c in _children(current) if id(c) not in size)
    if size[id(node)] > MAX_VALUES:
        where = _descend(node, lambda n: size[id(n)] > MAX_VALUES, size)
        message = (
            f"its aliases (*name) make the file stand for {size[id(node)]:,} values, more than {MAX_VALUES:,}; "
            "write the values out instead of repeating anchors"
        )
        raise YamlError(_located(node, name, where, message))
    if height[id(node)] > MAX_DEPTH:
        where = node
        for _ in range(MAX_DEPTH):
            where = max(_children(where), key=lambda c: height[id(c)])
        message = f"nested more than {MAX_DEPTH} levels deep (aliases expanded); flatten it"
        raise YamlError(_located(node, name, where, message))


def _descend(root: yaml.Node, over: Any, measure: dict[int, int]) -> yaml.Node:
    """The deepest node on the path of largest `measure` from the root that is still `over` the limit."""
    current = root
    while True:
        heavier = [c for c in _children(current) if over(c)]
        if not heavier:
            return current
        current = max(heavier, key=lambda c: measure[id(c)])


def _located(root: yaml.Node, name: str, target: yaml.Node, message: str) -> Diagnostic:
    """A diagnostic at the field path where `target` is first reached from `root` (breadth first)."""
    queue: list[tuple[yaml.Node, Loc, int]] = [(root, (), root.start_mark.line + 1)]
    seen: set[int] = set()
    while queue:
        current, loc, line = queue.pop(0)
        if current is target:
            return Diagnostic(name, format_path(loc), message, line=line)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            queue += [(v, (*loc, str(k.value)), k.start_mark.line + 1) for k, v in current.value]
        elif isinstance(current, yaml.SequenceNode):
            queue += [(v, (*loc, i), v.start_mark.line + 1) for i, v in enumerate(current.value)]
    return Diagnostic(name, "", message, line=target.start_mark.line + 1)


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int], problems: list[tuple[Loc, int, str]]) -> None:
    """Record each value's line; note what YAML accepts silently but is almost always a mistake: a key given
    twice in one mapping (the second wins), and in a flow mapping `{a: x, y}` a bare word after a comma (an
    unquoted comma cut the value before it short)."""
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key, value in node.value:
            name = str(key.value)
            line = key.start_mark.line + 1
            if name in seen:
                problems.append(
                    (
                        (*loc, name),
                        line,
                        f"key {name!r} is given twice (first on line {seen[name]}); "
                        "the second silently replaces the first: remove one",
                    )
                )
            seen[name] = line
            bare = isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null") and value.value == ""
            if node.flow_style and bare and (value.start_mark.index == value.end_mark.index):
                problems.append(
                    (
                        (*loc, name),
                        line,
                        f"{name!r} has no value: an unquoted comma in a flow "
                        "mapping split the text before it; quote that text",
                    )
                )
            _walk(value, (*loc, name), lines, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*loc, i), lines, problems)


def load_yaml(path: Path, root: Path | None = None) -> Source:
    """Load one YAML file. A syntax error becomes a SpecError-ready Diagnostic via `YamlError`."""
    name = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise YamlError(Diagnostic(name, "", f"cannot read the file: {exc.strerror or exc}")) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = raw[: exc.start].count(b"\n") + 1
        message = f"not UTF-8 (byte {exc.start}: {exc.reason}); save the file as UTF-8"
        raise YamlError(Diagnostic(name, "", message, line=at)) from None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_nodes(node, name)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise YamlError(Diagnostic(name, "", f"invalid YAML: {exc}", line=line)) from exc
    finally:
        loader.dispose()
    lines: dict[Loc, int] = {}
    problems: list[tuple[Loc, int, str]] = []
    if node is not None:
        _walk(node, (), lines, problems)
    if problems:
        raise YamlError(*[Diagnostic(name, format_path(loc), msg, line=line) for loc, line, msg in problems])
    return Source(name, data, lines)


def load_text(text: str, name: str) -> Any:
    """YAML text as data, safely and with `check_nodes`' limits (no aliases, bounded nesting), for the YAML files
    that are not specs (labelled corpora, a training run's agent loops); YamlError naming `name` and the line."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_nodes(node, name)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise YamlError(Diagnostic(name, "", f"invalid YAML: {exc}", line=line)) from exc
    finally:
        loader.dispose()


class YamlError(UserError):
    """A file that is no valid YAML spec text; `diagnostics` lists every problem found (`diagnostic`: the first)."""

    def __init__(self, *diagnostics: Diagnostic) -> None:
        self.diagnostics = list(diagnostics)
        self.diagnostic = diagnostics[0]
        super().__init__("\n".join(d.render() for d in diagnostics))


def validate_model(model: type[M], data: Any, src: Source, base: Loc, diags: Diagnostics) -> M | None:
    """Validate `data` (found at `base` inside `src`) as `model`; record every error with its place."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc: Loc = (*base, *(p for p in err["loc"] if isinstance(p, str | int)))
            diags.items.append(src.diag(loc, _explain(err)))
        return None


def _explain(err: Any) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown field; remove it or check its spelling against the JSON Schema"
    if kind == "missing":
        return "required field is missing"
    return str(err["msg"]).removeprefix("Value error, ")


def resolve(doc: Any, ref: str) -> Any:
    """Follow a local JSON pointer (`#/components/schemas/X`)."""
    if not ref.startswith("#/"):
        raise KeyError(f"only local $ref are supported, got {ref!r}")
    node: Any = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise KeyError(ref)
        node = node[part]
    return node
