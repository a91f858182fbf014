"""The world spec: which tables the sandbox world has, how each is generated, and the views platforms read."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from kopa_gen.spec.diagnostics import Diagnostic, Diagnostics
from kopa_gen.spec.kopa import StrictModel
from kopa_gen.spec.source import Source, YamlError, load_yaml, validate_model


class Column(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Column name.")
    type: Literal["text", "integer", "real"] = Field(default="text", description="SQLite storage type.")
    description: str = Field(default="", description="What the column holds.")
    generated: str | None = Field(
        default=None,
        description="SQL expression over other columns (a generated column, e.g. length(content)).",
    )


class Table(StrictModel):
    """A base table, filled by a registered generator from the world seed."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(description="What the rows are, in one sentence.")
    generator: str = Field(description="Name of the registered generator (kopa_gen/world/generators/).")
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


class WorldSpec(StrictModel):
    seed: int
    today: dt.date
    tables: list[Table]
    views: list[View]
    files: list[str]
    episode: list[EpisodeTable] = Field(default_factory=list)

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def check_schema(
    placed: list[tuple[Source, str, int, Table | View | EpisodeTable]], diags: Diagnostics
) -> None:
    """What the world build would only find out after minutes, found on an empty in-memory schema in
    milliseconds, each at its place: unknown generators, indexes and episode keys naming missing columns,
    generated columns and views whose SQL reads a table or column that does not exist."""
    from kopa_gen.world.registry import generators  # the registry imports this module

    known = generators()
    db = sqlite3.connect(":memory:")
    for src, kind, j, item in placed:
        if isinstance(item, Table) and item.generator not in known:
            diags.items.append(
                src.diag(
                    (kind, j, "generator"),
                    f"unknown generator {item.generator!r}; known: {', '.join(sorted(known))} (a new one is a "
                    "module in kopa_gen/world/generators/)",
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
            for k, index in enumerate(item.indexes):
                missing = [c for c in (i.split(" ")[0] for i in index) if c not in names]
                if missing:
                    diags.items.append(src.diag((kind, j, "indexes", k), f"no column {', '.join(missing)}"))
        if isinstance(item, EpisodeTable):
            missing = [k for k in item.key if k not in names]
            if missing:
                diags.items.append(src.diag((kind, j, "key"), f"key names no column: {', '.join(missing)}"))


def column_sql(column: Column) -> str:
    """A column's SQL definition (a generated column with its expression)."""
    sql = f'"{column.name}" {column.type.upper()}'
    return sql + (f" GENERATED ALWAYS AS ({column.generated}) VIRTUAL" if column.generated else "")


def load_world(root: Path) -> tuple[WorldSpec | None, list[Diagnostic]]:
    """Load specs/world/world.yaml and the files it lists."""
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
        views.extend(part.views)
        episode.extend(part.episode)
        placed += [(fsrc, "tables", j, t) for j, t in enumerate(part.tables)]
        placed += [(fsrc, "views", j, v) for j, v in enumerate(part.views)]
        placed += [(fsrc, "episode", j, e) for j, e in enumerate(part.episode)]
    if not diags.errors:
        check_schema(placed, diags)
    if diags.errors:
        return None, diags.items
    spec = WorldSpec(
        seed=top.seed, today=top.today, tables=tables, views=views, files=top.files, episode=episode
    )
    return spec, diags.items
