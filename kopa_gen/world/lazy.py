"""Tables synthesised at their first query: the world's catalog tables (one per operation the default world
serves, `Table.lazy`) are not built with the world. The build writes what each one is (its spec, in the world
file's `_kopa_lazy`), and the first query that names one makes it, in a side file beside the world's bulk
downloads (`files/<world>/lazy-<k>.sqlite`, one of SHARDS by the table's name), under that file's lock, for every
later query and process over the same world. The tables are spread over several files because every change of a
file's schema makes each connection that reads it parse that schema again: one file of 1,573 tables (4,000 schema
entries) made that 23 ms per table made, 8 files an eighth of it.
A world's build time and size then grow with the tables it is made of (regions, companies, laws), not with the
number of operations a catalog lists; a catalog table costs its 7 ms when something reads it.

Every connection `open_world` gives attaches the side files, and its `execute` makes a missing lazy table and runs
the statement again (SQLite says `no such table: NAME` when it prepares it). The rows are the ones an eager build
makes: the same `fill_table`, the same seed and day, the same tables to read (the world, attached read-only)."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import re
import sqlite3
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kopa_gen.language.world import WORLD_TABLE, Table
from kopa_gen.world.fill import create_indexes, fill_table
from kopa_gen.world.registry import GenContext, generators

LAZY = "_kopa_lazy"
"""The world file's table of lazy tables: (name, the table's spec as JSON)."""
SHARDS = 8
"""Side files per world (SQLite attaches at most 10 databases to a connection unless compiled otherwise)."""
MISSING = re.compile(r"no such table: (?:main\.)?([A-Za-z_][A-Za-z0-9_]*)")


def side_paths(world: Path) -> list[Path]:
    """Where a world's lazy tables are made: beside its bulk downloads and kept counts."""
    return [world.parent / "files" / world.stem / f"lazy-{k}.sqlite" for k in range(SHARDS)]


def side_path(world: Path, table: str) -> Path:
    """The side file a lazy table is made in (by a digest of its name: the same on every machine)."""
    return side_paths(world)[zlib.crc32(table.encode()) % SHARDS]


def write_lazy_specs(db: sqlite3.Connection, tables: list[Table]) -> None:
    """Record, in the world being built, the tables it leaves to their first query."""
    db.execute(f'DROP TABLE IF EXISTS "{LAZY}"')
    db.execute(f'CREATE TABLE "{LAZY}" (name TEXT PRIMARY KEY, spec TEXT)')
    db.executemany(f'INSERT INTO "{LAZY}" VALUES (?, ?)', [(t.name, t.model_dump_json()) for t in tables])


class LazyTables:
    """The lazy tables of one built world, made on demand into its side files (one process at a time per file)."""

    def __init__(self, world: Path) -> None:
        self.world = world
        self.sides = side_paths(world)
        self._names: frozenset[str] | None = None
        self._made: set[str] = set()
        self._lock = threading.Lock()

    def names(self) -> frozenset[str]:
        """The world's lazy tables (none in a world built before they existed)."""
        if self._names is None:
            with contextlib.closing(_world_reader(self.world)) as db:
                found = db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (LAZY,)
                )
                self._names = (
                    frozenset(row[0] for row in db.execute(f'SELECT name FROM "{LAZY}"'))
                    if found.fetchone()
                    else frozenset()
                )
        return self._names

    def prepare(self) -> None:
        """The side files exist (empty at first), so that a reader can attach them."""
        for side in self.sides:
            if not side.exists():
                side.parent.mkdir(parents=True, exist_ok=True)
                with _locked(side):
                    if not side.exists():
                        sqlite3.connect(side).close()

    def ensure(self, name: str) -> bool:
        """Make the lazy table `name` if no process has; False when `name` is not a lazy table of this world."""
        if name in self._made:
            return True
        if name not in self.names():
            return False
        side = side_path(self.world, name)
        with self._lock, _locked(side):
            # autocommit mode, one explicit transaction: the table appears to other connections whole (in the
            # driver's default mode its CREATE would commit on its own, and a reader could see it empty)
            db = sqlite3.connect(side.as_uri(), uri=True, timeout=60, isolation_level=None)
            try:
                here = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
                if here.fetchone() is None:
                    self._make(db, name)
            finally:
                db.close()
            self._made.add(name)
        return True

    def _make(self, db: sqlite3.Connection, name: str) -> None:
        db.execute("ATTACH ? AS world", (f"{self.world.as_uri()}?mode=ro&immutable=1",))
        (spec,) = db.execute(f'SELECT spec FROM world."{LAZY}" WHERE name = ?', (name,)).fetchone()
        table = Table.model_validate_json(spec)
        seed, today = db.execute(f'SELECT seed, today FROM world."{WORLD_TABLE}"').fetchone()
        ctx = GenContext(seed=int(seed), today=dt.date.fromisoformat(today), db=db)
        db.execute("BEGIN IMMEDIATE")
        try:
            fill_table(db, ctx, table, generators())
            create_indexes(db, table)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


@contextlib.contextmanager
def _locked(side: Path) -> Iterator[None]:
    """One process at a time makes tables in a side file."""
    side.parent.mkdir(parents=True, exist_ok=True)
    with open(side.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


class WorldConnection(sqlite3.Connection):
    """A read-only connection to a built world whose statements may name its lazy tables (see the module)."""

    lazy: LazyTables | None = None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        made: set[str] = set()
        while True:
            try:
                return super().execute(sql, parameters)
            except sqlite3.OperationalError as exc:
                missing = MISSING.search(str(exc))
                name = missing.group(1) if missing else None
                if name is None or name in made or self.lazy is None or not self.lazy.ensure(name):
                    raise
                made.add(name)


_LAZY: dict[Path, LazyTables] = {}
_LAZY_LOCK = threading.Lock()


def lazy_tables(world: Path) -> LazyTables:
    """The one LazyTables of a world file in this process."""
    with _LAZY_LOCK:
        found = _LAZY.get(world)
        if found is None:
            found = _LAZY[world] = LazyTables(world)
        return found


def open_world(path: Path) -> WorldConnection:
    """Read-only connection shared by a sandbox; the world never changes once built, and its lazy tables are made
    at their first query (see the module)."""
    lazy = lazy_tables(path)
    lazy.prepare()
    db = sqlite3.connect(
        f"{path.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False, factory=WorldConnection
    )
    db.lazy = lazy
    for k, side in enumerate(lazy.sides):
        db.execute(f"ATTACH ? AS lazy{k}", (f"{side.as_uri()}?mode=ro",))
    db.execute("PRAGMA query_only=ON")
    db.execute("PRAGMA cache_size=-65536")
    return db


def _world_reader(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)
