"""Read access to the world for the sandbox: filtered, ordered, paged queries with cached totals."""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kopa_gen.spec.kopa import Filter, Order


def _where(filters: Sequence[Filter], values: Mapping[str, str]) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    for f in filters:
        value = values.get(f.param)
        if value is None or value == "":
            continue
        col = f'"{f.column}"'
        match f.match:
            case "eq":
                clauses.append(f"{col} = ?")
                args.append(value)
            case "contains":
                clauses.append(f"instr({col}, ?) > 0")
                args.append(value)
            case "prefix":
                clauses.append(f"substr({col}, 1, ?) = ?")
                args.extend([len(value), value])
            case "gte" | "lte" | "gt" | "lt":
                op = {"gte": ">=", "lte": "<=", "gt": ">", "lt": "<"}[f.match]
                clauses.append(f"{col} {op} ?")
                args.append(value)
            case "in":
                parts = [p.strip() for p in value.split(",") if p.strip()]
                clauses.append(f"{col} IN ({', '.join('?' for _ in parts)})")
                args.extend(parts)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def _order(order: Sequence[Order]) -> str:
    if not order:
        return ""
    return " ORDER BY " + ", ".join(f'"{o.column}"' + (" DESC" if o.desc else "") for o in order)


def select_rows(
    db: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    filters: Sequence[Filter],
    values: Mapping[str, str],
    order: Sequence[Order],
    limit: int | None = None,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The rows a bound operation serves: its filters, its total order, one page."""
    where, args = _where(filters, values)
    cols = ", ".join(f'"{c}"' for c in columns)
    sql = f'SELECT {cols} FROM "{table}"{where}{_order(order)}'
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        args = [*args, limit, offset]
    return [dict(zip(columns, row, strict=True)) for row in db.execute(sql, args)]


CHUNK = 500
"""Parents per query of a sub-list: far below SQLite's bound on query parameters."""


def select_children(
    db: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    key: Sequence[str],
    parents: Sequence[tuple[Any, ...]],
    order: Sequence[Order],
) -> list[dict[str, Any]]:
    """The rows of a sub-list for many parents at once: those whose `key` columns equal one of the `parents`
    tuples, in `order` (one query per `CHUNK` parents, not one per parent)."""
    cols = ", ".join(f'"{c}"' for c in columns)
    if len(key) == 1:
        match = f'"{key[0]}" IN ({{marks}})'
        one = "?"
    else:
        match = "(" + ", ".join(f'"{k}"' for k in key) + ") IN (VALUES {marks})"
        one = "(" + ", ".join("?" for _ in key) + ")"
    out: list[dict[str, Any]] = []
    for start in range(0, len(parents), CHUNK):
        chunk = parents[start : start + CHUNK]
        where = match.format(marks=", ".join(one for _ in chunk))
        sql = f'SELECT {cols} FROM "{table}" WHERE {where}{_order(order)}'
        args = [value for parent in chunk for value in parent]
        out.extend(dict(zip(columns, row, strict=True)) for row in db.execute(sql, args))
    return out


def count_rows(
    db: sqlite3.Connection, table: str, filters: Sequence[Filter], values: Mapping[str, str]
) -> int:
    where, args = _where(filters, values)
    return int(db.execute(f'SELECT COUNT(*) FROM "{table}"{where}', args).fetchone()[0])


@dataclass
class WorldStore:
    """One read-only world connection shared by every sandbox of a process, plus caches that are safe to share
    because the world never changes."""

    db: sqlite3.Connection
    max_cached_counts: int = 4096
    _counts: OrderedDict[tuple[Any, ...], int] = field(default_factory=OrderedDict)
    _files: dict[str, bytes] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, table: str, filters: Sequence[Filter], values: Mapping[str, str]) -> int:
        where, args = _where(filters, values)
        key = (table, where, *args)
        with self._lock:
            if key in self._counts:
                self._counts.move_to_end(key)
                return self._counts[key]
            total = count_rows(self.db, table, filters, values)
            self._counts[key] = total
            if len(self._counts) > self.max_cached_counts:
                self._counts.popitem(last=False)
            return total

    def select(
        self,
        table: str,
        columns: Sequence[str],
        filters: Sequence[Filter],
        values: Mapping[str, str],
        order: Sequence[Order],
        limit: int | None = None,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        with self._lock:
            return select_rows(self.db, table, columns, filters, values, order, limit, offset)

    def children(
        self,
        table: str,
        columns: Sequence[str],
        key: Sequence[str],
        parents: Sequence[tuple[Any, ...]],
        order: Sequence[Order],
    ) -> list[dict[str, Any]]:
        with self._lock:
            return select_children(self.db, table, columns, key, parents, order)

    def file(self, key: str, build: Callable[[], bytes]) -> bytes:
        """Bulk downloads are built once per world and kept. The build runs outside the lock (it queries the
        store itself, and other requests must not wait for it)."""
        with self._lock:
            cached = self._files.get(key)
        if cached is None:
            cached = build()
            with self._lock:
                cached = self._files.setdefault(key, cached)
        return cached
