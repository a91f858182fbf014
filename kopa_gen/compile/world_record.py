"""generated/world.json: the rows digest of each table of the project's world at its seed, as `kopa-gen build`
built it here, and of every LAZY_SAMPLE-th table left to its first query (made here to be recorded). A build of
the same world anywhere else (CI's, from an empty cache) must give the same rows: tests/test_world.py compares,
and `kopa-gen build --check` says when the record is for another world."""

from __future__ import annotations

import json
from pathlib import Path

from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld, rows_digest, table_digests, world_hash
from kopa_gen.world.lazy import lazy_tables, open_world

RECORD = Path("generated") / "world.json"
LAZY_SAMPLE = 40


def lazy_sample(world: Path) -> list[str]:
    """The lazy tables the record holds: every LAZY_SAMPLE-th by name, and the last."""
    names = sorted(lazy_tables(world).names())
    return sorted({*names[::LAZY_SAMPLE], *names[-1:]})


def lazy_digests(world: Path) -> dict[str, str]:
    """The rows digest of each table of `lazy_sample`, made first where no process has made it."""
    db = open_world(world)
    try:
        return {name: rows_digest(db, name) for name in lazy_sample(world)}
    finally:
        db.close()


def record_world(project: Project, world: BuiltWorld) -> bool:
    """Write the record of `world` (the project's seed only). Returns whether the file changed."""
    if world.seed != project.world.seed:
        return False
    doc = {
        "seed": world.seed,
        "world": world.digest,
        "tables": table_digests(world.path),
        "lazy": lazy_digests(world.path),
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    path = project.root / RECORD
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def recorded(project: Project, part: str = "tables") -> dict[str, str]:
    """The committed digests, table by table, of the built tables (`tables`) or of the lazy ones sampled (`lazy`);
    empty when there is no record."""
    path = project.root / RECORD
    if not path.exists():
        return {}
    tables: dict[str, str] = json.loads(path.read_text(encoding="utf-8")).get(part, {})
    return tables


def record_drift(project: Project) -> str | None:
    """Why the record does not describe the project's world as its specs and code make it now, or None."""
    path = project.root / RECORD
    if not path.exists():
        return f"{RECORD} is missing; run `kopa-gen build`"
    doc = json.loads(path.read_text(encoding="utf-8"))
    seed = project.world.seed
    if doc.get("seed") != seed or doc.get("world") != world_hash(project.world, seed):
        return (
            f"{RECORD} records another world (its spec, generator code or seed changed); run `kopa-gen build`"
        )
    return None
