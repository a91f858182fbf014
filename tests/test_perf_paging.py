"""Depth-independent paging (kopa_gen/sandbox/store.py) serves exactly the rows OFFSET paging serves: every paged
list operation of every platform, pages at and around every kind of boundary (bookmarks, exact keys, the end)."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.language.kopa import Filter, Order
from kopa_gen.language.platform import Operation, Platform
from kopa_gen.project import Project
from kopa_gen.sandbox.store import WorldStore, _where, bookmarks, select_rows
from kopa_gen.world.build import BuiltWorld
from kopa_gen.world.lazy import open_world

from .conftest import repository_project

STRIDE = 7
LARGEST = 4_000
"""Rows a compared query may have (larger tables are narrowed by one of the operation's equality filters)."""


def paged_ops() -> list[tuple[str, str]]:
    project = repository_project()
    episode = {t.name for t in project.world.episode}
    return [
        (p.id, op.operation_id)
        for p in project.platforms
        for op in p.operations
        if op.kopa.shape == "list" and p.paged(op) and op.kopa.source is not None
        if op.kopa.source.table not in episode and op.kopa.source.order
    ]


@functools.cache
def _store(path: str) -> WorldStore:
    db = open_world(Path(path))
    return WorldStore(db, stride=STRIDE, exact=3 * STRIDE)


def _query(store: WorldStore, op: Operation) -> dict[str, str]:
    """No filter when the table is small enough; else the first equality filter, valued from the table's first
    row, that leaves between 3 bookmarks and LARGEST rows."""
    src = op.source
    if _at_most(store, src.table, src.filters, {}, LARGEST):
        return {}
    # any row values the filters (unordered: ordering a view of a hundred million timetable rows takes a minute)
    first = store.select(src.table, list({f.column for f in src.filters}), [], {}, [], 1)
    narrowed: dict[
        str, str
    ] = {}  # the first row's equality values, one more at a time (a school, then a grade)
    for f in src.filters:
        if f.match != "eq" or not first or first[0].get(f.column) in (None, ""):
            continue
        for values in ({f.param: str(first[0][f.column])}, {**narrowed, f.param: str(first[0][f.column])}):
            if _at_most(store, src.table, src.filters, values, LARGEST) and (
                store.count(src.table, src.filters, values) > 3 * STRIDE
            ):
                return values
        narrowed[f.param] = str(first[0][f.column])
    if _at_most(store, src.table, src.filters, {}, 10 * LARGEST):
        return {}  # the whole table after all (slower: a deep OFFSET page is the reference)
    pytest.skip(f"{op.tool}: no equality filter narrows {src.table} to at most {LARGEST:,} rows")


def _at_most(store: WorldStore, table: str, filters: list[Filter], values: dict[str, str], n: int) -> bool:
    """Whether the query has at most `n` rows (without counting all of a large table)."""
    where, args = _where(filters, values)
    sql = f'SELECT count(*) FROM (SELECT 1 FROM "{table}"{where} LIMIT ?)'
    return int(store.db.execute(sql, [*args, n + 1]).fetchone()[0]) <= n


def _offsets(total: int) -> list[int]:
    near = [0, 1, STRIDE - 1, STRIDE, STRIDE + 1, 2 * STRIDE - 1, 2 * STRIDE, 3 * STRIDE + 2]
    middle = [total // 2 - 1, total // 2, total // 2 + 1, total // STRIDE * STRIDE]
    end = [total - STRIDE - 1, total - 2, total - 1, total, total + 5]
    return sorted({o for o in near + middle + end if o >= 0})


@pytest.mark.parametrize(("platform_id", "operation_id"), paged_ops())
def test_bookmarked_pages_equal_offset_pages(
    project: Project, world: BuiltWorld, platform_id: str, operation_id: str
) -> None:
    platform: Platform = project.platform(platform_id)
    op = platform.operation(operation_id)
    src = op.source
    store = _store(str(world.path))
    values = _query(store, op)
    columns = list(op.row_fields)
    marks = bookmarks(store.db, src.table, src.filters, values, src.order, STRIDE, 3 * STRIDE)
    # an order with ties (a spec that breaks the rule "end with a unique key") has no bookmarks: OFFSET pages
    assert marks.total == store.count(src.table, src.filters, values)
    sizes = (1, 2 * STRIDE + 3) if marks.total <= LARGEST else (2 * STRIDE + 3,)
    for size in sizes:
        for offset in _offsets(marks.total):
            got = store.select(src.table, columns, src.filters, values, src.order, size, offset)
            want = select_rows(store.db, src.table, columns, src.filters, values, src.order, size, offset)
            assert got == want, f"{op.tool} {values} page of {size} at offset {offset} of {marks.total}"


def test_small_filtered_results_are_paged_by_their_keys(project: Project, world: BuiltWorld) -> None:
    """A filtered query of at most `exact` rows keeps every key; every page of it equals the OFFSET page."""
    store = _store(str(world.path))
    checked = 0
    for platform_id, operation_id in paged_ops():
        op = project.platform(platform_id).operation(operation_id)
        src = op.source
        eq = [f for f in src.filters if f.match == "eq"]
        if not eq or not _at_most(store, src.table, [], {}, LARGEST):
            continue
        first = store.select(src.table, [f.column for f in eq], [], {}, src.order, 1)
        if not first:
            continue
        values = {eq[0].param: str(first[0][eq[0].column])}
        total = store.count(src.table, src.filters, values)
        if not 1 < total <= 3 * STRIDE:
            continue
        marks = store.bookmarks(src.table, src.filters, values, src.order)
        assert marks.stride == 1 and marks.keys is not None and len(marks.keys) == total
        columns = list(op.row_fields)
        for size in (1, 2, 5):
            for offset in range(total + 1):
                got = store.select(src.table, columns, src.filters, values, src.order, size, offset)
                want = select_rows(store.db, src.table, columns, src.filters, values, src.order, size, offset)
                assert got == want, f"{op.tool} {values} page of {size} at offset {offset}"
        checked += 1
    assert checked > 0, "no paged operation has an equality filter with a small result to page by keys"


def test_a_tie_in_the_order_falls_back_to_offset() -> None:
    """An order that is not a strict total order of the rows has no bookmarks, and pages stay right."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (k TEXT, v INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(f"k{i // 3:03d}", i) for i in range(60)])
    order = [Order(column="k")]
    assert bookmarks(db, "t", [], {}, order, 4, 8).keys is None
    store = WorldStore(db, stride=4, exact=8)
    total_order = [Order(column="k"), Order(column="v", desc=True)]
    marks = bookmarks(db, "t", [], {}, total_order, 4, 8)
    assert marks.keys is not None and marks.stride == 4 and marks.total == 60
    filters = [Filter(param="from", column="v", match="gte")]
    for ordering in (order, total_order):
        for offset in range(0, 62, 3):
            for values in ({}, {"from": "31"}):
                got: list[dict[str, Any]] = store.select(
                    "t", ["k", "v"], filters, values, ordering, 5, offset
                )
                want = select_rows(db, "t", ["k", "v"], filters, values, ordering, 5, offset)
                if ordering is total_order:
                    assert got == want
                else:  # ties: the same rows in some order of the tied keys
                    assert [r["k"] for r in got] == [r["k"] for r in want]


def test_whole_table_bookmarks_are_scanned_once_per_world(tmp_path: Path) -> None:
    """The bookmarks and the total of an unfiltered list are kept next to the world: a later process (a new store
    over the same world) pages from them without scanning or counting the table, and serves the same pages as
    OFFSET paging."""
    rows = [(f"k{i % 17:02d}", i) for i in range(200)]

    def world() -> sqlite3.Connection:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE t (k TEXT, v INTEGER)")
        db.executemany("INSERT INTO t VALUES (?, ?)", rows)
        return db

    order = [Order(column="k"), Order(column="v", desc=True)]
    offsets = range(0, 205, 9)
    first = WorldStore(world(), stride=4, exact=8, files_dir=tmp_path)
    scanned = [first.select("t", ["k", "v"], [], {}, order, 5, offset) for offset in offsets]
    assert first.count("t", [], {}) == len(rows)
    assert len(list(tmp_path.glob("order-t-*.json"))) == 1
    db = world()
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    later = WorldStore(db, stride=4, exact=8, files_dir=tmp_path)
    kept = [later.select("t", ["k", "v"], [], {}, order, 5, offset) for offset in offsets]
    want = [select_rows(world(), "t", ["k", "v"], [], {}, order, 5, offset) for offset in offsets]
    assert kept == scanned == want
    assert statements and all("LIMIT" in sql for sql in statements), statements  # no scan without a LIMIT
    statements.clear()
    assert later.count("t", [], {}) == len(rows) and not statements  # the total is kept too
    # the first page, too, starts from the first bookmark (a range seek), not from a LIMIT over the sorted table
    assert later.select("t", ["k", "v"], [], {}, order, 5, 0) == want[0]
    assert statements and all(' WHERE "k" ' in sql and "OFFSET" not in sql for sql in statements), statements
    # another stride is another set of bookmarks, not the kept one
    other = WorldStore(world(), stride=8, exact=8, files_dir=tmp_path)
    assert [other.select("t", ["k", "v"], [], {}, order, 5, offset) for offset in offsets] == want
    assert len(list(tmp_path.glob("order-t-*.json"))) == 2
