"""Declared world tables: every column kind fills real rows on the toy project's world, deterministically by seed,
column streams independent, `for_each` cardinalities held, enums read from the platform spec; broken declarations
fail at load with their place."""

from __future__ import annotations

import copy
import datetime as dt
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.language.diagnostics import Level, SpecError
from kopa_gen.project import load_project
from kopa_gen.world.build import build_into
from kopa_gen.world.codes import check_digit
from tests.toyspec import WORLD_FILE, spec_copy, write_project

REGIONS = {
    "name": "regions",
    "description": "The real legal-district master list.",
    "generator": "legal_districts",
    "columns": [
        {"name": n, "type": "integer" if n in ("locat_order", "abolished") else "text"}
        for n in "region_cd sido_cd sgg_cd umd_cd ri_cd name low_name high_cd locat_order created abolished".split()
    ],
}
STATIONS: dict[str, Any] = {
    "name": "stations",
    "description": "Weather stations in real 동 of 세종.",
    "rows": 40,
    "columns": [
        {"name": "stn_no", "type": "integer", "gen": {"seq": 100, "step": 10}},
        {"name": "stn_id", "gen": {"code": "S{n:05d}", "start": 7, "check": "luhn"}},
        {"name": "kind", "gen": {"choice": {"ASOS": 1, "AWS": 3}}},
        {"name": "price_cls", "gen": {"enum": "toy#/components/schemas/Grade"}},
        {
            "name": "region_cd",
            "gen": {
                "ref": "regions.region_cd",
                "where": "sido_cd = '36' AND umd_cd != '000' AND abolished = 0",
            },
        },
        {"name": "addr", "gen": {"address": "region_cd"}},
        {"name": "keeper", "gen": {"person": "full"}},
        {"name": "height", "type": "integer", "gen": {"integer": [3, 9]}},
        {"name": "temp", "type": "real", "gen": {"normal": [12.5, 3.0], "decimals": 1, "clamp": [5, 20]}},
        {"name": "opened", "gen": {"date": ["2001-01-01", "today-1"]}},
        {"name": "memo", "gen": {"value": "정상", "null": 0.5}},
        {
            "name": "age_days",
            "type": "integer",
            "gen": {
                "sql": "julianday(:today) - julianday(substr(opened,1,4) || '-' || substr(opened,5,2) || '-' || substr(opened,7,2))"
            },
        },
    ],
}
READINGS: dict[str, Any] = {
    "name": "readings",
    "description": "Readings per station.",
    "for_each": {"table": "stations", "where": "kind = 'AWS'", "count": [0, 3]},
    "columns": [
        {"name": "stn_id", "gen": {"parent": "stn_id"}},
        {"name": "no", "type": "integer", "gen": {"seq": 1, "per_parent": True}},
        {"name": "reading_id", "gen": {"code": "{stn_id}-{n:03d}"}},
    ],
}  # fmt: skip


def world_with(*tables: dict[str, Any], views: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    world = copy.deepcopy(WORLD_FILE)
    world["tables"] += [copy.deepcopy(t) for t in tables]
    world["views"] += views or []
    return world


def toy_spec() -> dict[str, Any]:
    spec = spec_copy()
    spec["components"]["schemas"]["Grade"] = {
        "type": "string",
        "description": "등급",
        "enum": ["특", "상", "보통"],
    }
    return spec


def build(tmp_path: Path, world: dict[str, Any], seed: int = 7, name: str = "w") -> sqlite3.Connection:
    root = write_project(tmp_path / name, toy_spec(), world)
    project = load_project(root)
    path = tmp_path / f"{name}.sqlite"
    build_into(project.world, seed, path)
    return sqlite3.connect(path)


def rows(db: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    return db.execute(sql).fetchall()


def test_every_kind_fills_its_column(tmp_path: Path) -> None:
    db = build(tmp_path, world_with(REGIONS, STATIONS))
    got = rows(db, "SELECT * FROM stations ORDER BY stn_no")
    assert len(got) == 40
    assert [r[0] for r in got] == list(range(100, 500, 10))
    # the code: n from 7, then a Luhn check digit (validated independently of check_digit)
    assert got[0][1][:6] == "S00007" and got[-1][1][:6] == "S00046"
    for _, stn_id, *_ in got:
        digits = [int(c) for c in stn_id[1:]]
        total = sum(
            d if i % 2 == 0 else (2 * d - 9 if 2 * d > 9 else 2 * d) for i, d in enumerate(reversed(digits))
        )
        assert total % 10 == 0, stn_id
    kinds = [r[2] for r in got]
    assert set(kinds) == {"ASOS", "AWS"} and kinds.count("AWS") > kinds.count("ASOS")
    assert {r[3] for r in got} <= {"특", "상", "보통"} and len({r[3] for r in got}) == 3
    names = dict(rows(db, "SELECT region_cd, name FROM regions"))
    for r in got:
        assert r[4].startswith("36") and r[4][5:8] != "000"
        # a road address in that very 동: 세종특별자치시 <읍면> <road> <number>
        assert r[5].startswith("세종특별자치시 ") and re.search(r"(로|길) \d+$", r[5]), r[5]
        town = names[r[4]].split(" ")[1]
        assert town in r[5] or not town.endswith(("읍", "면"))
        assert 2 <= len(r[6]) <= 4 and re.fullmatch(r"[가-힣]+", r[6])
        assert 3 <= r[7] <= 9
        assert 5.0 <= r[8] <= 20.0 and round(r[8], 1) == r[8]
        opened = dt.date(int(r[9][:4]), int(r[9][4:6]), int(r[9][6:]))
        assert dt.date(2001, 1, 1) <= opened <= dt.date(2026, 11, 28)
        assert r[11] == (dt.date(2026, 11, 29) - opened).days
    memos = [r[10] for r in got]
    assert set(memos) == {"정상", None}


def test_for_each_keeps_its_cardinality_and_parent(tmp_path: Path) -> None:
    db = build(tmp_path, world_with(REGIONS, STATIONS, READINGS))
    per = dict(rows(db, "SELECT stn_id, count(*) FROM readings GROUP BY stn_id"))
    aws = [r[0] for r in rows(db, "SELECT stn_id FROM stations WHERE kind = 'AWS'")]
    assert set(per) <= set(aws) and all(1 <= c <= 3 for c in per.values())
    assert len(per) < len(aws)  # some stations drew 0
    for stn_id, no, reading_id in rows(db, "SELECT * FROM readings"):
        assert reading_id.startswith(stn_id + "-")
        assert 1 <= no <= per[stn_id]
    assert sorted(rows(db, "SELECT stn_id, no FROM readings")) == sorted(
        (s, k) for s, c in per.items() for k in range(1, c + 1)
    )


def test_same_seed_same_rows_and_columns_are_independent(tmp_path: Path) -> None:
    a = rows(build(tmp_path, world_with(REGIONS, STATIONS), name="a"), "SELECT * FROM stations")
    b = rows(build(tmp_path, world_with(REGIONS, STATIONS), name="b"), "SELECT * FROM stations")
    c = rows(build(tmp_path, world_with(REGIONS, STATIONS), seed=8, name="c"), "SELECT * FROM stations")
    assert a == b and a != c
    changed = copy.deepcopy(STATIONS)
    changed["columns"][2]["gen"] = {"choice": ["X", "Y", "Z"]}
    changed["columns"].insert(3, {"name": "extra", "gen": {"integer": [0, 9]}})
    d = rows(build(tmp_path, world_with(REGIONS, changed), name="d"), "SELECT * FROM stations")
    kept = [i for i in range(len(a[0])) if i != 2]
    assert [[r[i] for i in kept] for r in a] == [[r[i if i < 3 else i + 1] for i in kept] for r in d]


def test_views_read_today_and_the_seed(tmp_path: Path) -> None:
    view = {"name": "toy_today", "description": "x", "sql": "SELECT seed, today, today_ymd FROM kopa_world"}
    db = build(tmp_path, world_with(views=[view]), seed=11)
    assert rows(db, "SELECT * FROM toy_today") == [(11, "2026-11-29", "20261129")]


def test_check_digits_on_published_numbers() -> None:
    assert check_digit("7992739871", "luhn") == "3"  # the textbook Luhn example 79927398713
    assert check_digit("124810099", "brn") == "8"  # 사업자등록번호 124-81-00998
    assert check_digit("130111000624", "mod10") == "6"  # 법인등록번호 130111-0006246


def problems(tmp_path: Path, *tables: dict[str, Any]) -> list[str]:
    write_project(tmp_path, toy_spec(), world_with(REGIONS, *tables))
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    return [d.render() for d in info.value.diagnostics if d.level is Level.ERROR]


def edited(table: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(table)
    for column, gen in changes.items():
        if column == "_table":
            out.update(gen)
            continue
        for c in out["columns"]:
            if c["name"] == column:
                c["gen"] = gen
    return out


W = "specs/world/toy.yaml"


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (edited(STATIONS, kind={"choice": ["a"], "integer": [1, 2]}),
         "tables[2].columns[2].gen: give exactly one generator kind of value, seq, code, choice, enum, integer, "
         "uniform, normal, lognormal, date, person, address, ref, parent, sql (given: choice, integer)"),
        (edited(STATIONS, _table={"for_each": {"table": "regions"}}),
         "tables[2]: stations: a declared table (no `generator`) needs one of `rows: N`, `for_each` or `query`"),
        (edited(STATIONS, region_cd={"ref": "regionz.region_cd"}),
         "tables[2].columns[4].gen.ref: stations: no base table 'regionz' before this one (declared tables read "
         "base tables built earlier, not views)"),
        (edited(STATIONS, region_cd={"ref": "regions.code"}),
         "tables[2].columns[4].gen.ref: stations: 'regions' has no column 'code'; it has region_cd, sido_cd, "
         "sgg_cd, umd_cd, ri_cd, name, low_name, high_cd, locat_order, created, abolished"),
        (edited(STATIONS, region_cd={"ref": "regions.region_cd", "where": "sido = 1"}),
         "tables[2].columns[4].gen: stations: no such column: sido (in where/weight)"),
        (edited(STATIONS, addr={"address": "keeper"}),
         "tables[2].columns[5].gen.address: stations: no earlier column 'keeper' holding a legal-district code"),
        (edited(STATIONS, stn_id={"code": "{kind}{n}"}),
         "tables[2].columns[1].gen.code: stations: format names kind: not an earlier column or n"),
        (edited(STATIONS, price_cls={"enum": "toy#/components/schemas/Fruit/properties/name"}),
         "tables[2].columns[3].gen.enum: 'toy#/components/schemas/Fruit/properties/name' is not a schema with "
         "an `enum` list; write 'platform#/pointer'"),
        (edited(STATIONS, price_cls={"enum": "nope#/x"}),
         "tables[2].columns[3].gen.enum: no platform spec 'nope' (specs/platforms/nope/)"),
        (edited(STATIONS, opened={"date": ["2001-01-01", "yesterday"]}),
         "tables[2].columns[9].gen.date[1]: stations: 'yesterday': write YYYY-MM-DD, today, today-N or today+N"),
        (edited(STATIONS, age_days={"sql": "julianday(openned)"}),
         "tables[2].columns[11].gen.sql: stations: no such column: openned"),
        (edited(STATIONS, keeper={"ref": "regions.name", "by": "kind"}),
         "tables[2].columns[6].gen.by: stations: by: 'kind' is not a `ref` column of stations (without `by` of "
         "its own)"),
        (edited(STATIONS, keeper={"person": "full", "by": "region_cd"}),
         "tables[2].columns[6].gen: `by` goes with `ref` (the table whose row the other column points at)"),
        (edited(READINGS, stn_id={"parent": "stn"}),
         "tables[2].columns[0].gen.parent: readings: 'stations' has no column 'stn'; it has stn_no, stn_id, "
         "kind, price_cls, region_cd, addr, keeper, height, temp, opened, memo, age_days"),
    ],
)  # fmt: skip
def test_broken_declarations_name_their_place(tmp_path: Path, table: dict[str, Any], expected: str) -> None:
    tables = (STATIONS, table) if table["name"] == "readings" else (table,)
    found = problems(tmp_path, *tables)
    if table["name"] == "readings":
        expected = expected.replace("tables[2]", "tables[3]")
    path, message = expected.split(": ", 1)
    assert any(line.startswith(W) and line.endswith(f"{path}: error: {message}") for line in found), found


def test_a_table_built_with_the_world_cannot_read_a_lazy_one(tmp_path: Path) -> None:
    """A table made at its first query is not in the world the build makes: one that reads it is an error at its
    place at load, not an SQLite error minutes into a build."""
    found = problems(tmp_path, {**STATIONS, "lazy": True}, READINGS)
    assert len(found) == 1 and found[0].startswith(W), found
    assert found[0].endswith(
        "tables[3]: error: readings reads 'stations', which is made at its first query (`lazy: true`), not with "
        "the world: drop `lazy` from 'stations', or read it in a view"
    ), found


def test_only_a_declared_table_is_made_at_its_first_query(tmp_path: Path) -> None:
    """A Python generator may share state with the tables built beside it: made alone, later, its rows would
    differ, so `lazy` on one is an error at the table."""
    world = copy.deepcopy(WORLD_FILE)
    world["tables"][0]["lazy"] = True
    write_project(tmp_path, toy_spec(), world)
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    found = [d.render() for d in info.value.diagnostics if d.level is Level.ERROR]
    assert found == [
        f"{W}:2: tables[0]: error: lazy: a table made by a Python generator ('static') is built with the world; "
        "only a declared table can be made at its first query"
    ], found


def test_ref_by_takes_the_row_another_column_points_at(tmp_path: Path) -> None:
    """`by` ties a column to the row an earlier `ref` drew: every station's district name is its district's."""
    stations = edited(STATIONS, keeper={"ref": "regions.name", "by": "region_cd"})
    db = build(tmp_path, world_with(REGIONS, stations))
    pairs = rows(db, "SELECT s.keeper, r.name FROM stations s JOIN regions r ON r.region_cd = s.region_cd")
    assert len(pairs) == 40 and all(keeper == name for keeper, name in pairs)
    assert len({keeper for keeper, _ in pairs}) > 5, "drawn per row, not one value for all"
