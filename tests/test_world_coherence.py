"""One fact, one value: wherever a tool shows the key of a shared entity (world.yaml `entities`: corp_code, MONA_CD,
BILL_ID, SD_SCHUL_CODE, ...) beside a fact the entity's own table holds (a company's name, a member's party, a
bill's name), the fact is the entity's, on every row of every tool. Read from the world as the tools serve it (each
operation's source table or view) over all rows; platforms, tools and entities come from the specs. Text is
compared as the grader reads it (corporate-form markers, spacing and blanks aside: DART writes '디도(주)' where
its code list says '디도', and ' ' for no stock code)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from kopa_gen.language.normalize import normalize_text
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld

STEPS = 15_000_000
"""SQLite VM steps one walk may take: a view over a hundred million generated rows (a timetable) is not walked and
is named instead; every synthesised and declared table is far below it."""


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}


def _same(a: object, b: object) -> bool:
    if a == b:
        return True
    ta, tb = ("" if v is None else str(v).strip() for v in (a, b))
    return ta == tb or normalize_text(ta) == normalize_text(tb)


def _shown(project: Project, db: sqlite3.Connection) -> Iterator[tuple[str, str, str, str, str, list[str]]]:
    """(tool, source table, key, entity table, entity column, facts) for every tool showing an identity key."""
    entities = {k: g.ref.split(".", 1) for k, g in project.world.entities.items() if g.ref}
    meanings = dict(project.meanings)
    for key, (entity, column) in sorted(entities.items()):
        rows, distinct = db.execute(
            f'SELECT count(*), count(DISTINCT "{column}") FROM "{entity}" WHERE trim(coalesce("{column}", \'\')) != \'\''
        ).fetchone()
        if rows != distinct:  # a key shared by several rows (an education office's code) is not an identity
            continue
        for platform in project.platforms:
            for op in platform.operations:
                if op.kopa.source is None:
                    continue
                table = op.kopa.source.table
                have = _columns(db, table) & set(op.row_fields)
                meaning = meanings.get(platform.id)
                facts = (
                    sorted(  # a row's own bookkeeping (meaning.yaml `role: meta`: when it was loaded) aside
                        f
                        for f in (_columns(db, entity) & have) - {key}
                        if meaning is None or (m := meaning.field(op.tool, f)) is None or m.role != "meta"
                    )
                )
                if key in have and facts:
                    yield op.tool, table, key, entity, column, facts


def test_every_tool_agrees_with_the_entity_on_its_facts(project: Project, world: BuiltWorld) -> None:
    db = sqlite3.connect(f"file:{world.path}?mode=ro", uri=True)
    budget = {"steps": 0}

    def tick() -> int:
        budget["steps"] += 1000
        return 1 if budget["steps"] > STEPS else 0

    shown = list(_shown(project, db))
    db.set_progress_handler(tick, 1000)
    walked, too_large, problems = 0, [], []
    for tool, table, key, entity, column, facts in shown:
        budget["steps"] = 0
        picked = ", ".join(f't."{f}", e."{f}"' for f in facts)
        try:
            rows = db.execute(
                f'SELECT t."{key}", {picked} FROM "{table}" t JOIN "{entity}" e ON e."{column}" = t."{key}" '
                f"WHERE trim(coalesce(t.\"{key}\", '')) != ''"
            ).fetchall()
        except sqlite3.OperationalError as exc:
            assert "interrupted" in str(exc), exc
            too_large.append(f"{tool} ({table})")
            continue
        walked += 1
        for row in rows:
            for i, fact in enumerate(facts):
                if not _same(row[1 + 2 * i], row[2 + 2 * i]):
                    problems.append(
                        f"{tool}: {key}={row[0]} shows {fact}={row[1 + 2 * i]!r}, {entity} has {row[2 + 2 * i]!r}"
                    )
                    break
            if len(problems) > 20:
                break
    db.set_progress_handler(None, 0)
    print(f"walked {walked} tool/key pairs; too large to walk: {', '.join(too_large) or 'none'}")
    assert walked > 0
    assert problems == []
    # only views may be too large to walk (what they show is computed from the entity's table by SQL)
    kinds = dict(db.execute("SELECT name, type FROM sqlite_master").fetchall())
    assert [t for t in too_large if kinds.get(t.split(" (")[1][:-1]) != "view"] == []


def test_an_identity_key_names_one_entity(project: Project, world: BuiltWorld) -> None:
    """A key that is all but unique (more than 99% of its values once) is an identity whose repeats are
    collisions of the generator: two companies with one 사업자등록번호. A key shared on purpose (an education office's
    code, an election date) is far from unique."""
    db = sqlite3.connect(f"file:{world.path}?mode=ro", uri=True)
    collisions = []
    for key, gen in sorted(project.world.entities.items()):
        if gen.ref is None:
            continue
        entity, column = gen.ref.split(".", 1)
        rows, distinct = db.execute(
            f'SELECT count(*), count(DISTINCT "{column}") FROM "{entity}" WHERE trim(coalesce("{column}", \'\')) != \'\''
        ).fetchone()
        if rows and 0.99 < distinct / rows < 1:
            collisions.append(f"{key} ({entity}.{column}): {rows - distinct} of {rows} values repeat")
    assert collisions == []
