"""The world spec: which tables the sandbox world has, how each is generated, and the views platforms read."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
import string
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from kopa_gen.language.diagnostics import Diagnostic, Diagnostics
from kopa_gen.language.kopa import StrictModel
from kopa_gen.language.source import Source, YamlError, load_yaml, validate_model

WORLD_TABLE = "kopa_world"
WORLD_TABLE_SQL = f'CREATE TABLE "{WORLD_TABLE}" (seed INTEGER, today TEXT, today_ymd TEXT)'
"""A one-row table every world has, for views and `sql` columns: seed, today (YYYY-MM-DD), today_ymd (YYYYMMDD)."""

GEN_KINDS = (
    "value",
    "seq",
    "code",
    "choice",
    "enum",
    "integer",
    "uniform",
    "normal",
    "lognormal",
    "date",
    "person",
    "address",
    "ref",
    "parent",
    "sql",
)


class ColumnGen(StrictModel):
    """How a declared table fills one column: exactly one kind, plus its modifiers. Every column draws from its
    own seeded stream, so adding or changing a column never shifts another column's values."""

    value: str | int | float | None = Field(default=None, description="The same value in every row.")
    seq: int | None = Field(default=None, description="Integers counting up from this start (see step).")
    code: str | None = Field(
        default=None,
        description="A Python format string over n (the row's sequence number from `start`) and earlier "
        "columns, e.g. 'S{n:07d}' or '{SD_SCHUL_CODE}-{n:02d}'; `check` appends a check digit.",
    )
    choice: list[str | int | float] | dict[str, float] | None = Field(
        default=None, description="Values to draw from: a list (uniform, or `weights`) or value -> weight."
    )
    enum: str | None = Field(
        default=None,
        description="The enum of a platform spec's schema, as 'platform#/json/pointer' (e.g. "
        "'dart#/components/schemas/Company/properties/corp_cls'); drawn like `choice`.",
    )
    integer: list[int] | None = Field(
        default=None, min_length=2, max_length=2, description="[low, high], uniform, both included."
    )
    uniform: list[float] | None = Field(default=None, min_length=2, max_length=2, description="[low, high].")
    normal: list[float] | None = Field(default=None, min_length=2, max_length=2, description="[mean, sd].")
    lognormal: list[float] | None = Field(
        default=None, min_length=2, max_length=2, description="[median, sigma]: positive and right-skewed."
    )
    date: list[str] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="[first, last] as YYYY-MM-DD or 'today', 'today-30', 'today+7'; written in `format`.",
    )
    person: Literal["full", "surname", "given"] | None = Field(
        default=None,
        description="A Korean person's name drawn from the bundled surname and given-name lists.",
    )
    address: str | None = Field(
        default=None,
        description="A road address in the legal district whose 10-digit code is in this (earlier) column.",
    )
    ref: str | None = Field(
        default=None,
        description="'table.column' of an earlier table: a foreign key drawn from its rows (see where, weight).",
    )
    parent: str | None = Field(
        default=None, description="A column of the `for_each` parent row this row belongs to."
    )
    sql: str | None = Field(
        default=None,
        description="An SQL expression over this row's columns, computed after the rows are written; :seed "
        "and :today (YYYY-MM-DD) are bound, and scalar subqueries may read earlier tables.",
    )
    # modifiers
    step: int = Field(default=1, description="seq: the increment.")
    start: int = Field(default=1, description="code: the first n.")
    per_parent: bool = Field(default=False, description="seq, code: count again from the start per parent.")
    check: Literal["luhn", "mod10", "brn"] | None = Field(
        default=None,
        description="code: append a check digit (luhn; mod10: weights 1,2,1,2...; brn: 사업자등록번호 rule).",
    )
    weights: list[float] | None = Field(
        default=None, description="choice (a list), enum: one weight per value."
    )
    decimals: int | None = Field(
        default=None, description="uniform, normal, lognormal: decimals to keep (0 gives an integer)."
    )
    clamp: list[float] | None = Field(default=None, min_length=2, max_length=2, description="[low, high].")
    format: str = Field(default="%Y%m%d", description="date: strftime format.")
    where: str | None = Field(default=None, description="ref: an SQL condition on the referenced table.")
    by: str | None = Field(
        default=None,
        description="ref: take the value from the row another column of this row already points at: that "
        "column's name, itself a `ref` to the same table (NAAS_NM: {ref: assembly_members.HG_NM, by: NAAS_CD}, "
        "so a member's name goes with the member's code).",
    )
    weight: str | None = Field(default=None, description="ref: a numeric column of it to weight the draw by.")
    null: float = Field(default=0.0, ge=0, le=1, description="Fraction of rows left blank (NULL).")

    @model_validator(mode="after")
    def _one_kind(self) -> ColumnGen:
        kinds = [k for k in GEN_KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            said = ", ".join(kinds) if kinds else "none"
            raise ValueError(f"give exactly one generator kind of {', '.join(GEN_KINDS)} (given: {said})")
        if self.by is not None and self.ref is None:
            raise ValueError("`by` goes with `ref` (the table whose row the other column points at)")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in GEN_KINDS if getattr(self, k) is not None)


class Column(StrictModel):
    name: str = Field(pattern=r"^[^\W\d]\w*$", description="Column name (letters of any script, digits, _).")
    type: Literal["text", "integer", "real"] = Field(default="text", description="SQLite storage type.")
    description: str = Field(default="", description="What the column holds.")
    generated: str | None = Field(
        default=None,
        description="SQL expression over other columns (a generated column, e.g. length(content)).",
    )
    gen: ColumnGen | None = Field(
        default=None, description="How a declared table (no `generator`) fills this column."
    )


class ForEach(StrictModel):
    """Rows per row of another table: a foreign key with a cardinality (e.g. 0-3 stops per 동)."""

    table: str = Field(description="An earlier table or view.")
    where: str | None = Field(default=None, description="SQL condition selecting the parent rows.")
    count: int | list[int] = Field(
        default=1, description="Rows per parent: a number, or [low, high] drawn uniformly per parent."
    )
    order: str | None = Field(
        default=None, description="SQL ORDER BY of the parents (default: every column, in order)."
    )


class Table(StrictModel):
    """A base table, filled by a registered generator from the world seed."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(description="What the rows are, in one sentence.")
    generator: str | None = Field(
        default=None,
        description="Name of a registered Python generator (kopa_gen/world/generators/), for what cannot be "
        "declared; absent for a declared table (`rows` or `for_each`, and a `gen` on every column).",
    )
    rows: int | None = Field(default=None, ge=0, description="Declared table: how many rows.")
    for_each: ForEach | None = Field(
        default=None, description="Declared table: rows per row of another table."
    )
    query: str | None = Field(
        default=None,
        description="Declared table: the rows of this SELECT over earlier base tables, stored (a view that is "
        "materialised once, so it can be indexed); its columns need no `gen`.",
    )
    params: dict[str, Any] = Field(default_factory=dict, description="Generator parameters (sizes, ranges).")
    columns: list[Column] = Field(min_length=1)
    indexes: list[list[str]] = Field(
        default_factory=list,
        description="Column lists to index; a column may end in ' DESC' (e.g. ['basDt DESC', 'srtnCd']) to match a "
        "mixed-direction ORDER BY.",
    )
    anchors: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Real, well-known facts the generator must respect: whole rows, or per-entity figures such as "
        "a company's scale (what each generator does with them is in its docstring).",
    )
    lazy: bool = Field(
        default=False,
        description="Made at its first query, not with the world (kopa_gen/world/lazy.py): what the default "
        "world synthesises for a catalog's operations. A declared table only; no table built with the world may "
        "read it (views may).",
    )

    @model_validator(mode="after")
    def _lazy_is_declared(self) -> Table:
        if self.lazy and self.generator is not None:
            # a Python generator may share state with the tables built beside it (`shares=`): made alone, later,
            # its rows would differ
            raise ValueError(
                f"lazy: a table made by a Python generator ({self.generator!r}) is built with the world; "
                "only a declared table can be made at its first query"
            )
        return self


class View(StrictModel):
    """An SQL view: how a platform sees the base tables (its field names, formats and filters)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(description="What the view serves.")
    sql: str = Field(description="A SELECT statement over base tables or earlier views.")


class EpisodeTable(StrictModel):
    """Mutable state of one episode (e.g. the agent's workspace files): empty when a session starts, changed only
    by write operations, part of the session's state hash, gone when the session ends."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(description="What the rows are, in one sentence.")
    columns: list[Column] = Field(min_length=1)
    key: list[str] = Field(min_length=1, description="Columns that identify a row (writes upsert on them).")
    max_rows: int | None = Field(
        default=None,
        ge=1,
        description="Most rows the table holds in one episode: a write that would add a row past it is refused "
        "with the platform's bad-value answer naming the limit (rewriting a row that exists still works).",
    )


class WorldFile(StrictModel):
    """One file under specs/world/ (other than world.yaml)."""

    tables: list[Table] = Field(default_factory=list)
    views: list[View] = Field(default_factory=list)
    episode: list[EpisodeTable] = Field(default_factory=list, description="Per-episode mutable tables.")


class WorldRoot(StrictModel):
    """specs/world/world.yaml."""

    seed: int = Field(description="Default world seed.")
    today: dt.date = Field(description="The world's fixed 'today'; data stops the day before.")
    files: list[str] = Field(min_length=1, description="World files in build order (later may read earlier).")
    entities: dict[str, str | ColumnGen] = Field(
        default_factory=dict,
        description="Field name -> the shared entity it names, as 'table.column' (corp_code: "
        "companies.corp_code) or a column generator ({ref: regions.region_cd, where: abolished = 0}): a "
        "synthesised table (an operation without x-kopa.source) fills such a field from the entity's rows.",
    )


class WorldSpec(StrictModel):
    seed: int
    today: dt.date
    tables: list[Table]
    views: list[View]
    files: list[str]
    episode: list[EpisodeTable] = Field(default_factory=list)
    entities: dict[str, ColumnGen] = Field(default_factory=dict)
    origin: dict[str, str] = Field(
        default_factory=dict, description="Table or view name -> the world file it is in."
    )

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def check_schema(
    placed: list[tuple[Source, str, int, Table | View | EpisodeTable]],
    known: Collection[str],
    diags: Diagnostics,
) -> None:
    """What the world build would only find out after minutes, found on an empty in-memory schema in
    milliseconds, each at its place: unknown generators, indexes and episode keys naming missing columns,
    generated columns and views whose SQL reads a table or column that does not exist."""
    db = sqlite3.connect(":memory:")
    db.execute(WORLD_TABLE_SQL)
    base: set[str] = {WORLD_TABLE}  # base tables placed so far (a declared table can read only those)
    lazy: set[str] = set()  # of those, the ones made at their first query, which no built table can read
    for src, kind, j, item in placed:
        if isinstance(item, Table) and item.generator is None:
            check_declared(src, (kind, j), item, db, base, diags)
        elif isinstance(item, Table) and item.generator not in known:
            diags.items.append(
                src.diag(
                    (kind, j, "generator"),
                    f"unknown generator {item.generator!r}; known: {', '.join(sorted(known))} (a new one is a "
                    "module in kopa_gen/world/generators/)",
                )
            )
        if isinstance(item, Table) and not item.lazy:
            said = item.model_dump_json(include={"query", "for_each", "columns"})
            for name in sorted(n for n in lazy if re.search(rf"\b{n}\b", said)):
                diags.items.append(
                    src.diag(
                        (kind, j),
                        f"{item.name} reads {name!r}, which is made at its first query (`lazy: true`), not with "
                        f"the world: drop `lazy` from {name!r}, or read it in a view",
                    )
                )
        try:
            if isinstance(item, View):
                db.execute(f'CREATE VIEW "{item.name}" AS {item.sql}')
                db.execute(f'SELECT * FROM "{item.name}" LIMIT 0')
            else:
                cols = ", ".join(column_sql(c) for c in item.columns)
                db.execute(f'CREATE TABLE "{item.name}" ({cols})')
        except sqlite3.Error as exc:
            where = (kind, j, "sql") if isinstance(item, View) else (kind, j, "columns")
            diags.items.append(src.diag(where, f"{item.name}: {exc}"))
            continue
        names = {c.name for c in item.columns} if not isinstance(item, View) else set()
        if isinstance(item, Table):
            base.add(item.name)
            if item.lazy:
                lazy.add(item.name)
            for k, index in enumerate(item.indexes):
                missing = [c for c in (i.split(" ")[0] for i in index) if c not in names]
                if missing:
                    diags.items.append(src.diag((kind, j, "indexes", k), f"no column {', '.join(missing)}"))
        if isinstance(item, EpisodeTable):
            missing = [k for k in item.key if k not in names]
            if missing:
                diags.items.append(src.diag((kind, j, "key"), f"key names no column: {', '.join(missing)}"))


def by_key(table: Table, column: Column) -> str:
    """The column of the referenced table that `column`'s `by` column holds: `by` must name a column of this
    table that is a `ref` to the same table (ValueError otherwise, reported at the column when the world loads)."""
    gen = column.gen
    assert gen is not None and gen.ref is not None and gen.by is not None
    ref_table = gen.ref.split(".", 1)[0]
    other = next((c for c in table.columns if c.name == gen.by), None)
    if other is None or other.gen is None or other.gen.ref is None or other.gen.by is not None:
        raise ValueError(f"by: {gen.by!r} is not a `ref` column of {table.name} (without `by` of its own)")
    other_table, key = other.gen.ref.split(".", 1)
    if other_table != ref_table:
        raise ValueError(f"by: {gen.by!r} refers to {other_table}, not {ref_table}")
    return key


def check_declared(
    src: Source,
    at: tuple[str, int],
    table: Table,
    db: sqlite3.Connection,
    base: set[str],
    diags: Diagnostics,
) -> None:
    """A declared table: its size, a `gen` on every column, and every table, column and SQL it names."""
    for loc, message in declared_problems(table, db, base):
        diags.items.append(src.diag((*at, *loc), f"{table.name}: {message}"))


Problem = tuple[tuple[str | int, ...], str]


def declared_problems(table: Table, db: sqlite3.Connection, base: set[str]) -> list[Problem]:
    """What is wrong with a declared table, each at its place in the table (`("columns", 3, "gen", "code")`),
    given an in-memory schema `db` holding the base tables in `base` (the ones it may read)."""
    problems: list[Problem] = []
    if sum(x is not None for x in (table.rows, table.for_each, table.query)) != 1:
        problems.append(
            ((), "a declared table (no `generator`) needs one of `rows: N`, `for_each` or `query`")
        )
    if table.anchors or table.params:
        problems.append(((), "`anchors` and `params` are for Python generators; declare the rows with `gen`"))

    def table_columns(name: str) -> list[str] | None:
        if name not in base:
            return None
        return [r[1] for r in db.execute(f'PRAGMA table_info("{name}")')]

    def sql_ok(sql: str) -> str | None:
        try:
            db.execute(sql, {"seed": 0, "today": "2000-01-01"})
        except sqlite3.Error as exc:
            return str(exc)
        return None

    def earlier(name: str) -> str:
        return f"no base table {name!r} before this one (declared tables read base tables built earlier, not views)"

    parent_cols: list[str] = []
    each = table.for_each
    if each is not None:
        cols = table_columns(each.table)
        if cols is None:
            problems.append((("for_each", "table"), earlier(each.table)))
        else:
            parent_cols = cols
            where = f" WHERE {each.where}" if each.where else ""
            order = f" ORDER BY {each.order}" if each.order else ""
            err = sql_ok(f'SELECT * FROM "{each.table}"{where}{order} LIMIT 0')
            if err:
                problems.append((("for_each",), f"{err} (in where/order)"))
        if isinstance(each.count, list) and (len(each.count) != 2 or each.count[0] > each.count[1]):
            problems.append((("for_each", "count"), "write a number or [low, high] with low <= high"))
    before: list[str] = []
    for i, column in enumerate(table.columns):
        gen = column.gen
        here: tuple[str | int, ...] = ("columns", i, "gen")
        if table.query is not None:
            if gen is not None:
                problems.append(((*here,), "a `query` table takes its columns from the query; remove `gen`"))
            continue
        if gen is None:
            if column.generated is None:
                problems.append((("columns", i), "a declared table needs `gen` on every column"))
            before.append(column.name)
            continue
        kind = gen.kind
        if kind == "ref":
            assert gen.ref is not None
            ref_table, _, ref_column = gen.ref.partition(".")
            cols = table_columns(ref_table)
            if cols is None:
                problems.append(((*here, "ref"), earlier(ref_table)))
            elif ref_column not in cols:
                problems.append(
                    ((*here, "ref"), f"{ref_table!r} has no column {ref_column!r}; it has {', '.join(cols)}")
                )
            else:
                where = f" WHERE {gen.where}" if gen.where else ""
                weight = f', "{gen.weight}"' if gen.weight else ""
                err = sql_ok(f'SELECT "{ref_column}"{weight} FROM "{ref_table}"{where} LIMIT 0')
                if err:
                    problems.append((here, f"{err} (in where/weight)"))
            if gen.by is not None:
                try:
                    by_key(table, column)
                except ValueError as exc:
                    problems.append(((*here, "by"), str(exc)))
        elif kind == "parent":
            if each is None:
                problems.append(((*here, "parent"), "`parent` needs a `for_each` on the table"))
            elif parent_cols and gen.parent not in parent_cols:
                problems.append(
                    (
                        (*here, "parent"),
                        f"{each.table!r} has no column {gen.parent!r}; it has {', '.join(parent_cols)}",
                    )
                )
        elif kind == "address" and gen.address not in before:
            problems.append(
                ((*here, "address"), f"no earlier column {gen.address!r} holding a legal-district code")
            )
        elif kind == "code":
            assert gen.code is not None
            fields = {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(gen.code) if f}
            unknown = sorted(fields - {*before, "n", "parent"})
            if unknown:
                problems.append(
                    ((*here, "code"), f"format names {', '.join(unknown)}: not an earlier column or n")
                )
        elif kind == "choice" and isinstance(gen.choice, list) and gen.weights is not None:
            if len(gen.weights) != len(gen.choice):
                problems.append(
                    ((*here, "weights"), f"{len(gen.weights)} weights for {len(gen.choice)} values")
                )
        elif kind == "choice" and not gen.choice:
            problems.append(((*here, "choice"), "no values to choose from"))
        elif kind == "date":
            assert gen.date is not None
            for k, text in enumerate(gen.date):
                if not re.match(r"^(today\s*([+-]\s*\d+)?|\d{4}-\d{2}-\d{2})$", text.strip()):
                    problems.append(
                        ((*here, "date", k), f"{text!r}: write YYYY-MM-DD, today, today-N or today+N")
                    )
        before.append(column.name)
    if table.query is not None and not problems:
        err = sql_ok(f"SELECT * FROM ({table.query}) LIMIT 0")
        if err is None:
            width = len(db.execute(f"SELECT * FROM ({table.query}) LIMIT 0").description)
            if width != len(table.columns):
                err = f"the query gives {width} columns, the table declares {len(table.columns)}"
        if err is not None:
            problems.append((("query",), err))
    if not problems:
        spec = ", ".join(column_sql(c) for c in table.columns)
        db.execute(f'CREATE TABLE "_declared_{table.name}" ({spec})')
        for i, column in enumerate(table.columns):
            if column.gen is not None and column.gen.sql is not None:
                err = sql_ok(f'SELECT ({column.gen.sql}) FROM "_declared_{table.name}" AS "{table.name}"')
                if err:
                    problems.append((("columns", i, "gen", "sql"), err))
        db.execute(f'DROP TABLE "_declared_{table.name}"')
    return problems


def resolve_enums(
    root: Path, placed: list[tuple[Source, str, int, Table | View | EpisodeTable]], diags: Diagnostics
) -> None:
    """Turn each `enum: 'platform#/pointer'` column into a `choice` of the values the platform spec lists there,
    so the world follows the spec (and its hash changes when the enum does)."""
    docs: dict[str, Any] = {}
    for src, kind, j, item in placed:
        if not isinstance(item, Table):
            continue
        for i, column in enumerate(item.columns):
            gen = column.gen
            if gen is None or gen.enum is None:
                continue
            where = (kind, j, "columns", i, "gen", "enum")
            platform, _, pointer = gen.enum.partition("#")
            path = root / "specs" / "platforms" / platform / "openapi.yaml"
            if platform not in docs:
                try:
                    docs[platform] = load_yaml(path, root).data if path.exists() else None
                except YamlError:
                    docs[platform] = None  # reported where the platform itself is loaded
            node = docs[platform]
            if node is None:
                diags.items.append(
                    src.diag(where, f"no platform spec {platform!r} (specs/platforms/{platform}/)")
                )
                continue
            for part in pointer.strip("/").split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                node = node.get(part) if isinstance(node, dict) else None
            values = node.get("enum") if isinstance(node, dict) else None
            if not isinstance(values, list) or not values:
                diags.items.append(
                    src.diag(
                        where, f"{gen.enum!r} is not a schema with an `enum` list; write 'platform#/pointer'"
                    )
                )
                continue
            if gen.weights is not None and len(gen.weights) != len(values):
                diags.items.append(
                    src.diag(
                        (*where[:-1], "weights"), f"{len(gen.weights)} weights for {len(values)} enum values"
                    )
                )
                continue
            item.columns[i] = column.model_copy(
                update={"gen": gen.model_copy(update={"enum": None, "choice": values})}
            )


def column_sql(column: Column) -> str:
    """A column's SQL definition (a generated column with its expression)."""
    sql = f'"{column.name}" {column.type.upper()}'
    return sql + (f" GENERATED ALWAYS AS ({column.generated}) VIRTUAL" if column.generated else "")


def load_world(root: Path, generators: Collection[str]) -> tuple[WorldSpec | None, list[Diagnostic]]:
    """Load specs/world/world.yaml and the files it lists. `generators` are the generator names the project
    knows (the plug-ins are named by whoever assembles the project)."""
    diags = Diagnostics()
    folder = root / "specs" / "world"
    try:
        src = load_yaml(folder / "world.yaml", root)
    except YamlError as exc:
        return None, exc.diagnostics
    top = validate_model(WorldRoot, src.data, src, (), diags)
    if top is None:
        return None, diags.items
    tables: list[Table] = []
    views: list[View] = []
    episode: list[EpisodeTable] = []
    names: set[str] = set()
    origin: dict[str, str] = {}
    placed: list[tuple[Source, str, int, Table | View | EpisodeTable]] = []
    for i, name in enumerate(top.files):
        path = folder / name
        if not path.exists():
            diags.items.append(src.diag(("files", i), f"world file {name!r} does not exist in specs/world/"))
            continue
        try:
            fsrc = load_yaml(path, root)
        except YamlError as exc:
            diags.items.extend(exc.diagnostics)
            continue
        part = validate_model(WorldFile, fsrc.data, fsrc, (), diags)
        if part is None:
            continue
        named: list[tuple[str, int, str]] = [("tables", j, t.name) for j, t in enumerate(part.tables)]
        named += [("views", j, v.name) for j, v in enumerate(part.views)]
        named += [("episode", j, e.name) for j, e in enumerate(part.episode)]
        for kind, j, item_name in named:
            if item_name in names:
                diags.items.append(
                    fsrc.diag((kind, j, "name"), f"{item_name!r} is defined twice in the world")
                )
            names.add(item_name)
        tables.extend(part.tables)
        origin.update((t.name, name) for t in part.tables)
        origin.update((v.name, name) for v in part.views)
        views.extend(part.views)
        episode.extend(part.episode)
        placed += [(fsrc, "tables", j, t) for j, t in enumerate(part.tables)]
        placed += [(fsrc, "views", j, v) for j, v in enumerate(part.views)]
        placed += [(fsrc, "episode", j, e) for j, e in enumerate(part.episode)]
    if not diags.errors:
        resolve_enums(root, placed, diags)
    if not diags.errors:
        check_schema(placed, generators, diags)
    entities = {k: v if isinstance(v, ColumnGen) else ColumnGen(ref=v) for k, v in top.entities.items()}
    if not diags.errors:
        known = {t.name: {c.name for c in t.columns} for t in tables}
        for name, gen in entities.items():
            table, _, column = (gen.ref or "").partition(".")
            if gen.ref is not None and column not in known.get(table, set()):
                diags.items.append(
                    src.diag(("entities", name), f"no base table column {gen.ref!r} in the world")
                )
    if diags.errors:
        return None, diags.items
    spec = WorldSpec(
        seed=top.seed,
        today=top.today,
        tables=tables,
        views=views,
        files=top.files,
        episode=episode,
        entities=entities,
        origin=origin,
    )
    return spec, diags.items
