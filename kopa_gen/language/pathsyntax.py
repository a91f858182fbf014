"""The syntax of the task path language: the tree a path parses into and the parser (a small recursive descent
with the place of every error). Evaluation is kopa_gen/runtime/paths.py; the grammar, informally:

    expr     := term ('|' call)*
    term     := call | path | '{' name '}'
    call     := NAME '(' [expr] (',' arg)* ')'      (inside a pipe the input is piped: NAME or NAME '(' args ')')
    path     := selector* step ('.' step)*  |  selector+
    step     := NAME selector*
    selector := '[' ( INT | '*' | '!'? subpath | subpath OP value ) ']'
    OP       := ~= ^= $= != >= <= = > <            value := @max | @min | {name} | raw text | 'quoted'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kopa_gen.language import arith  # noqa: F401  (registers calc, by, group, argmax, argmin, merge)
from kopa_gen.language import functions as fn
from kopa_gen.language.functions import PathError

_SPECIAL = set(" \t\r\n.[](){}|,'\"=!<>~^$@")
_OPS = ("~=", "^=", "$=", "!=", ">=", "<=", "=", ">", "<")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_REF = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


# ------------------------------------------------------------------------------------------------ syntax


@dataclass(frozen=True)
class Ref:
    """`{name}`: a value handed in from another call (a From's `with`)."""

    name: str


@dataclass(frozen=True)
class Lit:
    value: str | int | float


@dataclass(frozen=True)
class Extreme:
    """`@max` / `@min` as a filter value."""

    which: str


@dataclass(frozen=True)
class Filter:
    field: Path
    op: str | None  # None: the field is not blank (`[f]`), or blank with `negate`
    value: Ref | Lit | Extreme | None
    negate: bool = False


@dataclass(frozen=True)
class Index:
    index: int


@dataclass(frozen=True)
class All:
    pass


Selector = Index | All | Filter


@dataclass(frozen=True)
class Step:
    name: str
    selectors: tuple[Selector, ...] = ()


@dataclass(frozen=True)
class Path:
    """Steps from the root; `leading` selectors apply to the root itself (a fan-out's list of results)."""

    steps: tuple[Step, ...]
    leading: tuple[Selector, ...] = ()


@dataclass(frozen=True)
class Call:
    func: str
    input: Expr | None  # None inside a pipe: the piped value is the input
    args: tuple[Lit | Ref, ...]


@dataclass(frozen=True)
class Pipe:
    head: Expr
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class RefTerm:
    """`{name}` as a whole term: the referenced value itself."""

    ref: Ref


Expr = Path | Call | Pipe | RefTerm


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def fail(self, message: str) -> PathError:
        return PathError(f"{self.s!r} at character {self.i + 1}: {message}")

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def peek(self, text: str) -> bool:
        return self.s.startswith(text, self.i)

    def take(self, text: str) -> None:
        if not self.peek(text):
            found = repr(self.s[self.i]) if self.i < len(self.s) else "the end"
            raise self.fail(f"expected {text!r}, found {found}")
        self.i += len(text)

    def name(self) -> str:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in _SPECIAL:
            self.i += 1
        if self.i == start:
            found = repr(self.s[self.i]) if self.i < len(self.s) else "the end"
            raise self.fail(f"expected a field or function name, found {found}")
        return self.s[start : self.i]

    def expr(self) -> Expr:
        head = self.term()
        calls: list[Call] = []
        self.ws()
        while self.peek("|"):
            self.i += 1
            self.ws()
            calls.append(self.call(self.name(), piped=True))
            self.ws()
        return Pipe(head, tuple(calls)) if calls else head

    def term(self) -> Expr:
        self.ws()
        if self.peek("{"):
            return RefTerm(self.ref())
        if self.peek("["):
            return self.path(None)
        name = self.name()
        if self.peek("("):
            return self.call(name, piped=False)
        return self.path(name)

    def ref(self) -> Ref:
        m = _REF.match(self.s, self.i)
        if m is None:
            raise self.fail("a reference is written {name} (letters, digits, _)")
        self.i = m.end()
        return Ref(m.group(1))

    def path(self, first: str | None) -> Path:
        leading = self.selectors() if first is None else ()
        steps: list[Step] = []
        if first is not None:
            steps.append(Step(first, self.selectors()))
        while self.peek("."):
            self.i += 1
            steps.append(Step(self.name(), self.selectors()))
        return Path(tuple(steps), leading)

    def selectors(self) -> tuple[Selector, ...]:
        out: list[Selector] = []
        while self.peek("["):
            out.append(self.selector())
        return tuple(out)

    def selector(self) -> Selector:
        self.take("[")
        self.ws()
        if self.peek("*"):
            self.i += 1
            self.ws()
            self.take("]")
            return All()
        m = re.compile(r"-?\d+\s*\]").match(self.s, self.i)
        if m:
            self.i = m.end()
            return Index(int(m.group().rstrip("] \t")))
        negate = self.peek("!") and not self.peek("!=")
        if negate:
            self.i += 1
        field = self.path(None) if self.peek("[") else self.path(self.name())
        self.ws()
        if self.peek("]"):
            self.i += 1
            return Filter(field, None, None, negate)
        if negate:
            raise self.fail("[!field] tests that a field is blank; it takes no comparison")
        op = next((o for o in _OPS if self.peek(o)), None)
        if op is None:
            raise self.fail(
                "a selector is [index], [*], [field], [!field] or [field OP value] with OP one of "
                + " ".join(_OPS)
            )
        self.i += len(op)
        raw = self.raw_value()
        value: Ref | Lit | Extreme
        if raw in ("@max", "@min"):
            if op != "=":
                raise self.fail(f"{raw} goes with '=' ([field={raw}])")
            value = Extreme(raw[1:])
        elif _REF.fullmatch(raw):
            value = Ref(raw[1:-1])
        else:
            value = Lit(raw)
        return Filter(field, op, value)

    def raw_value(self) -> str:
        """Text up to the bracket that closes the selector (nested brackets balanced), trimmed and unquoted."""
        depth, start = 0, self.i
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "[":
                depth += 1
            elif ch == "]":
                if depth == 0:
                    raw = self.s[start : self.i].strip()
                    self.i += 1
                    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
                        raw = raw[1:-1]
                    return raw
                depth -= 1
            self.i += 1
        raise self.fail("a selector is not closed with ']'")

    def call(self, name: str, piped: bool) -> Call:
        spec = fn.FUNCTIONS.get(name)
        if spec is None:
            known = ", ".join(sorted(fn.FUNCTIONS))
            raise self.fail(f"unknown function {name!r}; known: {known}")
        if piped and not self.peek("("):
            self.ws()
            if spec.min_args:
                raise self.fail(f"{name} needs arguments: {spec.signature}")
            return Call(name, None, ())
        self.take("(")
        self.ws()
        source: Expr | None = None
        args: list[Lit | Ref] = []
        if not piped:
            source = self.expr()
            self.ws()
        while not self.peek(")"):
            if source is not None or args:
                self.take(",")
            args.append(self.arg())
            self.ws()
        self.take(")")
        if not spec.min_args <= len(args) <= spec.max_args:
            want = (
                str(spec.min_args)
                if spec.min_args == spec.max_args
                else f"{spec.min_args} to {spec.max_args}"
            )
            raise self.fail(
                f"{name} takes {want} argument(s) besides its input, got {len(args)}: {spec.signature}"
            )
        return Call(name, source, tuple(args))

    def arg(self) -> Lit | Ref:
        self.ws()
        if self.i < len(self.s) and self.s[self.i] in "'\"":
            quote = self.s[self.i]
            end = self.s.find(quote, self.i + 1)
            if end < 0:
                raise self.fail(f"a string opened with {quote} is not closed")
            text = self.s[self.i + 1 : end]
            self.i = end + 1
            return Lit(text)
        if self.peek("{"):
            return self.ref()
        if self.i >= len(self.s):
            raise self.fail("expected ')'")
        start = self.i
        depth = 0  # an unquoted argument may hold balanced brackets: group(w, sum(d) / count())
        while self.i < len(self.s) and (depth or self.s[self.i] not in ",)"):
            depth += {"(": 1, ")": -1}.get(self.s[self.i], 0)
            self.i += 1
        raw = self.s[start : self.i].strip()
        if not raw:
            raise self.fail("an empty argument; quote it (' ') if it is a space")
        if _NUMBER.fullmatch(raw):
            return Lit(int(raw) if "." not in raw else float(raw))
        return Lit(raw)


@lru_cache(maxsize=4096)
def parse(text: str) -> Expr:
    """The syntax tree of a path expression ('' is the whole value); a PathError names the character where it
    goes wrong."""
    if not text.strip():
        return Path(())
    parser = _Parser(text)
    expr = parser.expr()
    parser.ws()
    if parser.i != len(text):
        raise parser.fail(f"unexpected {text[parser.i]!r}; a '|' goes between functions")
    return expr


def references(expr: Expr) -> set[str]:
    """The `{name}` references an expression uses."""
    out: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, Ref):
            out.add(node.name)
        elif isinstance(node, RefTerm):
            out.add(node.ref.name)
        elif isinstance(node, Filter):
            visit(node.field)
            visit(node.value)
        elif isinstance(node, Path):
            for sel in node.leading:
                visit(sel)
            for step in node.steps:
                for sel in step.selectors:
                    visit(sel)
        elif isinstance(node, Call):
            visit(node.input)
            for a in node.args:
                visit(a)
        elif isinstance(node, Pipe):
            visit(node.head)
            for c in node.calls:
                visit(c)

    visit(expr)
    return out


def show(path: Path) -> str:
    """A path written back as text (for messages)."""

    def sel(s: Selector) -> str:
        if isinstance(s, All):
            return "[*]"
        if isinstance(s, Index):
            return f"[{s.index}]"
        field = show(s.field)
        if s.op is None:
            return f"[{'!' if s.negate else ''}{field}]"
        value = s.value
        text = (
            f"@{value.which}"
            if isinstance(value, Extreme)
            else f"{{{value.name}}}"
            if isinstance(value, Ref)
            else str(value.value if value else "")
        )
        return f"[{field}{s.op}{text}]"

    lead = "".join(sel(s) for s in path.leading)
    steps = ".".join(step.name + "".join(sel(s) for s in step.selectors) for step in path.steps)
    return lead + ("." if lead and steps else "") + steps
