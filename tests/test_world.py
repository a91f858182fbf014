"""The world: deterministic by seed, consistent across platforms, realistic sizes, real anchors."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.compile.world_record import (
    LAZY_SAMPLE,
    lazy_digests,
    lazy_sample,
    record_drift,
    recorded,
)
from kopa_gen.project import Project
from kopa_gen.world.build import MANIFEST, BuiltWorld, build_into, table_digests
from kopa_gen.world.codes import check_digit
from kopa_gen.world.lazy import lazy_tables, open_world, side_path, side_paths


def small(project: Project) -> object:
    tables = []
    for t in project.world.tables:
        if t.name == "companies":
            t = t.model_copy(update={"params": {"count": 3000}})
        if t.name in ("regions", "companies", "financials"):
            tables.append(t)
    return project.world.model_copy(update={"tables": tables, "views": []})


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_bytes_other_seed_other_world(project: Project, tmp_path: Path) -> None:
    spec = small(project)
    build_into(spec, 11, tmp_path / "a.sqlite")  # type: ignore[arg-type]
    build_into(spec, 11, tmp_path / "b.sqlite")  # type: ignore[arg-type]
    build_into(spec, 12, tmp_path / "c.sqlite")  # type: ignore[arg-type]
    assert digest(tmp_path / "a.sqlite") == digest(tmp_path / "b.sqlite")
    a = (
        sqlite3.connect(tmp_path / "a.sqlite")
        .execute("SELECT corp_code FROM companies ORDER BY 1")
        .fetchall()
    )
    c = (
        sqlite3.connect(tmp_path / "c.sqlite")
        .execute("SELECT corp_code FROM companies ORDER BY 1")
        .fetchall()
    )
    assert a != c
    anchor = "SELECT corp_name, stock_code FROM companies WHERE corp_code = '00126380'"
    assert sqlite3.connect(tmp_path / "c.sqlite").execute(anchor).fetchone() == ("삼성전자", "005930")


def content(path: Path) -> str:
    """Every table's rows in order, and the views' definitions (a world built incrementally has other free
    pages, the same content)."""
    db = sqlite3.connect(path)
    h = hashlib.sha256()
    for name, kind, sql in db.execute("SELECT name, type, sql FROM sqlite_master ORDER BY name").fetchall():
        if name.startswith("sqlite_") or kind not in ("table", "view"):
            continue
        h.update(f"{name}|{sql}".encode())
        if kind == "table":  # rows in rowid order (views join by it); the build manifest by table name
            order = "name" if name == MANIFEST else "rowid"
            for row in db.execute(f'SELECT * FROM "{name}" ORDER BY {order}'):
                h.update(repr(row).encode())
    return h.hexdigest()


def test_the_world_built_here_has_the_recorded_rows(project: Project, world: BuiltWorld) -> None:
    """The whole world, every generator, built here (from nothing, on CI's fresh machine) has, table by table,
    the rows that `kopa-gen build` recorded where it last built it (generated/world.json)."""
    assert record_drift(project) is None
    here = table_digests(world.path)
    assert set(here) == {t.name for t in project.world.tables if not t.lazy}
    want = recorded(project)
    assert set(want) == set(here)
    differ = sorted(name for name in here if here[name] != want[name])
    assert not differ, f"{len(differ)} tables have other rows than recorded: {differ[:10]}"


def test_the_lazy_tables_made_here_have_the_recorded_rows(project: Project, world: BuiltWorld) -> None:
    """The catalog tables are left to their first query; the sample the record holds, made here (from nothing
    on CI), has the recorded rows, and so every process and machine makes them alike."""
    lazy = {t.name for t in project.world.tables if t.lazy}
    assert lazy and lazy_tables(world.path).names() == lazy
    want = recorded(project, "lazy")
    assert set(want) == set(lazy_sample(world.path)) and len(want) >= len(lazy) // LAZY_SAMPLE
    here = lazy_digests(world.path)
    differ = sorted(name for name in want if here[name] != want[name])
    assert not differ, f"{len(differ)} lazy tables have other rows than recorded: {differ[:10]}"


def test_a_lazy_table_is_made_at_its_first_query_as_the_build_would_make_it(
    project: Project, tmp_path: Path
) -> None:
    """A world with a catalog table left lazy holds none of its rows; the first query that names it (through any
    connection `open_world` gives, of any process) makes it once, in the side file, with the rows an eager build
    of the same table makes; a second query reads them."""
    catalog = next(  # one that reads no other table, so that the world can be the regions alone
        t
        for t in project.world.tables
        if t.lazy and all(c.gen is None or (c.gen.ref is None and c.gen.sql is None) for c in t.columns)
    )
    tables = [t for t in project.world.tables if t.name == "regions"] + [catalog]
    spec = project.world.model_copy(update={"tables": tables, "views": []})
    build_into(spec, 11, tmp_path / "w.sqlite")
    db = sqlite3.connect(tmp_path / "w.sqlite")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert catalog.name not in names and "regions" in names
    eager = spec.model_copy(update={"tables": [*tables[:-1], catalog.model_copy(update={"lazy": False})]})
    build_into(eager, 11, tmp_path / "e.sqlite")
    made = open_world(tmp_path / "w.sqlite")
    assert not any(side.stat().st_size for side in side_paths(tmp_path / "w.sqlite"))  # nothing made yet
    rows = made.execute(f'SELECT * FROM "{catalog.name}" ORDER BY rowid').fetchall()
    assert rows and len(rows) == catalog.rows
    assert (
        rows
        == sqlite3.connect(tmp_path / "e.sqlite")
        .execute(f'SELECT * FROM "{catalog.name}" ORDER BY rowid')
        .fetchall()
    )
    side = sqlite3.connect(side_path(tmp_path / "w.sqlite", catalog.name))
    made_there = side.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    assert made_there.fetchall() == [(catalog.name,)]
    again = open_world(tmp_path / "w.sqlite")  # another connection reads what the first made
    assert again.execute(f'SELECT count(*) FROM "{catalog.name}"').fetchone() == (len(rows),)
    with pytest.raises(sqlite3.OperationalError, match="no such table: not_a_table"):
        made.execute("SELECT * FROM not_a_table")


def test_a_lazy_table_appears_to_other_connections_whole(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process reading while a lazy table is being made sees no table (and waits for it to be made), never
    an empty or half-filled one: the suite's workers read the same side file."""
    import kopa_gen.world.lazy as lazy_module

    catalog = next(
        t
        for t in project.world.tables
        if t.lazy and all(c.gen is None or (c.gen.ref is None and c.gen.sql is None) for c in t.columns)
    )
    spec = project.world.model_copy(
        update={"tables": [t for t in project.world.tables if t.name == "regions"] + [catalog], "views": []}
    )
    build_into(spec, 11, tmp_path / "w.sqlite")
    seen: list[list[tuple[str]]] = []
    fill = lazy_module.fill_table

    def fill_and_look(db: sqlite3.Connection, *args: Any, **kwargs: Any) -> set[str]:
        reads = fill(db, *args, **kwargs)
        other = sqlite3.connect(side_path(tmp_path / "w.sqlite", catalog.name), timeout=0)
        seen.append(other.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall())
        return reads

    monkeypatch.setattr(lazy_module, "fill_table", fill_and_look)
    rows = open_world(tmp_path / "w.sqlite").execute(f'SELECT count(*) FROM "{catalog.name}"').fetchone()
    assert seen == [[]] and rows == (catalog.rows,)


def test_a_recorded_digest_is_the_rows_of_its_table(world: BuiltWorld) -> None:
    """The digests the build records are each table's rows in rowid order, recomputed here for every 40th table
    by name (the last one, and one of the largest, included)."""
    recorded_here = table_digests(world.path)
    names = sorted(recorded_here)
    db = sqlite3.connect(world.path)
    for name in {*names[::40], names[-1], "companies"}:
        h = hashlib.sha256()
        for row in db.execute(f'SELECT * FROM "{name}" ORDER BY rowid'):
            h.update(repr(row).encode())
        assert recorded_here[name] == h.hexdigest(), name


def test_sizes_and_anchors(world: BuiltWorld) -> None:
    db = sqlite3.connect(world.path)
    one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
    assert one("SELECT COUNT(*) FROM companies") >= 100_000
    assert one("SELECT COUNT(*) FROM dart_corp_codes") >= 100_000
    assert one("SELECT COUNT(*) FROM fsc_stock_prices") >= 224_958
    assert one("SELECT COUNT(*) FROM region_legal_districts") == 20_564
    offices = {r[0] for r in db.execute("SELECT DISTINCT ATPT_OFCDC_SC_CODE FROM neis_schools")}
    assert offices == {
        "B10",
        "C10",
        "D10",
        "E10",
        "F10",
        "G10",
        "H10",
        "I10",
        "J10",
        "K10",
        "M10",
        "N10",
        "P10",
        "Q10",
        "R10",
        "S10",
        "T10",
    }
    sidos = {r[0] for r in db.execute("SELECT locatadd_nm FROM region_legal_districts WHERE sgg_cd = '000'")}
    assert (
        len(sidos) == 17 and "강원특별자치도" in sidos and "전북특별자치도" in sidos and "강원도" not in sidos
    )


def test_company_is_the_same_company_everywhere(world: BuiltWorld) -> None:
    db = sqlite3.connect(world.path)
    rows = db.execute(
        "SELECT c.corp_code, c.stock_code, c.jurir_no, o.fssCorpUnqNo, o.crno, d.jurir_no "
        "FROM companies c JOIN fsc_corp_outlines o ON o.crno = c.jurir_no "
        "JOIN dart_companies d ON d.corp_code = c.corp_code WHERE c.corp_cls != 'E' LIMIT 200"
    ).fetchall()
    assert len(rows) == 200
    for corp_code, _stock, jurir, fss, crno, dart_jurir in rows:
        assert fss == corp_code and crno == jurir == dart_jurir
    prices = db.execute(
        "SELECT COUNT(*) FROM fsc_stock_prices p JOIN companies c ON c.stock_code = p.srtnCd "
        "WHERE p.itmsNm != c.corp_name"
    ).fetchone()[0]
    assert prices == 0


def test_isins_carry_their_check_digit(world: BuiltWorld) -> None:
    assert check_digit("KR700593000", "isin") == "3"  # Samsung Electronics KR7005930003
    assert check_digit("US037833100", "isin") == "5"  # Apple US0378331005 (a letter pair other than KR)
    db = sqlite3.connect(world.path)
    rows = db.execute("SELECT srtnCd, isinCd FROM fsc_securities").fetchall()
    assert rows and all(isin == f"KR7{code}00" + check_digit(f"KR7{code}00", "isin") for code, isin in rows)


def test_addresses_are_real_legal_districts(world: BuiltWorld) -> None:
    db = sqlite3.connect(world.path)
    bad = db.execute(
        "SELECT COUNT(*) FROM companies c LEFT JOIN regions r ON r.region_cd = c.region_cd "
        "WHERE r.region_cd IS NULL OR r.abolished = 1 OR substr(c.adres, 1, length(r.name)) != r.name"
    ).fetchone()[0]
    assert bad == 1, (
        "only Samsung's real address (double space after 영통구) differs from the master's spelling"
    )
    sido_names = {r[0] for r in db.execute("SELECT name FROM regions WHERE abolished = 0 AND sgg_cd = '000'")}
    schools = db.execute("SELECT LCTN_SC_NM, ORG_RDNMA FROM neis_schools").fetchall()
    assert schools and all(lctn in sido_names and addr.startswith(lctn + " ") for lctn, addr in schools)
