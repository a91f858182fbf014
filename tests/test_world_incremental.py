"""Incremental world builds: after a change to one table only that table, the tables that read it, and the tables
sharing in-memory state with one of them are generated again; the result equals a fresh build, and the cache keeps
a bounded number of worlds per seed. On the toy world plus two generators registered here."""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.language.world import Table
from kopa_gen.project import load_project
from kopa_gen.world.build import KEEP, ensure_world
from kopa_gen.world.registry import GenContext, Row, generator, generators
from tests.toyspec import WORLD_FILE, write_project

if "test_doubled" not in generators():

    @generator("test_doubled")
    def _doubled(ctx: GenContext, table: Table) -> Iterable[Row]:
        """Reads `fruit`: every fruit at twice its price."""
        for code, price in ctx.rows("SELECT code, price FROM fruit ORDER BY code"):
            yield (code, price * 2)

    @generator("test_count", shares="test_state")
    def _count(ctx: GenContext, table: Table) -> Iterable[Row]:
        """Shares state with test_count_too: reads no table, yields its parameter."""
        yield (table.params.get("n", 1),)

    @generator("test_count_too", shares="test_state")
    def _count_too(ctx: GenContext, table: Table) -> Iterable[Row]:
        """The other table made from the shared state."""
        yield (0,)


def world(extra_price: int = 0, count: int = 1, note: str = "") -> dict[str, Any]:
    spec = copy.deepcopy(WORLD_FILE)
    spec["tables"][0]["anchors"][0]["price"] += extra_price
    spec["tables"] += [
        {
            "name": "doubled",
            "description": "Twice the price.",
            "generator": "test_doubled",
            "columns": [{"name": "code"}, {"name": "price", "type": "integer"}],
        },
        {
            "name": "counted",
            "description": f"A constant{note}.",
            "generator": "test_count",
            "params": {"n": count},
            "columns": [{"name": "n", "type": "integer"}],
        },
        {
            "name": "counted_too",
            "description": "Made from the same state.",
            "generator": "test_count_too",
            "columns": [{"name": "n", "type": "integer"}],
        },
        {
            "name": "unrelated",
            "description": "Nothing to do with fruit.",
            "generator": "static",
            "columns": [{"name": "x"}],
            "anchors": [{"x": "a"}],
        },
    ]
    return spec


def build(root: Path, spec: dict[str, Any]) -> tuple[list[str], Path]:
    write_project(root, world=spec)
    lines: list[str] = []
    built = ensure_world(load_project(root).world, progress=lines.append)
    made = [line.split() for line in lines if "rows" in line]  # "world 3/5 name: ..." in the order made
    return [words[2].rstrip(":") for words in sorted(made, key=lambda w: int(w[1].split("/")[0]))], built.path


def rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    db = sqlite3.connect(path)
    names = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'"
        )
    ]
    return {n: db.execute(f'SELECT * FROM "{n}" ORDER BY rowid').fetchall() for n in sorted(names)}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("KOPA_GEN_CACHE", str(folder))
    return folder


def test_only_what_changed_is_generated_again(tmp_path: Path, cache: Path) -> None:
    first, _ = build(tmp_path / "p", world())
    assert first == ["fruit", "doubled", "counted", "counted_too", "unrelated"]
    # a price changes: fruit, and doubled, which read it
    again, path = build(tmp_path / "p", world(extra_price=100))
    assert again == ["fruit", "doubled"]
    assert rows(path) == rows(build(tmp_path / "fresh", world(extra_price=100))[1])
    # a table sharing in-memory state is regenerated with every table of its group; the rest is reused
    shared, _ = build(tmp_path / "p", world(extra_price=100, count=2))
    assert shared == ["counted", "counted_too"]
    nothing, _ = build(tmp_path / "p", world(extra_price=100, count=2))
    assert nothing == []


def test_a_table_that_read_a_removed_table_is_generated_again(tmp_path: Path, cache: Path) -> None:
    build(tmp_path / "p", world())
    spec = world()
    spec["tables"] = [t for t in spec["tables"] if t["name"] != "unrelated"]
    assert build(tmp_path / "p", spec)[0] == []  # nothing read `unrelated`
    assert "unrelated" not in rows(build(tmp_path / "p", spec)[1])


def test_the_cache_keeps_a_bounded_number_of_worlds(tmp_path: Path, cache: Path) -> None:
    for price in range(5):
        build(tmp_path / "p", world(extra_price=price))
    assert len(list(cache.glob("world-7-*.sqlite"))) == KEEP + 1
    assert not list(cache.glob("*.tmp*")), "no partial world is left behind"


def with_sql_tables(extra_price: int = 0) -> dict[str, Any]:
    """The toy world plus a query table and a declared table, both reading `fruit`."""
    spec = world(extra_price=extra_price)
    spec["tables"] += [
        {
            "name": "cheap",
            "description": "Fruit under 2,400 won, dearest first, filled by one INSERT ... SELECT inside SQLite.",
            "query": "SELECT code, price FROM fruit WHERE price < 2400 ORDER BY price DESC",
            "columns": [{"name": "code"}, {"name": "price", "type": "integer"}],
        },
        {
            "name": "stock",
            "description": "Boxes of each fruit, drawn per row.",
            "for_each": {"table": "fruit", "count": [1, 3], "order": "code"},
            "columns": [
                {"name": "code", "gen": {"parent": "code"}},
                {"name": "box", "type": "integer", "gen": {"seq": 1}},
                {"name": "kg", "type": "real", "gen": {"uniform": [1, 9], "decimals": 1, "null": 0.3}},
                {
                    "name": "worth",
                    "type": "integer",
                    "gen": {"sql": "kg * (SELECT price FROM fruit f WHERE f.code = stock.code)"},
                },
            ],
        },
    ]
    return spec


def test_a_query_and_a_declared_table_rebuilt_alone_equal_a_cold_build(tmp_path: Path, cache: Path) -> None:
    build(tmp_path / "p", with_sql_tables())
    again, path = build(tmp_path / "p", with_sql_tables(extra_price=1000))
    assert again == ["fruit", "doubled", "cheap", "stock"]  # what read fruit; counted, unrelated reused
    cold = rows(build(tmp_path / "fresh", with_sql_tables(extra_price=1000))[1])
    assert rows(path) == cold
    # 사과 (F01) went from 1,200 to 2,200 won and is now the dearest under 2,400: the query ran again, every row kept
    assert cold["cheap"] == [("F01", 2200), ("F03", 1500)]
    assert {code for code, *_ in cold["stock"]} == {"F01", "F02", "F03"}
