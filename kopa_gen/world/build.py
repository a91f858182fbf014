"""Build the world database once per (spec, generator code, data, seed), atomically, into the cache.

Incrementally: a world of the same seed already in the cache is the base, and only what changed is generated
again — a table whose spec entry changed, every table that read a regenerated table while it was generated (reads
are recorded through SQLite's authorizer in the `_kopa_tables` manifest), and every table that shares in-memory
state with one of those (`@generator(..., shares=...)`). A change of the generator code or data files changes
every table's hash, so it rebuilds everything."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import os
import re
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kopa_gen.cache import cache_dir
from kopa_gen.language.world import WORLD_TABLE, WORLD_TABLE_SQL, Table, WorldSpec
from kopa_gen.processes import alive
from kopa_gen.world.fill import create_indexes, create_table, fill_table
from kopa_gen.world.lazy import write_lazy_specs
from kopa_gen.world.parallel import SCRATCH_PREFIX, Builders, world_workers
from kopa_gen.world.registry import DATA, SHARES, GenContext, generators

MANIFEST = "_kopa_tables"
KEEP = 2  # older worlds of a seed kept in the cache (another checkout may be using one)

Progress = Callable[[str], None]


def code_hash() -> str:
    """The code and data files every table is made with: every module of kopa_gen/world (generators, declared
    columns, shared helpers, the build itself) and the bundled data, so no list of files can fall behind."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for path in sorted([*here.rglob("*.py"), *DATA.glob("*.tsv")]):
        h.update(path.relative_to(here).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def world_hash(spec: WorldSpec, seed: int) -> str:
    """Everything that can change a world byte: the spec, the generator code, the data files, the seed.
    Remembered per spec object and seed, as every episode asks again (22 ms each)."""
    known = _HASHES.get((id(spec), seed))
    if known is not None and known[0] is spec:
        return known[1]
    h = hashlib.sha256()
    h.update(
        spec.model_dump_json(include={"today", "tables", "views"}).encode()
    )  # episode tables are not stored
    h.update(str(seed).encode())
    h.update(code_hash().encode())
    digest = h.hexdigest()[:16]
    _HASHES[(id(spec), seed)] = (spec, digest)  # the spec is kept, so its id cannot be reused
    return digest


_HASHES: dict[tuple[int, int], tuple[WorldSpec, str]] = {}


def table_hash(spec: WorldSpec, table: Table, seed: int, code: str) -> str:
    """What one table's rows depend on by themselves (the tables it reads are tracked apart)."""
    h = hashlib.sha256(table.model_dump_json().encode())
    h.update(f"{seed}|{spec.today.isoformat()}|{code}".encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class BuiltWorld:
    path: Path
    seed: int
    digest: str
    seconds: float
    fresh: bool


def ensure_world(spec: WorldSpec, seed: int | None = None, progress: Progress | None = None) -> BuiltWorld:
    """Return the cached world for this spec and seed, building it first if needed (from the newest world of the
    same seed in the cache, regenerating only what changed). `progress` hears a line per table generated."""
    seed = spec.seed if seed is None else seed
    digest = world_hash(spec, seed)
    path = cache_dir() / f"world-{seed}-{digest}.sqlite"
    if (
        path.exists() and path.stat().st_size > 0
    ):  # an empty file: a reader re-created a world removed meanwhile
        return BuiltWorld(path, seed, digest, 0.0, False)
    path.parent.mkdir(parents=True, exist_ok=True)
    # one build of a seed's world at a time: a second process (a test worker, a second command) waits for the
    # first and takes its world instead of building the same one beside it on the same cores
    with open(path.parent / f"world-{seed}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists() and path.stat().st_size > 0:
            return BuiltWorld(path, seed, digest, 0.0, False)
        return _build_world(spec, seed, digest, path, progress)


def _build_world(
    spec: WorldSpec, seed: int, digest: str, path: Path, progress: Progress | None
) -> BuiltWorld:
    sweep(path.parent)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    start = time.perf_counter()
    others = sorted(
        (p for p in path.parent.glob(f"world-{seed}-*.sqlite") if p != path),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    try:
        if others:
            shutil.copyfile(others[0], tmp)
        build_into(spec, seed, tmp, progress or (lambda line: None), world_workers())
    except BaseException:
        tmp.unlink(missing_ok=True)  # no partial world is left in the cache
        raise
    os.replace(tmp, path)
    for old in others[KEEP:]:
        old.unlink(missing_ok=True)
    return BuiltWorld(path, seed, digest, time.perf_counter() - start, True)


def sweep(cache: Path) -> list[Path]:
    """Remove what builds that died left in the cache: a partial world (`world-*.tmp<pid>`, hundreds of MB, with
    its SQLite journal files) or a workers' scratch folder (`kopa-world-<pid>-*`) whose process is gone. A live
    build's are kept. Also the folder of files kept for a world the cache no longer holds (`files/world-*`: its
    bulk downloads and lazy tables, tens of MB). Returns what was removed."""
    removed: list[Path] = []
    for partial in cache.glob("world-*.tmp*"):
        found = _PARTIAL.search(partial.name)
        if found is not None and not alive(int(found.group(1))):
            partial.unlink(missing_ok=True)
            removed.append(partial)
    for scratch in cache.glob(f"{SCRATCH_PREFIX}*-*"):
        pid = scratch.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if scratch.is_dir() and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(scratch, ignore_errors=True)
            removed.append(scratch)
    for kept in (cache / "files").glob("world-*"):
        if kept.is_dir() and not (cache / f"{kept.name}.sqlite").exists():
            shutil.rmtree(kept, ignore_errors=True)
            removed.append(kept)
    return removed


_PARTIAL = re.compile(r"\.tmp(\d+)(-wal|-shm|-journal)?$")


def create_world_table(db: sqlite3.Connection, seed: int, today: dt.date) -> None:
    """`kopa_world`: one row (seed, today as YYYY-MM-DD, today as YYYYMMDD) that views and `sql` columns read."""
    db.execute(f'DROP TABLE IF EXISTS "{WORLD_TABLE}"')
    db.execute(WORLD_TABLE_SQL)
    db.execute(
        f'INSERT INTO "{WORLD_TABLE}" VALUES (?, ?, ?)', (seed, today.isoformat(), today.strftime("%Y%m%d"))
    )


def create_schema(db: sqlite3.Connection, spec: WorldSpec) -> None:
    """Tables (empty) and views; enough to know every column a platform can bind to."""
    create_world_table(db, spec.seed, spec.today)
    for table in spec.tables:
        create_table(db, table)
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


def _manifest(db: sqlite3.Connection) -> dict[str, tuple[str, set[str]]]:
    """name -> (table hash, tables it read) of a base world; empty for a new file or an older layout."""
    columns = [r[1] for r in db.execute(f'PRAGMA table_info("{MANIFEST}")')]
    if columns and "rows" not in columns:  # an older layout: every table is generated again
        db.execute(f'DROP TABLE "{MANIFEST}"')
    db.execute(
        f'CREATE TABLE IF NOT EXISTS "{MANIFEST}" (name TEXT PRIMARY KEY, hash TEXT, reads TEXT, rows TEXT)'
    )
    rows = db.execute(f'SELECT name, hash, reads FROM "{MANIFEST}"').fetchall()
    return {name: (h, set(filter(None, reads.split(",")))) for name, h, reads in rows}


def build_into(
    spec: WorldSpec, seed: int, path: Path, progress: Progress = lambda line: None, workers: int = 1
) -> None:
    """Bring the database at `path` (empty, or a copy of an earlier world) to `spec`: drop the tables the spec
    no longer has, generate again the stale ones (`stale_tables`) — on `workers` processes when more than one —
    and recreate the views."""
    lazy = [t for t in spec.tables if t.lazy]  # made at their first query (kopa_gen/world/lazy.py)
    spec = spec.model_copy(update={"tables": [t for t in spec.tables if not t.lazy]})
    with contextlib.ExitStack() as stack:
        builders = stack.enter_context(Builders(spec, seed, path, workers)) if workers > 1 else None
        _build(spec, seed, path, progress, builders, lazy)


def _build(
    spec: WorldSpec, seed: int, path: Path, progress: Progress, builders: Builders | None, lazy: list[Table]
) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    # query tables sort and materialise up to 150,000 wide rows: in memory, not in temp files (8 s CPU)
    db.execute("PRAGMA temp_store=MEMORY")
    registry = generators()
    ctx = GenContext(seed=seed, today=spec.today, db=db)
    old = _manifest(db)
    existing = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for (view,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall():
        db.execute(f'DROP VIEW "{view}"')
    create_world_table(db, seed, spec.today)
    removed = set(old) - {t.name for t in spec.tables}
    for gone in sorted(removed):
        db.execute(f'DROP TABLE IF EXISTS "{gone}"')
        db.execute(f'DELETE FROM "{MANIFEST}" WHERE name = ?', (gone,))
    code = code_hash()
    hashes = {t.name: table_hash(spec, t, seed, code) for t in spec.tables}
    stale = stale_tables(spec, old, hashes, existing, removed)
    place = {t.name: n for n, t in enumerate(spec.tables, 1)}

    def finish(table: Table, reads: set[str], seconds: float) -> None:
        create_indexes(db, table)
        db.execute(
            f'INSERT OR REPLACE INTO "{MANIFEST}" VALUES (?, ?, ?, ?)',
            (table.name, hashes[table.name], ",".join(sorted(reads)), rows_digest(db, table.name)),
        )
        db.commit()
        rows = db.execute(f'SELECT count(*) FROM "{table.name}"').fetchone()[0]
        progress(
            f"  world {place[table.name]}/{len(spec.tables)} {table.name}: {rows:,} rows ({seconds:.1f}s)"
        )

    def fill_here(table: Table) -> None:
        start = time.perf_counter()
        reads = fill_table(db, ctx, table, registry)
        finish(table, reads, time.perf_counter() - start)

    if builders is not None and len(stale) > 1:
        for table in spec.tables:  # empty until its job returns: a job reading it early runs again after it
            if table.name in stale:
                create_table(db, table)
        db.commit()
        db.execute("PRAGMA journal_mode=WAL")  # the workers read while finished jobs' rows are copied in

        def merge(table: Table, part: str, reads: set[str], seconds: float) -> None:
            start = time.perf_counter()
            db.execute("ATTACH ? AS part", (part,))
            cols = ", ".join(f'"{c.name}"' for c in table.columns)
            db.execute(
                f'INSERT INTO main."{table.name}" (rowid, {cols}) SELECT rowid, {cols} FROM part."{table.name}"'
            )
            db.commit()
            db.execute("DETACH part")
            finish(table, reads, seconds + time.perf_counter() - start)

        again, left = builders.build(stale, merge)
        for name in left:  # their jobs waited for each other: in spec order, here
            fill_here(spec.table(name))
        db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file again
        db.execute("PRAGMA journal_mode=OFF")
        progress(
            f"  world: {len(stale) - len(left)} tables on {builders.workers} processes ({again})"
            + (f"; {', '.join(left)} in this one (their jobs waited for each other)" if left else "")
        )
    else:
        for table in spec.tables:
            if table.name in stale:
                fill_here(table)
    for view in spec.views:
        db.execute(f'CREATE VIEW "{view.name}" AS {view.sql}')
    write_lazy_specs(db, lazy)
    db.commit()
    db.close()
    if lazy:
        progress(f"  world: {len(lazy)} catalog tables left to their first query")
    if not stale:
        progress("  world: every table reused")


def rows_digest(db: sqlite3.Connection, table: str) -> str:
    """sha256 over the `repr` of each row of `table` in rowid order (UTF-8): what two builds of a seed's world
    must agree on, wherever they run. Taken as each table is generated (38 s of a full build's 4 minutes)."""
    h = hashlib.sha256()
    for row in db.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
        h.update(repr(row).encode())
    return h.hexdigest()


def table_digests(path: Path) -> dict[str, str]:
    """Each table's `rows_digest` as the world's build recorded it (`_kopa_tables.rows`)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(db.execute(f'SELECT name, rows FROM "{MANIFEST}" ORDER BY name').fetchall())
    finally:
        db.close()


def stale_tables(
    spec: WorldSpec,
    old: dict[str, tuple[str, set[str]]],
    hashes: dict[str, str],
    existing: set[str],
    removed: set[str],
) -> set[str]:
    """The tables to generate again, to a fixed point: new or changed ones, those that read a stale or removed
    table when they were last generated, and all the tables sharing in-memory state with a stale one."""
    stale = {
        t.name
        for t in spec.tables
        if t.name not in old or old[t.name][0] != hashes[t.name] or t.name not in existing
    }
    groups: dict[str, set[str]] = {}
    for t in spec.tables:
        if t.generator in SHARES:
            groups.setdefault(SHARES[t.generator], set()).add(t.name)
    while True:
        before = len(stale)
        for t in spec.tables:
            if t.name in old and old[t.name][1] & (stale | removed):
                stale.add(t.name)
        for members in groups.values():
            if members & stale:
                stale |= members
        if len(stale) == before:
            return stale
