"""Generators fill base tables from the world seed. They register by name; the world spec refers to the name."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.plugins import Registry

DATA = Path(__file__).parent / "data"

Row = Sequence[Any]
Generator = Callable[["GenContext", Table], Iterable[Row]]

GENERATORS: Registry[Generator] = Registry(
    "world generator", "kopa_gen.world.generators", "a new one is a module in kopa_gen/world/generators/"
)
SHARES: dict[str, str] = {}
"""Generator name -> the in-memory state it shares with other generators (one simulation feeding several
tables): an incremental build regenerates all the tables sharing a state together, or none."""


def generator(name: str, shares: str | None = None) -> Callable[[Generator], Generator]:
    """Register a table generator under `name` (what `generator:` in a world file says). `shares` names state
    computed once per build and used by several generators (say so, or incremental builds go wrong)."""

    def wrap(fn: Generator) -> Generator:
        GENERATORS.add(name, fn, f"{fn.__module__}.{fn.__qualname__}")
        if shares is not None:
            SHARES[name] = shares
        return fn

    return wrap


def generators() -> dict[str, Generator]:
    """All registered generators; discovers every module of kopa_gen.world.generators once."""
    return GENERATORS.items()


@dataclass
class GenContext:
    """What a generator may use: the seed, today, earlier tables (read through `db`) and shipped data files."""

    seed: int
    today: dt.date
    db: sqlite3.Connection

    def rng(self, name: str) -> random.Random:
        """A private RNG per table (or per purpose): adding a table never shifts another table's values."""
        return random.Random(f"{self.seed}:{name}")

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return self.db.execute(sql, args).fetchall()

    @staticmethod
    def data(name: str) -> Path:
        return DATA / name


@generator("static")
def static_rows(ctx: GenContext, table: Table) -> Iterable[Row]:
    """A small table written out in the spec itself: its `anchors` are all its rows."""
    for row in table.anchors:
        yield tuple(row.get(c.name) for c in table.columns)
