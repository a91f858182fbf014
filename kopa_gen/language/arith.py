"""Arithmetic and grouping in the path language: `calc`, `by`, `group`, `argmax` / `argmin` and `merge` (registered
here into kopa_gen/language/functions.py's registry; docs/tasks.md has the guide). Their expressions:

    tusu / sunsu * 100                     fields of one row (numbers read as the path language reads them)
    (clpr - `전일 종가`) / `전일 종가` * 100      a field name that is not a plain word goes in backticks
    joined.sunsu                           a field inside a field (a `merge`'s other row)
    sum(dugsu02) / count()                 in `group`: aggregates over the group's rows (count, sum, avg, max, min)

Only + - * / and parentheses, numbers and names: an expression is parsed by Python's own `ast` and every other
node is refused, so nothing is ever executed. Numbers are Decimals (the same figures on every machine); a
division by zero, a missing field or a field that is not a number is a PathError naming it.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, DivisionByZero, InvalidOperation
from functools import lru_cache
from typing import Any

from kopa_gen.language.functions import PathError, as_list, measure, register, to_text

AGGREGATES = ("count", "sum", "avg", "max", "min")
_BACKTICK = re.compile(r"`([^`]+)`")
_OPS: dict[type[ast.operator], Callable[[Decimal, Decimal], Decimal]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


@dataclass(frozen=True)
class Formula:
    """A parsed expression: its tree and the field names behind its backtick placeholders."""

    text: str
    tree: ast.expr
    quoted: tuple[str, ...]


@lru_cache(maxsize=512)
def parse_formula(text: str, aggregates: bool = False) -> Formula:
    """The expression parsed and checked (PathError naming the offending part). `aggregates`: names appear only
    inside count() / sum(f) / avg(f) / max(f) / min(f)."""
    quoted: list[str] = []

    def hold(m: re.Match[str]) -> str:
        quoted.append(m.group(1))
        return f"_q{len(quoted) - 1}_"

    source = _BACKTICK.sub(hold, text.strip())
    if not source:
        raise PathError("an empty expression; write fields and numbers with + - * / and parentheses")
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise PathError(
            f"expression {text!r} does not parse ({exc.msg}); a field name with spaces or brackets goes in "
            "backticks: `주당 현금배당금(원)`"
        ) from None

    def check(node: ast.expr, in_aggregate: bool) -> None:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            check(node.left, in_aggregate)
            check(node.right, in_aggregate)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            check(node.operand, in_aggregate)
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            pass
        elif isinstance(node, ast.Name | ast.Attribute):
            if aggregates and not in_aggregate:
                raise PathError(
                    f"expression {text!r}: the field {_field(node, quoted)!r} needs an aggregate around it "
                    f"({', '.join(a + '(...)' for a in AGGREGATES)})"
                )
            _field(node, quoted)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and aggregates:
            name = node.func.id
            if name not in AGGREGATES or node.keywords:
                raise PathError(
                    f"expression {text!r}: unknown aggregate {name!r}; known: {', '.join(AGGREGATES)}"
                )
            if in_aggregate:
                raise PathError(f"expression {text!r}: an aggregate inside an aggregate")
            want = 0 if name == "count" else 1
            if len(node.args) != want:
                raise PathError(f"expression {text!r}: {name}() takes {want} field(s), got {len(node.args)}")
            for a in node.args:
                check(a, True)
        else:
            shown = ast.unparse(node)
            raise PathError(
                f"expression {text!r}: {shown!r} is not arithmetic; only + - * /, parentheses, numbers and "
                "field names" + (" and aggregates" if aggregates else "")
            )

    check(tree, False)
    return Formula(text, tree, tuple(quoted))


def _field(node: ast.expr, quoted: Sequence[str]) -> str:
    """A name or dotted name as the field path it stands for (backtick placeholders restored)."""
    if isinstance(node, ast.Name):
        m = re.fullmatch(r"_q(\d+)_", node.id)
        return quoted[int(m.group(1))] if m else node.id
    if isinstance(node, ast.Attribute):
        return f"{_field(node.value, quoted)}.{node.attr}"
    raise PathError(f"{ast.unparse(node)!r} is not a field name")


def field_value(row: Any, name: str) -> Any:
    """A field (a dotted name walks into fields) of one row; a PathError naming the fields a row has."""
    current = row
    for part in name.split("."):
        if not isinstance(current, Mapping) or part not in current:
            have = sorted(current) if isinstance(current, Mapping) else type(current).__name__
            raise PathError(f"no field {name!r} in the row (fields: {have})")
        current = current[part]
    return current


def _compute(node: ast.expr, formula: Formula, value_of: Callable[[ast.expr], Decimal]) -> Decimal:
    if isinstance(node, ast.BinOp):
        left = _compute(node.left, formula, value_of)
        right = _compute(node.right, formula, value_of)
        try:
            return _OPS[type(node.op)](left, right)
        except (DivisionByZero, InvalidOperation, ZeroDivisionError):
            raise PathError(
                f"expression {formula.text!r}: division by zero in {ast.unparse(node)!r}"
            ) from None
    if isinstance(node, ast.UnaryOp):
        value = _compute(node.operand, formula, value_of)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant):
        return Decimal(str(node.value))
    return value_of(node)


def row_value(formula: Formula, row: Any) -> Decimal:
    """The expression over one row's fields."""

    def value_of(node: ast.expr) -> Decimal:
        name = _field(node, formula.quoted)
        try:
            return measure(field_value(row, name))
        except PathError as exc:
            raise PathError(f"expression {formula.text!r}: {exc}") from None

    return _compute(formula.tree, formula, value_of)


def group_value(formula: Formula, rows: Sequence[Any]) -> Decimal:
    """The aggregate expression over one group's rows (an empty group counts 0 and has no sum)."""

    def value_of(node: ast.expr) -> Decimal:
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        name = node.func.id
        if name == "count":
            return Decimal(len(rows))
        field = _field(node.args[0], formula.quoted)
        try:
            numbers = [measure(field_value(r, field)) for r in rows]
        except PathError as exc:
            raise PathError(f"expression {formula.text!r}: {exc}") from None
        if name == "sum":
            return sum(numbers, Decimal(0))
        if not numbers:
            raise PathError(f"expression {formula.text!r}: {name}({field}) over no rows")
        if name == "avg":
            return sum(numbers, Decimal(0)) / len(numbers)
        return max(numbers) if name == "max" else min(numbers)

    return _compute(formula.tree, formula, value_of)


# ------------------------------------------------------------------------------------ the path functions


def _rows(items: list[Any], name: str) -> list[Mapping[str, Any]]:
    for i, row in enumerate(items):
        if not isinstance(row, Mapping):
            raise PathError(f"{name}: item {i} is {to_text(row)!r}, not a row; give it rows (`rows[...]`)")
    return items


def _key(row: Mapping[str, Any], field: str, name: str) -> str:
    value = field_value(row, field)
    if value is None or not to_text(value).strip():
        raise PathError(f"{name}: a row has no {field!r}; filter such rows out first (`rows[{field}]`)")
    return to_text(value).strip()


@register(
    "calc",
    "each",
    "calc(row, 'expr')",
    "Arithmetic over one row's fields: + - * / and parentheses ('tusu / sunsu * 100'); a field name with spaces "
    "goes in backticks. Division by zero is an error.",
    (1, 1),
)
def _calc(row: Any, args: Sequence[Any]) -> Decimal:
    return row_value(parse_formula(str(args[0])), row)


@register(
    "by",
    "reduce",
    "by(rows, key, 'expr')",
    "One {key, value} pair per row: the row's `key` field and the expression over its fields (for argmax / argmin "
    "over a computed value).",
    (2, 2),
)
def _by(items: list[Any], args: Sequence[Any]) -> list[dict[str, Any]]:
    formula = parse_formula(str(args[1]))
    return [{"key": _key(r, str(args[0]), "by"), "value": row_value(formula, r)} for r in _rows(items, "by")]


@register(
    "group",
    "reduce",
    "group(rows, key, 'aggregate expr')",
    "One {key, value} pair per distinct `key`, in first-seen order: the expression over the group's rows, "
    "built from count(), sum(f), avg(f), max(f), min(f) ('sum(dugsu02)', 'sum(tusu) / sum(sunsu) * 100').",
    (2, 2),
)
def _group(items: list[Any], args: Sequence[Any]) -> list[dict[str, Any]]:
    formula = parse_formula(str(args[1]), aggregates=True)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in _rows(items, "group"):
        groups.setdefault(_key(row, str(args[0]), "group"), []).append(row)
    if not groups:
        raise PathError("group: no rows to group (the selection is empty)")
    return [{"key": key, "value": group_value(formula, rows)} for key, rows in groups.items()]


TIE_BREAKS = ("first", "last")


def _pairs(items: list[Any], name: str) -> list[tuple[str, Decimal]]:
    if not items:
        raise PathError(f"{name}: nothing to choose from (the selection is empty)")
    out = []
    for item in items:
        if not isinstance(item, Mapping) or set(item) != {"key", "value"}:
            raise PathError(f"{name} chooses among {{key, value}} pairs; give it `group(...)` or `by(...)`")
        out.append((str(item["key"]), measure(item["value"])))
    return out


def _extreme(items: list[Any], args: Sequence[Any], name: str) -> str:
    pairs = _pairs(items, name)
    tie = str(args[0]) if args else None
    if tie is not None and tie not in TIE_BREAKS:
        raise PathError(
            f"{name}('{tie}'): the tie-break is 'first' or 'last' (in the order the groups appear)"
        )
    best = (max if name == "argmax" else min)(v for _, v in pairs)
    keys = [k for k, v in pairs if v == best]
    if len(keys) > 1 and tie is None:
        raise PathError(
            f"{name}: a tie at {to_text(best)} between {', '.join(keys)}; no single answer (declare a tie-break: "
            f"{name}('first') or {name}('last'), and say it in the query)"
        )
    return keys[0] if tie != "last" else keys[-1]


def _keys(items: list[Any]) -> list[Any]:
    return [i["key"] for i in items if isinstance(i, Mapping) and "key" in i]


@register(
    "argmax",
    "reduce",
    "argmax(pairs, tie?)",
    "The key of the largest value of `group` / `by` pairs; a tie is an error unless the tie-break 'first' or "
    "'last' is declared.",
    (0, 1),
    chooses=True,
    offers=_keys,
)
def _argmax(items: list[Any], args: Sequence[Any]) -> str:
    return _extreme(items, args, "argmax")


@register(
    "argmin",
    "reduce",
    "argmin(pairs, tie?)",
    "The key of the smallest value of `group` / `by` pairs; a tie is an error unless a tie-break is declared.",
    (0, 1),
    chooses=True,
    offers=_keys,
)
def _argmin(items: list[Any], args: Sequence[Any]) -> str:
    return _extreme(items, args, "argmin")


@register(
    "merge",
    "reduce",
    "merge(rows, {other}, key, other_key?)",
    "The rows that share `key` with exactly one row of another result (a `with` reference to its rows), that row "
    "under `joined` (`joined.sunsu`). A key two rows of the other side share is an error; rows without a partner "
    "drop out, and no partner at all is an error.",
    (2, 3),
)
def _merge(items: list[Any], args: Sequence[Any]) -> list[dict[str, Any]]:
    other = as_list(args[0])
    key = str(args[1])
    other_key = str(args[2]) if len(args) > 2 else key
    index: dict[str, Mapping[str, Any]] = {}
    doubled: set[str] = set()
    for row in _rows(other, "merge (the other result)"):
        value = field_value(row, other_key)
        k = to_text(value).strip()
        if k in index:
            doubled.add(k)
        index[k] = row
    out = []
    for row in _rows(items, "merge"):
        k = to_text(field_value(row, key)).strip()
        if k in doubled:
            raise PathError(
                f"merge: {other_key}={k} is on several rows of the other result; narrow it to one row per key first"
            )
        if k in index:
            out.append({**row, "joined": index[k]})
    if items and not out:
        raise PathError(f"merge: no row's {key} equals the other result's {other_key}; nothing joins")
    return out
