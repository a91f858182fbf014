"""The functions of the task path language. Each is written `f(input, args...)` or `input | f(args...)`.

Reductions take a list (a selection of several values, or a value that is a list) and give one value;
`each` functions apply to every value of a selection, or to the one value. Numbers in the APIs are strings
("57,600", "-.39", "1073.0 Kcal"): every numeric function reads them as numbers. docs/tasks.md lists them with
examples; `FUNCTIONS` is the registry the parser checks names and argument counts against.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Literal


class PathError(ValueError):
    """The path does not parse or does not fit the result; the message says where."""


_NUMERIC = re.compile(r"[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")


def api_number(value: Any) -> Decimal:
    """An API number ("57,600", "-.39", 12) as a Decimal, commas removed; a PathError when it is not one."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or value is None:
        raise PathError(f"{value!r} is not a number")
    try:
        return Decimal(str(value).replace(",", "").replace("−", "-").strip())
    except InvalidOperation as exc:
        raise PathError(f"{value!r} is not a number") from exc


_WITH_UNIT = re.compile(r"^\s*[￦₩]?\s*([-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+))(?:\s*[A-Za-z가-힣%]{1,6})?\s*$")


def maybe_number(value: Any) -> Decimal | None:
    """The value as a finite number, or None (missing, empty, or not a number). A number after a won sign or
    followed by a unit word ('￦13,000', '1073.0 Kcal', '3,070원') reads as the number: comparisons and extremes
    see through them."""
    try:
        d = api_number(value)
    except PathError:
        m = _WITH_UNIT.match(str(value)) if isinstance(value, str) else None
        if m is None:
            return None
        d = api_number(m.group(1))
    return d if d.is_finite() else None


def measure(value: Any) -> Decimal:
    """A value a reduction counts with: a number as `maybe_number` reads it (won signs and units seen through);
    a PathError naming the value otherwise."""
    d = maybe_number(value)
    if d is None:
        raise PathError(f"{value!r} is not a number")
    return d


def plain_number(d: Decimal) -> int | float:
    """An int when integral, else a float: how numbers leave the language."""
    return int(d) if d == d.to_integral_value() else float(d)


def to_text(value: Any) -> str:
    """A value as text: numbers without a needless '.0', dates as YYYY-MM-DD, lists joined by ','."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal | int | float):
        d = api_number(value)
        return str(plain_number(d)) if d == d.to_integral_value() else format(d.normalize(), "f")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return ",".join(to_text(v) for v in value)
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def coerce_arg(kind: str | None, value: Any) -> Any:
    """A handed-on value in the type an argument takes (`kind`: its JSON Schema type; results carry numbers as
    strings and the path language hands numbers on as numbers): an int for an integer argument given digits, text
    for a string argument given a number; lists, objects, booleans and text otherwise pass as they are. The one
    rule for the gold walker and EDGE's probes alike."""
    if kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    if kind in ("string", None) and not isinstance(value, str | list | dict | bool):
        return to_text(value)
    return value


def as_list(value: Any) -> list[Any]:
    """A value that is a list as its items; any other value as a list of one."""
    return list(value) if isinstance(value, list) else [value]


@dataclass(frozen=True)
class FuncSpec:
    name: str
    kind: Literal["reduce", "each"]
    run: Callable[[Any, Sequence[Any]], Any]
    min_args: int
    max_args: int
    signature: str
    doc: str
    chooses: bool = False  # a reduction that picks one of its items (max, first, ...): relaxed when pooling
    offers: Callable[[list[Any]], list[Any]] | None = (
        None  # what a choosing reduction chose among (default: items)
    )


FUNCTIONS: dict[str, FuncSpec] = {}


def register(
    name: str,
    kind: Literal["reduce", "each"],
    signature: str,
    doc: str,
    args: tuple[int, int] = (0, 0),
    chooses: bool = False,
    offers: Callable[[list[Any]], list[Any]] | None = None,
) -> Callable[[Callable[[Any, Sequence[Any]], Any]], Callable[[Any, Sequence[Any]], Any]]:
    """Add a function to the registry the parser and the evaluator read (kopa_gen/language/arith.py adds its
    own)."""

    def wrap(run: Callable[[Any, Sequence[Any]], Any]) -> Callable[[Any, Sequence[Any]], Any]:
        FUNCTIONS[name] = FuncSpec(name, kind, run, args[0], args[1], signature, doc, chooses, offers)
        return run

    return wrap


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise PathError(f"{what} must be a whole number, got {value!r}")
    try:
        number = Decimal(str(value))
    except InvalidOperation as exc:
        raise PathError(f"{what} must be a whole number, got {value!r}") from exc
    if number != number.to_integral_value():
        raise PathError(f"{what} must be a whole number, got {value!r}")
    return int(number)


def _nonempty(items: list[Any], name: str) -> list[Any]:
    if not items:
        raise PathError(f"{name}: nothing to reduce (the selection is empty)")
    return items


# --------------------------------------------------------------------------------------------- reductions


@register("count", "reduce", "count(list)", "How many values (0 for an empty selection).")
def _count(items: list[Any], args: Sequence[Any]) -> int:
    return len(items)


@register("sum", "reduce", "sum(list)", "The sum of the values read as numbers.")
def _sum(items: list[Any], args: Sequence[Any]) -> Decimal:
    return sum((measure(v) for v in _nonempty(items, "sum")), Decimal(0))


@register("avg", "reduce", "avg(list)", "The mean of the values read as numbers.")
def _avg(items: list[Any], args: Sequence[Any]) -> Decimal:
    numbers = [measure(v) for v in _nonempty(items, "avg")]
    return sum(numbers, Decimal(0)) / len(numbers)


@register("max", "reduce", "max(list)", "The largest value read as a number.", chooses=True)
def _max(items: list[Any], args: Sequence[Any]) -> Decimal:
    return max(measure(v) for v in _nonempty(items, "max"))


@register("min", "reduce", "min(list)", "The smallest value read as a number.", chooses=True)
def _min(items: list[Any], args: Sequence[Any]) -> Decimal:
    return min(measure(v) for v in _nonempty(items, "min"))


@register("first", "reduce", "first(list)", "The first value.", chooses=True)
def _first(items: list[Any], args: Sequence[Any]) -> Any:
    return _nonempty(items, "first")[0]


@register("last", "reduce", "last(list)", "The last value.", chooses=True)
def _last(items: list[Any], args: Sequence[Any]) -> Any:
    return _nonempty(items, "last")[-1]


@register(
    "mode",
    "reduce",
    "mode(list)",
    "The most frequent value; a tie is an error (no single answer).",
    chooses=True,
)
def _mode(items: list[Any], args: Sequence[Any]) -> Any:
    values = _nonempty(items, "mode")
    keys = [json.dumps(v, ensure_ascii=False, sort_keys=True, default=str) for v in values]
    counts = Counter(keys)
    top = max(counts.values())
    tied = [values[keys.index(k)] for k, n in counts.items() if n == top]
    if len(tied) > 1:
        shown = ", ".join(to_text(v) for v in tied[:5])
        raise PathError(
            f"mode: {len(tied)} values are equally frequent ({shown}, each {top}x); no single answer"
        )
    return tied[0]


@register("join", "reduce", "join(list, sep=',')", "The values as text joined by `sep`.", (0, 1))
def _join(items: list[Any], args: Sequence[Any]) -> str:
    sep = str(args[0]) if args else ","
    return sep.join(to_text(v) for v in items)


@register("list", "reduce", "list(list)", "The selection as one list value (a list answer, a join).")
def _list(items: list[Any], args: Sequence[Any]) -> list[Any]:
    return list(items)


@register("unique", "reduce", "unique(list)", "The distinct values, in order of first appearance.")
def _unique(items: list[Any], args: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for v in items:
        if v not in out:
            out.append(v)
    return out


def _sort_key(v: Any) -> tuple[int, Any]:
    number = maybe_number(v)
    return (0, number) if number is not None else (1, to_text(v))


@register("sort", "reduce", "sort(list)", "The values in ascending order (numbers as numbers, else as text).")
def _sort(items: list[Any], args: Sequence[Any]) -> list[Any]:
    return sorted(items, key=_sort_key)


@register("sort_desc", "reduce", "sort_desc(list)", "The values in descending order.")
def _sort_desc(items: list[Any], args: Sequence[Any]) -> list[Any]:
    return sorted(items, key=_sort_key, reverse=True)


@register("take", "reduce", "take(list, n)", "The first n values (a negative n: the last -n).", (1, 1))
def _take(items: list[Any], args: Sequence[Any]) -> list[Any]:
    n = _int(args[0], "take(n)")
    return items[:n] if n >= 0 else items[n:]


# ------------------------------------------------------------------------------------------------- text


@register("text", "each", "text(x)", "The value as text (12.0 -> '12', a date -> 'YYYY-MM-DD').")
def _text(value: Any, args: Sequence[Any]) -> str:
    return to_text(value)


@register("strip", "each", "strip(x)", "Text without surrounding spaces.")
def _strip(value: Any, args: Sequence[Any]) -> str:
    return to_text(value).strip()


@register("prefix", "each", "prefix(x, n)", "The first n characters.", (1, 1))
def _prefix(value: Any, args: Sequence[Any]) -> str:
    return to_text(value)[: _int(args[0], "prefix(n)")]


@register("suffix", "each", "suffix(x, n)", "The last n characters.", (1, 1))
def _suffix(value: Any, args: Sequence[Any]) -> str:
    n = _int(args[0], "suffix(n)")
    return to_text(value)[-n:] if n > 0 else ""


@register("slice", "each", "slice(x, start, end?)", "Characters start..end-1 (Python slicing).", (1, 2))
def _slice(value: Any, args: Sequence[Any]) -> Any:
    start = _int(args[0], "slice(start)")
    end = _int(args[1], "slice(end)") if len(args) > 1 else None
    if isinstance(value, list):
        return value[start:end]
    return to_text(value)[start:end]


@register(
    "regex",
    "each",
    "regex(x, pattern, group=1)",
    "The first match of a regular expression: its first group (or the given group; 0 = the whole match).",
    (1, 2),
)
def _regex(value: Any, args: Sequence[Any]) -> str:
    try:
        pattern = re.compile(str(args[0]))
    except re.error as exc:
        raise PathError(f"regex: bad pattern {args[0]!r}: {exc}") from exc
    m = pattern.search(to_text(value))
    if m is None:
        raise PathError(f"regex: {args[0]!r} does not match {to_text(value)!r}")
    group = _int(args[1], "regex(group)") if len(args) > 1 else (1 if pattern.groups else 0)
    try:
        return m.group(group) or ""
    except IndexError as exc:
        raise PathError(f"regex: {args[0]!r} has no group {group}") from exc


@register(
    "split",
    "each",
    "split(x, sep, index?)",
    "Text split at `sep` ('' or ' ': at runs of spaces): the part at `index`, or all parts as a list.",
    (1, 2),
)
def _split(value: Any, args: Sequence[Any]) -> Any:
    sep = str(args[0])
    parts = to_text(value).split() if sep.strip() == "" else to_text(value).split(sep)
    if len(args) == 1:
        return parts
    index = _int(args[1], "split(index)")
    if not -len(parts) <= index < len(parts):
        raise PathError(f"split: index {index} outside {len(parts)} parts of {to_text(value)!r}")
    return parts[index]


@register(
    "words",
    "each",
    "words(x, start, end?)",
    "Space-separated words start..end-1 joined by one space.",
    (1, 2),
)
def _words(value: Any, args: Sequence[Any]) -> str:
    parts = to_text(value).split()
    start = _int(args[0], "words(start)")
    end = _int(args[1], "words(end)") if len(args) > 1 else start + 1
    picked = parts[start:end]
    if not picked:
        raise PathError(f"words: no words {start}..{end - 1} in {to_text(value)!r}")
    return " ".join(picked)


@register("replace", "each", "replace(x, old, new)", "Every `old` replaced by `new`.", (2, 2))
def _replace(value: Any, args: Sequence[Any]) -> str:
    return to_text(value).replace(str(args[0]), str(args[1]))


@register(
    "map",
    "each",
    "map(x, 'from=to', ...)",
    "A code translated by a table of `from=to` pairs (an unknown code is an error).",
    (1, 20),
)
def _map(value: Any, args: Sequence[Any]) -> str:
    table: dict[str, str] = {}
    for pair in args:
        key, sep, out = str(pair).partition("=")
        if not sep:
            raise PathError(f"map: {pair!r} is not a from=to pair")
        table[key.strip()] = out.strip()
    key = to_text(value).strip()
    if key not in table:
        raise PathError(f"map: {key!r} is not in the table ({', '.join(table)})")
    return table[key]


# ---------------------------------------------------------------------------------------------- numbers


@register(
    "number",
    "each",
    "number(x)",
    "The first number in the text, thousands separators and units dropped ('1,446원' -> 1446, '1073.0 Kcal' -> "
    "1073).",
)
def _number(value: Any, args: Sequence[Any]) -> Decimal:
    return first_number(value)


def first_number(value: Any) -> Decimal:
    """A number, or the first number written in a text (thousands separators and units dropped)."""
    if isinstance(value, Decimal | int | float) and not isinstance(value, bool):
        return api_number(value)
    m = _NUMERIC.search(to_text(value))
    if m is None:
        raise PathError(f"number: no number in {to_text(value)!r}")
    return api_number(m.group())


@register("abs", "each", "abs(x)", "The absolute value.")
def _abs(value: Any, args: Sequence[Any]) -> Decimal:
    return abs(first_number(value))


@register("round", "each", "round(x, digits=0)", "Rounded half up to `digits` decimals.", (0, 1))
def _round(value: Any, args: Sequence[Any]) -> Decimal:
    digits = _int(args[0], "round(digits)") if args else 0
    return first_number(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


@register("fixed", "each", "fixed(x, digits)", "The number as text with exactly `digits` decimals.", (1, 1))
def _fixed(value: Any, args: Sequence[Any]) -> str:
    digits = _int(args[0], "fixed(digits)")
    return format(_round(value, (digits,)), f".{max(digits, 0)}f")


# ------------------------------------------------------------------------------------------------ dates

_DATE = re.compile(r"^(\d{4})[-./]?(\d{1,2})[-./]?(\d{1,2})\.?$")
WEEKDAYS = "월화수목금토일"


def to_date(value: Any) -> dt.date:
    if isinstance(value, dt.date):
        return value
    text = to_text(value).strip()
    m = _DATE.match(text)
    if m is None or (len(text) == 8 and not text.isdigit()):
        raise PathError(f"date: {text!r} is not a date (YYYYMMDD, YYYY-MM-DD or YYYY.MM.DD)")
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError as exc:
        raise PathError(f"date: {text!r} is not a valid date") from exc


@register("date", "each", "date(x)", "The value as a date (from YYYYMMDD, YYYY-MM-DD or YYYY.MM.DD).")
def _date(value: Any, args: Sequence[Any]) -> dt.date:
    return to_date(value)


@register("add_days", "each", "add_days(x, n)", "The date n days later (n < 0: earlier).", (1, 1))
def _add_days(value: Any, args: Sequence[Any]) -> dt.date:
    return to_date(value) + dt.timedelta(days=_int(args[0], "add_days(n)"))


@register(
    "add_months",
    "each",
    "add_months(x, n)",
    "The date n months later, the day cut to the month's end.",
    (1, 1),
)
def _add_months(value: Any, args: Sequence[Any]) -> dt.date:
    d = to_date(value)
    months = d.year * 12 + d.month - 1 + _int(args[0], "add_months(n)")
    year, month = divmod(months, 12)
    month += 1
    for day in range(d.day, 27, -1):
        try:
            return dt.date(year, month, day)
        except ValueError:
            continue
    return dt.date(year, month, min(d.day, 28))


@register("weekday", "each", "weekday(x)", "The Korean weekday of a date: 월 화 수 목 금 토 일.")
def _weekday(value: Any, args: Sequence[Any]) -> str:
    return WEEKDAYS[to_date(value).weekday()]


@register("ymd", "each", "ymd(x)", "A date as YYYYMMDD text (what most APIs take).")
def _ymd(value: Any, args: Sequence[Any]) -> str:
    return to_date(value).strftime("%Y%m%d")


@register("iso", "each", "iso(x)", "A date as YYYY-MM-DD text.")
def _iso(value: Any, args: Sequence[Any]) -> str:
    return to_date(value).isoformat()
