"""Junction typing (EDGE Phase B): how many distinct values of the bound field cross a junction decides the
trajectory's shape.

    n = 1        Seq   one downstream call
    2 ≤ n ≤ φ    Fan   one downstream call per value (in parallel)
    n > φ        Drv   a deterministic reduction keeps at most φ values first:
                       numbers: max, min, ≥ pivot, ≤ pivot;  enums: = value;  dates: after pivot;
                       otherwise: the most frequent value.
                 Pivots are chosen among the observed values, so that 1..φ values remain.

A reduction is written in the task path language (kopa_gen/runtime/paths.py), so the gold chain states it and the
oracle replays it: rows[p=@max], rows[p>=v], rows[p=v], rows[p>v] (dates compare as YYYYMMDD strings)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

Kind = Literal["seq", "fan", "drv"]
ReductionKind = Literal["max", "min", "gte", "lte", "eq", "after", "mode"]
PHI = 5
_DATE = re.compile(r"^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$")


def junction_kind(n: int, phi: int = PHI) -> Kind:
    if n < 1:
        raise ValueError("a junction needs at least one value")
    return "seq" if n == 1 else "fan" if n <= phi else "drv"


def distinct(rows: Sequence[dict[str, Any]], field: str) -> list[str]:
    """Distinct non-empty values of a field, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        value = row.get(field)
        if value not in (None, ""):
            seen.setdefault(str(value), None)
    return list(seen)


def number(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value).replace(",", "").strip())
    except InvalidOperation:
        return None


def field_type(values: Sequence[str]) -> Literal["number", "date", "enum", "text"]:
    if values and all(_DATE.match(v) for v in values):
        return "date"
    if values and all(number(v) is not None for v in values):
        return "number"
    if values and len(set(values)) <= max(2, len(values) // 3) and len(set(values)) <= 12:
        return "enum"
    return "text"


@dataclass(frozen=True)
class Reduction:
    kind: ReductionKind
    pivot_field: str
    pivot: str  # the literal pivot value ('' for max/min)
    selector: str  # the path selector, e.g. "[sale_amt=@max]"
    kept: tuple[str, ...]  # the bound field's values that remain


def _keep(rows: Sequence[dict[str, Any]], pred: Any, field: str) -> list[str]:
    return distinct([r for r in rows if pred(r)], field)


def reductions(rows: Sequence[dict[str, Any]], field: str, phi: int = PHI) -> list[Reduction]:
    """Every reduction over another field of the rows that leaves 1..φ values of `field`, in a fixed order."""
    out: list[Reduction] = []
    names = sorted({k for r in rows for k in r if k != field})
    for p in names:
        values = [str(r[p]) for r in rows if r.get(p) not in (None, "")]
        if len(set(values)) < 2:
            continue
        kind = field_type(values)
        candidates: list[tuple[ReductionKind, str, str, Any]] = []
        if kind == "number":
            nums = sorted({n for n in map(number, values) if n is not None}, reverse=True)
            top, bottom = nums[0], nums[-1]
            candidates.append(("max", "", f"[{p}=@max]", lambda r, p=p, t=top: number(r.get(p)) == t))
            candidates.append(("min", "", f"[{p}=@min]", lambda r, p=p, b=bottom: number(r.get(p)) == b))
            for pivot in nums[1 : phi + 1]:
                text = _plain(pivot)
                candidates.append(
                    ("gte", text, f"[{p}>={text}]", lambda r, p=p, v=pivot: (number(r.get(p)) or -1e30) >= v)
                )
            for pivot in nums[::-1][1 : phi + 1]:
                text = _plain(pivot)
                candidates.append(
                    ("lte", text, f"[{p}<={text}]", lambda r, p=p, v=pivot: (number(r.get(p)) or 1e30) <= v)
                )
        elif kind == "date":
            for day in sorted(set(values), reverse=True)[1 : phi + 1]:
                candidates.append(
                    ("after", day, f"[{p}>{day}]", lambda r, p=p, v=day: str(r.get(p) or "") > v)
                )
        elif kind == "enum":
            for value in sorted(set(values)):
                candidates.append(("eq", value, f"[{p}={value}]", lambda r, p=p, v=value: str(r.get(p)) == v))
        else:
            counts = Counter(values)
            top_value, top_count = counts.most_common(1)[0]
            if top_count > 1 and list(counts.values()).count(top_count) == 1:
                candidates.append(
                    ("mode", top_value, f"[{p}={top_value}]", lambda r, p=p, v=top_value: str(r.get(p)) == v)
                )
        for kind_, pivot_text, selector, pred in candidates:
            if re.search(r"[\[\]=!<>\n]", pivot_text) or pivot_text.strip() != pivot_text:
                continue
            kept = _keep(rows, pred, field)
            if 1 <= len(kept) <= phi:
                out.append(Reduction(kind_, p, pivot_text, selector, tuple(kept)))
    return out


def _plain(d: Decimal) -> str:
    return str(int(d)) if d == d.to_integral_value() else format(d.normalize(), "f")


def choose_reduction(
    rows: Sequence[dict[str, Any]], field: str, rng: random.Random, phi: int = PHI
) -> Reduction | None:
    """One reduction for a Drv junction, preferring kinds in rotation so the dataset covers all of them."""
    options = reductions(rows, field, phi)
    if not options:
        return None
    by_kind: dict[str, list[Reduction]] = {}
    for r in options:
        by_kind.setdefault(r.kind, []).append(r)
    kind = rng.choice(sorted(by_kind))
    return rng.choice(by_kind[kind])
