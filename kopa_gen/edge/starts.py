"""Where EDGE's chains start: an entity of the world by the name a person uses (a company, a school, a 구, a
member, a law, a stop). A lookup tool qualifies when one of its parameters searches a column its rows carry as
their name (meaning.yaml role `name`), so that the row a question means is the one whose name it says. The
names are read from the world table the parameter filters (the sandbox's own data, in a seeded order); the
platforms' documented examples are left out, so that a policy which skips the lookup and sends the example code
cannot pass.

Entities the world says something about come first: a start is ranked by how many of its tool's kept edges
would find rows for it at the first hop (the consumer's table holds the handed value in the column the consumer
filters), read from the world database without executing anything. Most of the world's 137,548 company rows have
no filing, and a chain from one of them dies at its first hop; ranked, the companies with filings are tried
first and those no edge can leave from are not tried at all.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from kopa_gen.edge.builder import GEdge, StartSpec
from kopa_gen.edge.found import Found
from kopa_gen.edge.signatures import ToolSig
from kopa_gen.language.kopa import Source
from kopa_gen.project import Project
from kopa_gen.world.build import ensure_world
from kopa_gen.world.lazy import open_world

NAME_ROLES = frozenset({"name"})
MAX_NAME = 40  # characters: a longer "name" is a title or a sentence, not how people name a thing
SAMPLE = 5000  # value sets kept per lookup, the richest (see `rank`)
MAX_SET = 300  # rows of a set a search by one word starts from, at most (a training context reads it whole:
# SynthConfig.max_rows)
# rows of a lookup's table read to find them: every company of the world (137,548 outline rows); at 50,000 the
# sample held none of the 2,890 companies with financial statements, and every finance chain that wanted a
# statement died at its first hop
SCAN = 200_000


def start_specs(
    project: Project, sigs: Iterable[ToolSig], out: Mapping[str, Sequence[GEdge]], seed: int
) -> list[StartSpec]:
    """Every (lookup tool, name parameter, name field) among the tools with kept out-edges (`out`), each with the
    argument sets of the world: the name and the other required arguments the same table row holds (a route
    number with its city), so that the lookup finds what it names; the richest first (see the module), in a
    seeded order among equals."""
    roots = [t for t, edges in out.items() if edges]
    by_name = {s.name: s for s in sigs}
    world = ensure_world(project.world)
    db = open_world(world.path)
    try:
        specs: list[StartSpec] = []
        found = Found(project, db)
        for tool in sorted(set(roots)):
            sig = by_name.get(tool)
            if sig is None:
                continue
            op = project.platform_of(tool).operation(tool)
            source = op.kopa.source
            if source is None:
                continue
            examples = {
                str(v) for vs in project.platform(sig.platform).examples(sig.name).values() for v in vs
            }
            columns = {f.param: f.column for f in source.filters}
            for param in sig.bindable:
                if param.meaning is not None and param.meaning.contains is not None:
                    word_spec = _word_spec(db, sig, param.name, param.meaning.contains, source, seed)
                    if word_spec is not None:
                        specs.append(word_spec)
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
                handed = sorted({b.field for e in out[tool] for b in e.bindings} - set(names))
                table_columns = {r[1] for r in db.execute(f'PRAGMA table_info("{source.table}")')}
                handed = [f for f in handed if f in table_columns]
                rows = _rows(db, source.table, [columns[n] for n in names], examples, handed)
                if not rows:
                    continue
                random.Random(f"{seed}:{tool}:{param.name}").shuffle(rows)
                ranked = rank(found, out[tool], [n for n in names], handed, rows)
                values = tuple(dict(zip(names, r[: len(names)], strict=True)) for r in ranked[:SAMPLE])
                if values:
                    specs.append(StartSpec(tool, param.name, fields[0].name, param.kind, values))
        return specs
    finally:
        db.close()


def rank(
    found: Found,
    edges: Sequence[GEdge],
    names: Sequence[str],
    handed: Sequence[str],
    rows: list[tuple[str, ...]],
) -> list[tuple[str, ...]]:
    """`rows` (the name, the other arguments, then the `handed` fields) richest first: by the number of
    `edges` whose every equality binding the world can answer at the first hop. A row no checkable edge can leave from
    is dropped when every edge is checkable; kept last otherwise. The sort is stable: the seeded order holds
    among equals."""
    at = {f: len(names) + i for i, f in enumerate(handed)}
    checks: list[list[tuple[int, frozenset[str]]]] = []
    unknown = False
    for e in edges:
        check: list[tuple[int, frozenset[str]]] = []
        for b in e.bindings:  # the bindings that select by equality (a date range's bounds do not)
            i = at.get(b.field)
            values = None if i is None or b.pipe else found.column(e.consumer, b.param, (r[i] for r in rows))
            if i is not None and values is not None:
                check.append((i, values))
        if check:
            checks.append(check)
        else:
            unknown = True
    scored = [(sum(all(r[i] in vs for i, vs in c) for c in checks), r) for r in rows]
    scored.sort(key=lambda x: -x[0])
    return [r for n, r in scored if n > 0 or unknown]


def _word_spec(
    db: sqlite3.Connection, sig: ToolSig, param: str, contains: str, source: Source, seed: int
) -> StartSpec | None:
    """The words a search by part of a name starts from (meaning.yaml `contains`): of each name the parameter
    searches, the first word that is no word of another name its row carries (the subject of '서울특별시 종로구
    주차장 설치 및 관리 조례' is '주차장', the government's words left out). A word is kept alone, and with each
    labelled value of another parameter the tool filters by (a 시도: '경기도와 그 안 시군구의'), where 2 to
    MAX_SET names of the table match: a bigger set cannot be read whole. A tool whose other arguments are required
    has none."""
    filters = {f.param: f for f in source.filters}
    match = filters.get(param)
    if match is None or match.match != "contains":
        raise ValueError(
            f"specs/platforms/{sig.platform}/meaning.yaml: {sig.name}.{param} has `contains`, but the operation's "
            f"source filter for {param} is not `match: contains`; remove `contains` or make the filter match "
            "part of the name"
        )
    if any(p.required and p.name != param for p in sig.bindable):
        return None
    scopes = [
        (p.name, filters[p.name])
        for p in sig.bindable
        if p.name != param
        and p.name in filters
        and filters[p.name].match in ("eq", "prefix")
        and p.meaning is not None
        and p.meaning.labels
    ]
    table_columns = {r[1] for r in db.execute(f'PRAGMA table_info("{source.table}")')}
    others = [
        f.name
        for f in sig.outputs
        if f.name != match.column
        and f.name in table_columns
        and f.meaning is not None
        and f.meaning.role in NAME_ROLES
    ]
    scoped = [f.column for _, f in scopes]
    cols = ", ".join(f'"{c}"' for c in [match.column, *scoped, *others])
    rows = db.execute(
        f'SELECT {cols} FROM "{source.table}" WHERE "{match.column}" IS NOT NULL LIMIT {SCAN}'
    ).fetchall()
    heads: set[str] = set()
    for row in rows:
        taken = {w for v in row[1 + len(scoped) :] if v is not None for w in str(v).split()}
        head = next((w for w in str(row[0]).split() if w not in taken), None)
        if head is not None and len(head) >= 2 and "'" not in head:
            heads.add(head)
    sets: list[dict[str, str]] = []
    for word in sorted(heads):
        hits = [r for r in rows if word in str(r[0])]
        if 2 <= len(hits) <= MAX_SET:
            sets.append({param: word})
        for i, (name, f) in enumerate(scopes):
            meaning = sig.param(name)
            assert meaning is not None and meaning.meaning is not None
            for value in meaning.meaning.labels:
                n = sum(
                    (str(r[1 + i]) == value) if f.match == "eq" else str(r[1 + i]).startswith(value)
                    for r in hits
                )
                if 2 <= n <= MAX_SET:
                    sets.append({param: word, name: value})
    random.Random(f"{seed}:{sig.name}:{param}:words").shuffle(sets)
    if not sets:
        return None
    searched = sig.param(param)
    kind = searched.kind if searched is not None else None
    return StartSpec(sig.name, param, match.column, kind or "", tuple(sets[:SAMPLE]), contains)


def _unsayable(sig: ToolSig, name: str) -> bool:
    p = sig.param(name)
    return p is None or p.meaning is None or (p.meaning.say is None and not p.meaning.labels)


def _rows(
    db: sqlite3.Connection, table: str, columns: list[str], skip: set[str], handed: Sequence[str] = ()
) -> list[tuple[str, ...]]:
    """Value sets of `columns` (the name first) that name one row only, read from the table's first SCAN rows
    (a scan of a huge view stops early): a name two rows share finds no one entity. Each set carries the row's
    `handed` fields after them (what its edges would hand on)."""
    cols = ", ".join(f'"{c}"' for c in columns)
    extra = "".join(f', MAX("{c}")' for c in handed)
    inner = ", ".join(f'"{c}"' for c in dict.fromkeys([*columns, *handed]))
    name = columns[0]
    try:
        found = db.execute(
            f'SELECT {cols}{extra} FROM (SELECT {inner} FROM "{table}" WHERE "{name}" IS NOT NULL '
            f"AND TRIM(\"{name}\") != '' LIMIT {SCAN}) GROUP BY {cols} HAVING COUNT(*) = 1"
        ).fetchall()
    except sqlite3.Error:
        return []
    out = sorted({tuple("" if v is None else str(v).strip() for v in row) for row in found})
    return [
        r for r in out if r[0] not in skip and len(r[0]) <= MAX_NAME and "'" not in r[0] and "\n" not in r[0]
    ]


def by_domain(specs: Sequence[StartSpec], sigs: Mapping[str, ToolSig]) -> dict[str, list[StartSpec]]:
    out: dict[str, list[StartSpec]] = {}
    for spec in specs:
        out.setdefault(sigs[spec.tool].domain, []).append(spec)
    return dict(sorted(out.items()))
