"""Declared tables: a world table described column by column in the world spec, with no Python.

A declared table has `rows: N` or `for_each` (rows per row of another table) and a `gen` on every column. Each
column draws from its own stream (`seed:table:column`), so adding or changing one column never shifts another's
values. `sql` columns are computed after the rows are written (`derive`), in column order, with `:seed` and
`:today` bound. See docs/platforms.md ("Declared world tables") for the kinds and their modifiers.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from kopa_gen.language.world import Column, ColumnGen, Table, by_key
from kopa_gen.world.codes import check_digit
from kopa_gen.world.draws import Picker, below
from kopa_gen.world.names import weighted_names
from kopa_gen.world.places import Place, building_number, load_places, road_name
from kopa_gen.world.registry import GenContext, Row

Draw = Callable[[dict[str, Any], int], Any]
"""One column's value for a row: (the row so far, the row's sequence number n) -> value."""

RELATIVE = re.compile(r"^today\s*(?:([+-])\s*(\d+))?$")


def day(text: str, today: dt.date) -> dt.date:
    """'2024-03-01', 'today', 'today-30', 'today+7'."""
    m = RELATIVE.match(text.strip())
    if m:
        sign, days = m.groups()
        return today + dt.timedelta(days=(-1 if sign == "-" else 1) * int(days or 0))
    return dt.date.fromisoformat(text)


def _picker(values: Sequence[Any], weights: Sequence[float] | None, rng: random.Random) -> Callable[[], Any]:
    if weights is None:
        return lambda: values[below(rng, len(values))]
    picker = Picker(values, weights)
    return lambda: picker.pick(rng)


def _number(gen: ColumnGen, column: Column, rng: random.Random) -> Draw:
    if gen.integer is not None:
        lo, hi = gen.integer
        return lambda row, n: lo + int(rng.random() * (hi - lo + 1))
    if gen.uniform is not None:
        a, b = gen.uniform
        raw: Callable[[], float] = lambda: a + rng.random() * (b - a)  # noqa: E731
    elif gen.normal is not None:
        mean, sd = gen.normal
        raw = lambda: rng.gauss(mean, sd)  # noqa: E731
    else:
        assert gen.lognormal is not None
        median, sigma = gen.lognormal
        raw = lambda: median * math.exp(rng.gauss(0.0, sigma))  # noqa: E731
    clamp = gen.clamp
    decimals = 0 if column.type == "integer" and gen.decimals is None else gen.decimals

    def draw(row: dict[str, Any], n: int) -> Any:
        x = raw()
        if clamp is not None:
            x = min(max(x, clamp[0]), clamp[1])
        if decimals is None:
            return x
        return round(x) if decimals == 0 else round(x, decimals)

    return draw


def column_draw(ctx: GenContext, table: Table, column: Column) -> Draw | None:
    """The function filling `column`, or None for an `sql` column (derived after the insert). An `enum` was
    turned into a `choice` of the platform's values when the world spec was loaded."""
    gen = column.gen
    assert gen is not None
    rng = ctx.rng(f"{table.name}:{column.name}")
    kind = gen.kind
    if kind == "sql" or gen.by is not None:
        return None
    if kind == "value":
        value = gen.value
        return lambda row, n: value
    if kind == "seq":
        first: int = gen.seq or 0
        step = gen.step
        return lambda row, n: first + (n - 1) * step
    if kind == "code":
        fmt, start, rule = gen.code, gen.start, gen.check
        assert fmt is not None

        def code(row: dict[str, Any], n: int) -> str:
            text = fmt.format_map({**row, "n": start + n - 1})
            return text + check_digit(text, rule) if rule else text

        return code
    if kind == "choice":
        values: list[Any]
        weights: list[float] | None
        if isinstance(gen.choice, dict):
            values, weights = list(gen.choice), list(gen.choice.values())
        else:
            assert gen.choice is not None
            values, weights = list(gen.choice), gen.weights
        pick = _picker(values, weights, rng)
        return lambda row, n: pick()
    if kind in ("integer", "uniform", "normal", "lognormal"):
        return _number(gen, column, rng)
    if kind == "date":
        assert gen.date is not None
        first = day(gen.date[0], ctx.today).toordinal()
        span = day(gen.date[1], ctx.today).toordinal() - first + 1
        fmt_date = gen.format
        return lambda row, n: dt.date.fromordinal(first + int(rng.random() * span)).strftime(fmt_date)
    if kind == "person":
        (surnames, sw), (given, gw) = weighted_names()
        sur, giv = _picker(surnames, sw, rng), _picker(given, gw, rng)
        part = gen.person
        return lambda row, n: sur() if part == "surname" else giv() if part == "given" else sur() + giv()
    if kind == "address":
        source = gen.address
        assert source is not None
        return _address(ctx, rng, source)
    if kind == "ref":
        assert gen.ref is not None
        ref_table, ref_column = gen.ref.split(".", 1)
        sql = f'SELECT "{ref_column}"' + (f', "{gen.weight}"' if gen.weight else "") + f' FROM "{ref_table}"'
        sql += f" WHERE {gen.where}" if gen.where else ""
        rows = ctx.rows(sql + f' ORDER BY "{ref_column}"')
        if not rows:
            raise ValueError(f"{table.name}.{column.name}: ref {gen.ref} found no rows")
        pick = _picker([r[0] for r in rows], [float(r[1] or 0) for r in rows] if gen.weight else None, rng)
        return lambda row, n: pick()
    assert gen.parent is not None
    name = gen.parent
    return lambda row, n: row["parent"][name]


def district_prefix(code: str) -> str:
    """The code prefix every district inside `code` shares: 시도 2 digits; a 시 with 일반구 (sgg ending in 0) 4;
    a 시군구 5; a 읍면동 8; a 리 all 10 ('' for what is not a 10-digit code)."""
    if len(code) != 10 or not code.isdigit():
        return ""
    if code[2:] == "00000000":
        return code[:2]
    if code[5:] == "00000":
        return code[:4] if code[4] == "0" else code[:5]
    return code[:8] if code[8:] == "00" else code


def _address(ctx: GenContext, rng: random.Random, source: str) -> Draw:
    """Road addresses in the legal district whose code is in column `source`: in that 동 or 리 itself, or for a
    larger district (a 읍, a 구) in one of its current leaf 동/리 drawn from the stream. Blank for a code that is
    not current."""
    places: dict[str, Place] = {}
    inside: dict[str, list[Place]] = {}  # district prefix -> its places in code order (a 시도's, once loaded)
    loaded: set[str] = set()

    def draw(row: dict[str, Any], n: int) -> str | None:
        code = str(row.get(source) or "")
        if code[:2] not in loaded:
            loaded.add(code[:2])
            for p in load_places(ctx, code[:2]):
                places[p.region_cd] = p
                for cut in (2, 4, 5, 8, 10):  # every length district_prefix returns
                    inside.setdefault(p.region_cd[:cut], []).append(p)
        found = places.get(code)
        if found is None:
            choices = inside.get(district_prefix(code), [])
            if not choices:
                return None
            found = choices[int(rng.random() * len(choices))]
        return found.road_address(road_name(found, rng, found.sido.startswith("서울")), building_number(rng))

    return draw


def declared_rows(ctx: GenContext, table: Table) -> Iterator[Row]:
    """The rows of a declared table, column by column in spec order (an `sql` column is NULL until derived).
    A row sees the columns before it by name, its `for_each` parent as `parent`, and n (its sequence number)."""
    if table.query is not None:
        yield from ctx.db.execute(table.query)
        return
    # per column: its draw (None: NULL until derived), whether it counts per parent, its blanking stream and rate
    steps = [
        (
            c.name,
            column_draw(ctx, table, c) if c.gen is not None else None,
            c.gen is not None and c.gen.per_parent,
            ctx.rng(f"{table.name}:{c.name}:null") if c.gen is not None and c.gen.null > 0 else None,
            c.gen.null if c.gen is not None else 0.0,
        )
        for c in table.columns
    ]
    ordered = [c.name for c in table.columns]

    def fill(parent: dict[str, Any], n: int, local: int) -> Row:
        row: dict[str, Any] = {"parent": parent}
        for name, draw, per_parent, blank, null in steps:
            if draw is None:
                row[name] = None
                continue
            value = draw(row, local if per_parent else n)
            if blank is not None and blank.random() < null:
                value = None
            row[name] = value
        return tuple([row[name] for name in ordered])

    if table.for_each is None:
        for n in range(1, (table.rows or 0) + 1):
            yield fill({}, n, n)
        return
    each = table.for_each
    cursor = ctx.db.execute(
        f'SELECT * FROM "{each.table}"' + (f" WHERE {each.where}" if each.where else "") + " LIMIT 0"
    )
    width = len(cursor.description)
    order = each.order or ", ".join(str(i) for i in range(1, width + 1))
    parents = ctx.db.execute(
        f'SELECT * FROM "{each.table}"'
        + (f" WHERE {each.where}" if each.where else "")
        + f" ORDER BY {order}"
    )
    names_ = [d[0] for d in cursor.description]
    counts = ctx.rng(f"{table.name}:count")
    lo, hi = (each.count, each.count) if isinstance(each.count, int) else (each.count[0], each.count[1])
    n = 0
    for values in parents.fetchall():
        parent = dict(zip(names_, values, strict=True))
        for local in range(1, lo + int(counts.random() * (hi - lo + 1)) + 1):
            n += 1
            yield fill(parent, n, local)


def derive(db: sqlite3.Connection, table: Table, seed: int, today: dt.date) -> None:
    """Compute the columns a declared table fills after its rows are written: first every `ref ... by` (each
    reads a `ref` drawn at insert), then the `sql` ones in column order (one may read any of the former or an
    earlier `sql` column)."""
    for column in table.columns:
        if column.gen is not None and column.gen.ref is not None and column.gen.by is not None:
            ref_table, ref_column = column.gen.ref.split(".", 1)
            key = by_key(table, column)
            db.execute(
                f'UPDATE "{table.name}" SET "{column.name}" = (SELECT r."{ref_column}" FROM "{ref_table}" r '
                f'WHERE r."{key}" = "{table.name}"."{column.gen.by}")'
            )
    for column in table.columns:
        if column.gen is not None and column.gen.sql is not None:
            db.execute(
                f'UPDATE "{table.name}" SET "{column.name}" = ({column.gen.sql})',
                {"seed": seed, "today": today.isoformat()},
            )
