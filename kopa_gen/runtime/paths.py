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
    record.adres | words(0, 3)             functions chain left to right (kopa_gen/language/functions.py)

Field names may be in any script (Korean XML tags included). Filter values are raw text up to the closing
bracket ('주당 현금배당금(원)' needs no quotes) or quoted. A path that selects several values where one is
needed is an error, never a silent choice; so is a path that does not fit the result.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from kopa_gen.language import functions as fn
from kopa_gen.language.functions import PathError, api_number, maybe_number, plain_number
from kopa_gen.language.pathsyntax import (
    All,
    Call,
    Expr,
    Extreme,
    Filter,
    Index,
    Lit,
    Path,
    Pipe,
    Ref,
    RefTerm,
    Selector,
    parse,
    references,
    show,
)

__all__ = [
    "Expr",
    "FilterUse",
    "PathError",
    "Read",
    "Selection",
    "api_number",
    "evaluate",
    "filter_uses",
    "parse",
    "plain_number",
    "pool",
    "references",
    "rows_read",
    "select",
]


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


KEEP_PRESENT = ("items+present", "present")
"""The pool's relaxed modes that keep presence filters."""


def _narrow(
    rows: Any, selectors: tuple[Selector, ...], env: Env, relaxed: bool | str, where: str
) -> tuple[list[Any], bool, int]:
    """Apply `[...]` selectors to one list: filters and `*` keep a list, an index picks one. `relaxed` turns
    every index and filter into `*` (the candidates a choice was made from); in the KEEP_PRESENT modes a presence
    filter (`[liNm]`) still applies, for an expression that needs the field on every row (a group by it)."""
    if not isinstance(rows, list):
        raise PathError(f"{where}: [...] applies to a list, found {type(rows).__name__}")
    candidates = len(rows)
    many = False
    out: list[Any] = rows
    for sel in selectors:
        kept = isinstance(sel, Filter) and sel.op is None and relaxed in KEEP_PRESENT
        if isinstance(sel, All) or (relaxed and not kept):
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
    shown = show(path)
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
    if relaxed and (spec.chooses or (relaxed in ("items", "items+present") and spec.kind == "reduce")):
        items = found.values if found.many else fn.as_list(found.values[0]) if found.values else []
        if spec.chooses and spec.offers is not None:
            items = spec.offers(items)
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
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def pool(result: Any, path: str, env: Env | None = None) -> list[Any]:
    """The candidates an expression chose its value from, distinct, in order: the expression evaluated with every
    index and filter relaxed to `*` (all the rows a choice was made among), first with every reduction passing
    its whole list on (the items a sum or a maximum was made of), then with only the aggregating ones (sum,
    count, ...) applied; both again keeping presence filters (`[liNm]`: a group by a field some rows lack fails
    without them); plus the real value. A reply naming several of them has not chosen."""
    env = env or {}
    expr = parse(path.strip())
    out: list[Any] = []
    for relaxed in ("items", True, *KEEP_PRESENT, False):
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
    """One `[field=literal]` filter as it met a list: what the lint weighs (kopa_gen/gold/lint.py)."""

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
                uses.append(FilterUse(show(sel.field), sel.op, str(sel.value.value), column))
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


@dataclass(frozen=True)
class Read:
    """What of a result an expression depends on: the rows it reads (objects of the result's `rows` list, the
    rows its selectors kept; every row under `*` or an aggregate), and whether it reads the total, the record or
    anything else at the top."""

    rows: list[Any]
    total: bool = False
    record: bool = False
    other: bool = False


def rows_read(result: Any, path: str, env: Env | None = None) -> Read:
    """The rows of `result` (a list result: {total_count, rows, ...}; or a record result) that `path` reads:
    ACTION credits an agent that fetched them, by whatever query (kopa_gen/evaluate/action.py)."""
    env = env or {}
    rows: list[Any] = []
    kept: set[int] = set()
    flags = {"total": False, "record": False, "other": False}

    def walk(expr: Expr) -> None:
        if isinstance(expr, Path):
            if expr.leading or not expr.steps:
                flags["other"] = True
                return
            head = expr.steps[0]
            if head.name == "rows" and isinstance(result, dict) and isinstance(result.get("rows"), list):
                picked, _, _ = _narrow(result["rows"], head.selectors, env, False, show(expr))
                for row in picked:
                    if id(row) not in kept:
                        kept.add(id(row))
                        rows.append(row)
            elif head.name == "total_count":
                flags["total"] = True
            elif head.name == "record":
                flags["record"] = True
            else:
                flags["other"] = True
        elif isinstance(expr, Call) and expr.input is not None:
            walk(expr.input)
        elif isinstance(expr, Pipe):
            walk(expr.head)

    walk(parse(path.strip()))
    return Read(rows, **flags)
