"""Fill one world table: the step a one-process build and a parallel job share (every read a generator makes is
seen by SQLite's authorizer, so the build knows what a table was made from)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable

from kopa_gen.language.world import Table
from kopa_gen.world.declared import declared_rows, derive
from kopa_gen.world.registry import GenContext, Generator


def create_table(db: sqlite3.Connection, table: Table) -> None:
    """(Re)create an empty base table in `db`'s main schema."""
    db.execute(f'DROP TABLE IF EXISTS main."{table.name}"')
    cols = ", ".join(f'"{c.name}" {c.type.upper()}' for c in table.columns)
    db.execute(f'CREATE TABLE main."{table.name}" ({cols})')


def create_indexes(db: sqlite3.Connection, table: Table) -> None:
    """The table's declared indexes, then its statistics for the query planner."""
    for i, index in enumerate(table.indexes):
        cols = ", ".join(_index_column(c) for c in index)
        db.execute(f'CREATE INDEX "ix_{table.name}_{i}" ON "{table.name}" ({cols})')
    db.execute(f'ANALYZE "{table.name}"')


def _index_column(spec: str) -> str:
    name, _, direction = spec.partition(" ")
    if direction.strip().upper() not in ("", "ASC", "DESC"):
        raise ValueError(f"index column {spec!r}: only ' ASC' or ' DESC' may follow the name")
    return f'"{name}" {direction.strip().upper()}'.strip()


Gate = Callable[[str, str | None], bool]
"""May a generator read this table (name, schema)? A parallel job may not read a table the world lacks yet."""


def fill_table(
    db: sqlite3.Connection,
    ctx: GenContext,
    table: Table,
    registry: dict[str, Generator],
    gate: Gate | None = None,
) -> set[str]:
    """Create `table` (again) in `db`'s main schema and insert its rows; return the other tables it read
    (SQLite's authorizer sees every read; `gate` may refuse one, which fails the statement reading it)."""
    create_table(db, table)
    gen = registry[table.generator] if table.generator else declared_rows
    marks = ", ".join("?" for _ in table.columns)
    sql = f'INSERT INTO "{table.name}" VALUES ({marks})'
    reads: set[str] = set()

    def watch(
        action: int, arg1: str | None, arg2: str | None, db_name: str | None, source: str | None
    ) -> int:
        if action == sqlite3.SQLITE_READ and arg1 and arg1 != table.name and not arg1.startswith("sqlite_"):
            if gate is not None and not gate(arg1, db_name):
                return sqlite3.SQLITE_DENY
            reads.add(arg1)
        return sqlite3.SQLITE_OK

    db.set_authorizer(watch)
    try:
        if table.query is not None and table.generator is None:  # inside SQLite: no row goes through Python
            db.execute(f'INSERT INTO "{table.name}" {table.query}')
        else:
            rows = iter(gen(ctx, table))
            while batch := list(itertools.islice(rows, 20000)):
                db.executemany(sql, batch)
        if table.generator is None:
            derive(db, table, ctx.seed, ctx.today)
    except Exception as exc:
        exc.add_note(f"while building world table {table.name!r}")
        raise
    finally:
        db.set_authorizer(None)
    return reads
