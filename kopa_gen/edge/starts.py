"""Where EDGE's chains start: an entity of the world by the name a person uses (a company, a school, a 구, a
member, a law, a stop). A lookup tool qualifies when one of its parameters searches a column its rows carry as
their name (meaning.yaml role `name`), so that the row a question means is the one whose name it says. The
names are read from the world table the parameter filters (the sandbox's own data, in a seeded order); the
platforms' documented examples are left out, so that a policy which skips the lookup and sends the example code
cannot pass.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from kopa_gen.edge.builder import StartSpec
from kopa_gen.edge.signatures import ToolSig
from kopa_gen.project import Project
from kopa_gen.world.build import ensure_world

NAME_ROLES = frozenset({"name"})
MAX_NAME = 40  # characters: a longer "name" is a title or a sentence, not how people name a thing
SAMPLE = 5000  # value sets read per lookup (the world's first ones, then shuffled by seed)
SCAN = 50_000  # rows of a lookup's table read to find them


def start_specs(
    project: Project, sigs: Iterable[ToolSig], roots: Iterable[str], seed: int
) -> list[StartSpec]:
    """Every (lookup tool, name parameter, name field) among `roots` (tools with kept out-edges), each with the
    argument sets of the world in a seeded order: the name and the other required arguments the same table row
    holds (a route number with its city), so that the lookup finds what it names."""
    by_name = {s.name: s for s in sigs}
    world = ensure_world(project.world)
    db = sqlite3.connect(f"file:{world.path}?mode=ro", uri=True)
    try:
        out: list[StartSpec] = []
        for tool in sorted(set(roots)):
            sig = by_name.get(tool)
            if sig is None:
                continue
            op = project.platform_of(tool).operation(tool)
            source = op.kopa.source
            if source is None:
                continue
            examples = {str(v) for vs in project.platform(sig.platform).kopa.examples.values() for v in vs}
            columns = {f.param: f.column for f in source.filters}
            for param in sig.bindable:
                if param.kind is None or param.meaning is None or param.meaning.say is None:
                    continue
                if param.name not in columns:
                    continue
                # the row's name is the column the parameter searches (a 시군구 name finds the 시군구's own row)
                fields = [
                    f
                    for f in sig.outputs
                    if f.name == columns[param.name]
                    and f.meaning is not None
                    and f.meaning.role in NAME_ROLES
                ]
                if not fields:
                    continue
                others = [p.name for p in sig.bindable if p.required and p.name != param.name]
                if any(o not in columns for o in others):
                    continue  # a required argument the table cannot give with the name
                if any(_unsayable(sig, o) for o in others):
                    continue  # a required code that goes with the name but no question can say (a school code)
                names = [param.name, *others]
                rows = _rows(db, source.table, [columns[n] for n in names], examples)
                if not rows:
                    continue
                random.Random(f"{seed}:{tool}:{param.name}").shuffle(rows)
                values = tuple(dict(zip(names, r, strict=True)) for r in rows)
                out.append(StartSpec(tool, param.name, fields[0].name, param.kind, values))
        return out
    finally:
        db.close()


def _unsayable(sig: ToolSig, name: str) -> bool:
    p = sig.param(name)
    return p is None or p.meaning is None or (p.meaning.say is None and not p.meaning.labels)


def _rows(db: sqlite3.Connection, table: str, columns: list[str], skip: set[str]) -> list[tuple[str, ...]]:
    """Value sets of `columns` (the name first) that name one row only, at most SAMPLE of them, read from the
    table's first SCAN rows (a scan of a huge view stops early): a name two rows share finds no one entity."""
    cols = ", ".join(f'"{c}"' for c in columns)
    name = columns[0]
    try:
        found = db.execute(
            f'SELECT {cols} FROM (SELECT {cols} FROM "{table}" WHERE "{name}" IS NOT NULL '
            f"AND TRIM(\"{name}\") != '' LIMIT {SCAN}) GROUP BY {cols} HAVING COUNT(*) = 1 LIMIT {SAMPLE}"
        ).fetchall()
    except sqlite3.Error:
        return []
    out = sorted({tuple(str(v).strip() for v in row) for row in found})
    return [
        r for r in out if r[0] not in skip and len(r[0]) <= MAX_NAME and "'" not in r[0] and "\n" not in r[0]
    ]


def by_domain(specs: Sequence[StartSpec], sigs: Mapping[str, ToolSig]) -> dict[str, list[StartSpec]]:
    out: dict[str, list[StartSpec]] = {}
    for spec in specs:
        out.setdefault(sigs[spec.tool].domain, []).append(spec)
    return dict(sorted(out.items()))
