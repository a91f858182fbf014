"""Build the world database once per (spec, generator code, data, seed), atomically, into the cache."""

from __future__ import annotations

import hashlib
import itertools
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from kopa_gen.cache import cache_dir
from kopa_gen.spec.world import Table, WorldSpec
from kopa_gen.world.registry import DATA, GenContext, Generator, generators

GENERATORS = Path(__file__).parent / "generators"


def world_hash(spec: WorldSpec, seed: int) -> str:
    """Everything that can change a world byte: the spec, the generator code, the data files, the seed."""
    h = hashlib.sha256()
    h.update(
        spec.model_dump_json(include={"today", "tables", "views"}).encode()
    )  # episode tables are not stored
    h.update(str(seed).encode())
    for path in sorted(
        [*GENERATORS.glob("*.py"), *DATA.glob("*.tsv"), Path(__file__).with_name("registry.py")]
    ):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class BuiltWorld:
    path: Path
    seed: int
    digest: str
    seconds: float
    fresh: bool


def ensure_world(spec: WorldSpec, seed: int | None = None) -> BuiltWorld:
    """Return the cached world for this spec and seed, building it first if needed."""
    seed = spec.seed if seed is None else seed
    digest = world_hash(spec, seed)
    path = cache_dir() / f"world-{seed}-{digest}.sqlite"
    if path.exists():
        return BuiltWorld(path, seed, digest, 0.0, False)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    start = time.perf_counter()
    try:
        build_into(spec, seed, tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)  # no partial world is left in the cache
        raise
    os.replace(tmp, path)
    return BuiltWorld(path, seed, digest, time.perf_counter() - start, True)


def create_schema(db: sqlite3.Connection, spec: WorldSpec) -> None:
    """Tables (empty) and views; enough to know every column a platform can bind to."""
    for table in spec.tables:
        cols = ", ".join(f'"{c.name}" {c.type.upper()}' for c in table.columns)
        db.execute(f'CREATE TABLE "{table.name}" ({cols})')
    for view in spec.views:
        db.execute(f'CREATE VIEW "{view.name}" AS {view.sql}')


def columns_of(spec: WorldSpec) -> dict[str, list[str]]:
    """Columns of every table, view and episode table, from an empty in-memory schema (fast; no rows)."""
    db = sqlite3.connect(":memory:")
    create_schema(db, spec)
    out = {n: [r[1] for r in db.execute(f'PRAGMA table_info("{n}")')] for n in [t.name for t in spec.tables]}
    out.update({v.name: [r[1] for r in db.execute(f'PRAGMA table_info("{v.name}")')] for v in spec.views})
    out.update({e.name: [c.name for c in e.columns] for e in spec.episode})
    return out


def build_into(spec: WorldSpec, seed: int, path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    registry = generators()
    ctx = GenContext(seed=seed, today=spec.today, db=db)
    for table in spec.tables:
        cols = ", ".join(f'"{c.name}" {c.type.upper()}' for c in table.columns)
        db.execute(f'CREATE TABLE "{table.name}" ({cols})')
        _fill(db, ctx, table, registry[table.generator])
        for i, index in enumerate(table.indexes):
            cols = ", ".join(_index_column(c) for c in index)
            db.execute(f'CREATE INDEX "ix_{table.name}_{i}" ON "{table.name}" ({cols})')
        db.commit()
    for view in spec.views:
        db.execute(f'CREATE VIEW "{view.name}" AS {view.sql}')
    db.execute("ANALYZE")
    db.commit()
    db.close()


def _index_column(spec: str) -> str:
    name, _, direction = spec.partition(" ")
    if direction.strip().upper() not in ("", "ASC", "DESC"):
        raise ValueError(f"index column {spec!r}: only ' ASC' or ' DESC' may follow the name")
    return f'"{name}" {direction.strip().upper()}'.strip()


def _fill(db: sqlite3.Connection, ctx: GenContext, table: Table, gen: Generator) -> None:
    marks = ", ".join("?" for _ in table.columns)
    sql = f'INSERT INTO "{table.name}" VALUES ({marks})'
    rows = iter(gen(ctx, table))
    while batch := list(itertools.islice(rows, 20000)):
        db.executemany(sql, batch)


def open_world(path: Path) -> sqlite3.Connection:
    """Read-only connection shared by a sandbox; the world never changes once built."""
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    db.execute("PRAGMA query_only=ON")
    db.execute("PRAGMA cache_size=-65536")
    return db
