"""A small path language over tool results, used by task specs to hand values from one gold call to the next and
to derive the gold answer:

    rows[0].corp_code                      first row's field
    rows[stock_code=005930].corp_code      rows whose field equals a value (string comparison), then a field
    rows[umd_cd!=000]                      rows whose field differs from a value
    rows[bas_dt>=20240101]                 rows whose field compares to a value (>=, <=, >, <): as numbers when
                                           both sides are numbers, else as strings (so YYYYMMDD and
                                           YYYY-MM-DD dates compare correctly); rows without the field drop out
    rows[clpr=@max]  rows[clpr=@min]       rows whose field is the largest / smallest number in the list
    rows[*].clpr                           every row's field
    record.jurir_no                        a record tool's field
    total_count                            a top-level field
    max(rows[*].clpr)  min(...)  sum(...)  count(...)  first(...)  last(...)   reductions over a list
    mode(rows[*].sd_nm)                    the most frequent value (a tie goes to the one seen first)

Numbers in the APIs are strings ("57,600", "-.39"); reductions, comparisons and @max/@min read them as numbers
(commas removed).
A path that selects several values where one is needed is an error, never a silent choice.
"""

from __future__ import annotations

import json
import operator
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

_FUNC = re.compile(r"^(max|min|sum|count|first|last|mode)\((.*)\)$")
_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[[^\]]*\])*)$")
_SELECTOR = re.compile(r"\[([^\]]*)\]")
# field, operator, value; the field holds no operator character, so `>=` is never read as `>` then `=v`
_FILTER = re.compile(r"^([^=!<>]+?)\s*(>=|<=|!=|=|>|<)(.*)$")


class PathError(ValueError):
    """The path does not parse or does not fit the result; the message says where."""


@dataclass(frozen=True)
class Selection:
    """What a path found: the values, and how many candidates the list it picked from had (the handoff's
    cardinality: the rows a model had to choose among)."""

    values: list[Any]
    many: bool
    candidates: int


def api_number(value: Any) -> Decimal:
    """An API number ("57,600", "-.39", 12) as a Decimal, commas removed; a PathError when it is not one."""
    try:
        return Decimal(str(value).replace(",", "").strip())
    except InvalidOperation as exc:
        raise PathError(f"{value!r} is not a number") from exc


def _maybe_number(value: Any) -> Decimal | None:
    """The value as a finite number, or None (missing, empty, or not a number)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        d = api_number(value)
    except PathError:
        return None
    return d if d.is_finite() else None


def plain_number(d: Decimal) -> int | float:
    """An int when integral, else a float: how reductions hand numbers on."""
    return int(d) if d == d.to_integral_value() else float(d)


def _segments(path: str) -> list[str]:
    """Split on dots outside brackets (values in selectors may contain dots: [fltRt=-.39])."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(path):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "." and depth == 0:
            parts.append(path[start:i])
            start = i + 1
    parts.append(path[start:])
    return parts


def select(result: Any, path: str) -> Selection:
    """Evaluate a (non-reduction) path."""
    current: list[Any] = [result]
    many = False
    candidates = 1
    for part in _segments(path):
        m = _SEGMENT.match(part)
        if not m:
            raise PathError(f"bad path segment {part!r} in {path!r}")
        name, selectors = m.group(1), m.group(2)
        nxt: list[Any] = []
        for item in current:
            if not isinstance(item, dict) or name not in item:
                raise PathError(
                    f"{path!r}: no field {name!r} (fields: {sorted(item) if isinstance(item, dict) else type(item).__name__})"
                )
            nxt.append(item[name])
        current = nxt
        selectors_found = _SELECTOR.findall(selectors)
        if selectors_found:
            picked: list[Any] = []
            for item in current:
                if not isinstance(item, list):
                    raise PathError(f"{path!r}: [...] applies to a list, {name!r} is {type(item).__name__}")
                candidates = max(candidates, len(item))
                chosen, is_many = _narrow(item, selectors_found, path)
                many = many or is_many
                picked.extend(chosen)
            current = picked
    return Selection(current, many, candidates)


def _narrow(rows: list[Any], selectors: list[str], path: str) -> tuple[list[Any], bool]:
    """Apply `[...]` selectors one after another to one list: filters and `*` keep a list, an index picks one."""
    many = False
    for sel in selectors:
        if sel == "*":
            many = True
        elif re.fullmatch(r"-?\d+", sel):
            index = int(sel)
            if not -len(rows) <= index < len(rows):
                raise PathError(f"{path!r}: index {index} outside {len(rows)} rows")
            rows, many = [rows[index]], False
        elif m := _FILTER.match(sel):
            field, op, want = m.group(1).strip(), m.group(2), m.group(3).strip()
            rows, many = _filter(rows, field, op, want), True
        else:
            raise PathError(
                f"{path!r}: selector [{sel}] is not an index, *, field=value, field>=value or field=@max"
            )
    return rows, many


def _filter(rows: list[Any], field: str, op: str, want: str) -> list[Any]:
    """One field filter: = and != compare strings (a missing field reads as 'None'); <, <=, >, >= compare numbers
    when both sides are numbers, else strings, and drop rows without the field; =@max / =@min keep the rows whose
    number is the list's extreme."""
    dicts = [r for r in rows if isinstance(r, dict)]
    if op == "=" and want in ("@max", "@min"):
        numbers = [(r, _maybe_number(r.get(field))) for r in dicts]
        present = [n for _, n in numbers if n is not None]
        if not present:
            return []
        target = max(present) if want == "@max" else min(present)
        return [r for r, n in numbers if n is not None and n == target]
    if op in ("=", "!="):
        return [r for r in dicts if (str(r.get(field)) == want) != (op == "!=")]
    kept: list[Any] = []
    want_number = _maybe_number(want)
    for r in dicts:
        value = r.get(field)
        if value is None or str(value).strip() == "":
            continue
        number = _maybe_number(value)
        if number is not None and want_number is not None:
            a: Decimal | str = number
            b: Decimal | str = want_number
        else:
            a, b = str(value).strip(), want
        if _COMPARE[op](a, b):
            kept.append(r)
    return kept


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


def _mode(values: list[Any]) -> Any:
    """The most frequent value; among equally frequent ones, the one seen first."""
    keys = [json.dumps(v, ensure_ascii=False, sort_keys=True, default=str) for v in values]
    counts = Counter(keys)
    top = max(counts.values())
    return values[next(i for i, k in enumerate(keys) if counts[k] == top)]


def inner_path(path: str) -> str:
    """The selection a path reduces over (`max(rows[*].x)` -> `rows[*].x`); the path itself otherwise."""
    m = _FUNC.match(path.strip())
    return m.group(2) if m else path.strip()


def evaluate(result: Any, path: str) -> Any:
    """A single value (or, for `*`/filters that keep several values, an error), or a reduction's result."""
    path = path.strip()
    m = _FUNC.match(path)
    if m:
        func, inner = m.group(1), m.group(2)
        values = select(result, inner).values
        if func == "count":
            return len(values)
        if not values:
            raise PathError(f"{path!r}: nothing to reduce")
        if func == "first":
            return values[0]
        if func == "last":
            return values[-1]
        if func == "mode":
            return _mode(values)
        numbers = [api_number(v) for v in values]
        reduced = (
            max(numbers) if func == "max" else min(numbers) if func == "min" else sum(numbers, Decimal(0))
        )
        return plain_number(reduced)
    found = select(result, path)
    if len(found.values) != 1:
        raise PathError(
            f"{path!r} selects {len(found.values)} values where one is needed; narrow the selector"
        )
    return found.values[0]
