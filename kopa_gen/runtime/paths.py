"""The task path language: how a task spec takes values out of tool results (docs/tasks.md has the guide).

    rows[0].corp_code                      a field of the first row
    rows[stock_code=005930].corp_code      rows whose field equals a value (string comparison), then a field
    rows[umd_cd!=000]  rows[bas_dt>=20240101]  rows[amount<1000]     other comparisons: numbers when both sides
                                           are numbers ("1,500" reads 1500), else strings (so YYYYMMDD and
                                           YYYY-MM-DD dates compare correctly); rows without the field drop out
    rows[adres~=영도구]  rows[adres^=부산]  rows[adres$=5가]          contains / starts with / ends with
    rows[hmpg_url]  rows[!hmpg_url]        the field is not blank / is blank (missing, null, "", spaces)
    rows[clpr=@max]  rows[clpr=@min]       rows whose number is the list's largest / smallest
    rows[locallow_nm={dong}]               the value of the reference `dong` (the From's `with`)
    rows[*].clpr                           every row's field
    [result.total_count=@max].each.name    a fan-out's results (see docs/tasks.md): filters on a sub-path
    max(rows[*].clpr)  =  rows[*].clpr | max        a function, written around its input or after a pipe
    record.adres | words(0, 3)             functions chain left to right (kopa_gen/runtime/functions.py)

Field names may be in any script (Korean XML tags included). Filter values are raw text up to the closing
bracket ('주당 현금배당금(원)' needs no quotes) or quoted. A path that selects several values where one is
needed is an error, never a silent choice; so is a path that does not fit the result.
"""

from __future__ import annotations

import datetime as dt
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from kopa_gen.runtime import functions as fn
from kopa_gen.runtime.functions import PathError, api_number, maybe_number, plain_number

__all__ = [
    "Expr",
    "FilterUse",
    "PathError",
    "Selection",
    "api_number",
    "evaluate",
    "filter_uses",
    "parse",
    "plain_number",
    "pool",
    "references",
    "select",
]

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
        while self.i < len(self.s) and self.s[self.i] not in ",)":
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


# ------------------------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class Selection:
    """What a path found: the values, whether they are a selection of several (a list the path picked from,
    by `*` or a filter), and how many candidates the largest list it picked from had (a handoff's cardinality:
    the rows a model had to choose among)."""

    values: list[Any]
    many: bool
    candidates: int


Env = Mapping[str, Any]


def _lookup(env: Env, ref: Ref) -> Any:
    if ref.name not in env:
        known = ", ".join(sorted(env)) or "none"
        raise PathError(f"unknown reference {{{ref.name}}}; references given: {known}")
    return env[ref.name]


def _sub_value(row: Any, field: Path, env: Env) -> Any:
    """A filter's field inside one row: one value, or None when missing or not exactly one."""
    try:
        found = _path(row, field, env, relaxed=False)
    except PathError:
        return None
    return found.values[0] if len(found.values) == 1 else None


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == [] or value == {}


def _text(value: Any) -> str:
    return fn.to_text(value)


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


def _filter(rows: list[Any], f: Filter, env: Env) -> list[Any]:
    values = [(r, _sub_value(r, f.field, env)) for r in rows]
    if f.op is None:
        return [r for r, v in values if _blank(v) == f.negate]
    if isinstance(f.value, Extreme):
        # numbers when any value is one (blanks and markers such as '-' drop out), else text (names)
        present = [(r, v) for r, v in values if not _blank(v)]
        numbers = [(r, maybe_number(v)) for r, v in present]
        keyed: list[tuple[Any, Decimal | str]] = (
            [(r, n) for r, n in numbers if n is not None]
            if any(n is not None for _, n in numbers)
            else [(r, _text(v).strip()) for r, v in present]
        )
        if not keyed:
            return []
        pick = max if f.value.which == "max" else min
        target = pick(k for _, k in keyed)
        return [r for r, k in keyed if k == target]
    assert f.value is not None
    want = _text(_lookup(env, f.value)) if isinstance(f.value, Ref) else str(f.value.value)
    if f.op in ("=", "!="):
        return [r for r, v in values if (v is not None and _text(v).strip() == want) != (f.op == "!=")]
    if f.op in ("~=", "^=", "$="):
        test = {"~=": str.__contains__, "^=": str.startswith, "$=": str.endswith}[f.op]
        return [r for r, v in values if v is not None and test(_text(v), want)]
    kept: list[Any] = []
    want_number = maybe_number(want)
    for r, v in values:
        if _blank(v):
            continue
        number = maybe_number(v)
        a: Decimal | str
        b: Decimal | str
        if number is not None and want_number is not None:
            a, b = number, want_number
        else:
            a, b = _text(v).strip(), want
        if _COMPARE[f.op](a, b):
            kept.append(r)
    return kept


def _narrow(
    rows: Any, selectors: tuple[Selector, ...], env: Env, relaxed: bool | str, where: str
) -> tuple[list[Any], bool, int]:
    """Apply `[...]` selectors to one list: filters and `*` keep a list, an index picks one. `relaxed` turns
    every index and filter into `*` (the candidates a choice was made from)."""
    if not isinstance(rows, list):
        raise PathError(f"{where}: [...] applies to a list, found {type(rows).__name__}")
    candidates = len(rows)
    many = False
    out: list[Any] = rows
    for sel in selectors:
        if relaxed or isinstance(sel, All):
            many = True
        elif isinstance(sel, Index):
            if not -len(out) <= sel.index < len(out):
                raise PathError(f"{where}: index {sel.index} outside {len(out)} rows")
            out, many = [out[sel.index]], False
        else:
            out, many = _filter(out, sel, env), True
    return out, many, candidates


def _path(root: Any, path: Path, env: Env, relaxed: bool | str) -> Selection:
    current: list[Any] = [root]
    many = False
    candidates = 1
    shown = _show(path)
    if path.leading:
        picked, many, candidates = _narrow(root, path.leading, env, relaxed, shown)
        current = picked
    for step in path.steps:
        nxt: list[Any] = []
        for item in current:
            if not isinstance(item, dict) or step.name not in item:
                fields = sorted(item) if isinstance(item, dict) else type(item).__name__
                raise PathError(f"{shown!r}: no field {step.name!r} (fields: {fields})")
            nxt.append(item[step.name])
        current = nxt
        if step.selectors:
            picked = []
            for item in current:
                chosen, is_many, n = _narrow(item, step.selectors, env, relaxed, shown)
                candidates = max(candidates, n)
                many = many or is_many
                picked.extend(chosen)
            current = picked
    return Selection(current, many, candidates)


def _show(path: Path) -> str:
    def sel(s: Selector) -> str:
        if isinstance(s, All):
            return "[*]"
        if isinstance(s, Index):
            return f"[{s.index}]"
        field = _show(s.field)
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


def _eval(root: Any, expr: Expr, env: Env, relaxed: bool | str) -> Selection:
    if isinstance(expr, Path):
        return _path(root, expr, env, relaxed)
    if isinstance(expr, RefTerm):
        return Selection([_lookup(env, expr.ref)], False, 1)
    if isinstance(expr, Call):
        assert expr.input is not None
        return _apply(expr, _eval(root, expr.input, env, relaxed), env, relaxed)
    found = _eval(root, expr.head, env, relaxed)
    for call in expr.calls:
        found = _apply(call, found, env, relaxed)
    return found


def _apply(call: Call, found: Selection, env: Env, relaxed: bool | str = False) -> Selection:
    spec = fn.FUNCTIONS[call.func]
    if relaxed and (spec.chooses or (relaxed == "items" and spec.kind == "reduce")):
        items = found.values if found.many else fn.as_list(found.values[0]) if found.values else []
        return Selection(items, True, found.candidates)
    args = [_lookup(env, a) if isinstance(a, Ref) else a.value for a in call.args]
    if spec.kind == "each":
        return Selection([spec.run(v, args) for v in found.values], found.many, found.candidates)
    items = found.values if found.many else fn.as_list(found.values[0]) if found.values else []
    return Selection([spec.run(items, args)], False, found.candidates)


def select(result: Any, path: str, env: Env | None = None) -> Selection:
    """Evaluate an expression to its selection (several values when it selects several)."""
    return _eval(result, parse(path.strip()), env or {}, relaxed=False)


def evaluate(result: Any, path: str, env: Env | None = None) -> Any:
    """One value (an error when the expression selects none or several), as plain JSON data: numbers as int or
    float, dates as YYYY-MM-DD text."""
    found = select(result, path, env)
    if len(found.values) != 1:
        hint = "narrow the selector" if found.values else "no row matched"
        raise PathError(
            f"{path.strip()!r} selects {len(found.values)} values where one is needed; {hint} "
            "(or reduce the list: count, max, first, list, ...)"
        )
    return plain(found.values[0])


def plain(value: Any) -> Any:
    """A value as JSON data: Decimals as int/float, dates as ISO text, lists item by item."""
    if isinstance(value, Decimal):
        return plain_number(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def pool(result: Any, path: str, env: Env | None = None) -> list[Any]:
    """The candidates an expression chose its value from, distinct, in order: the expression evaluated with every
    index and filter relaxed to `*` (all the rows a choice was made among), first with every reduction passing
    its whole list on (the items a sum or a maximum was made of), then with only the aggregating ones (sum,
    count, ...) applied; plus the real value. A reply naming several of them has not chosen."""
    env = env or {}
    expr = parse(path.strip())
    out: list[Any] = []
    for relaxed in ("items", True, False):
        try:
            found = _eval(result, expr, env, relaxed)
        except (PathError, InvalidOperation, ValueError, TypeError):
            continue
        for v in found.values:
            p = plain(v)
            if p not in out and not isinstance(p, list | dict):
                out.append(p)
    return out


@dataclass(frozen=True)
class FilterUse:
    """One `[field=literal]` filter as it met a list: what the lint weighs (kopa_gen/compile/lint.py)."""

    field: str
    op: str
    literal: str
    column: list[Any]  # the field's value in every row of the list, before any of its filters


def filter_uses(result: Any, path: str, env: Env | None = None) -> list[FilterUse]:
    """Every comparison filter with a literal value in `path`, with the column it compared against (filters in
    paths that do not fit the result are skipped; the evaluation reports those)."""
    env = env or {}
    uses: list[FilterUse] = []

    def narrow(rows: Any, selectors: tuple[Selector, ...]) -> list[Any]:
        if not isinstance(rows, list):
            return []
        out = rows
        for sel in selectors:
            if isinstance(sel, Filter) and sel.op is not None and isinstance(sel.value, Lit):
                column = [_sub_value(r, sel.field, env) for r in rows]
                uses.append(FilterUse(_show(sel.field), sel.op, str(sel.value.value), column))
            if isinstance(sel, Index):
                out = out[sel.index : sel.index + 1] if -len(out) <= sel.index < len(out) else []
            elif isinstance(sel, Filter):
                out = _filter(out, sel, env)
        return out

    def walk(expr: Expr) -> None:
        if isinstance(expr, Path):
            current: list[Any] = narrow(result, expr.leading) if expr.leading else [result]
            for step in expr.steps:
                current = [
                    item[step.name] for item in current if isinstance(item, dict) and step.name in item
                ]
                if step.selectors:
                    current = [r for item in current for r in narrow(item, step.selectors)]
        elif isinstance(expr, Call) and expr.input is not None:
            walk(expr.input)
        elif isinstance(expr, Pipe):
            walk(expr.head)

    walk(parse(path.strip()))
    return uses
