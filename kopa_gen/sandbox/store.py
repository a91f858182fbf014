"""Read access to the world for the sandbox: filtered, ordered, paged queries with cached totals."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kopa_gen.language.kopa import Filter, Order


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
            case "range":
                low, _, high = value.partition("~")
                if low.strip():
                    clauses.append(f"{col} >= ?")
                    args.append(low.strip())
                if high.strip():
                    clauses.append(f"{col} <= ?")
                    args.append(high.strip())
            case "in":
                parts = [p.strip() for p in value.split(",") if p.strip()]
                clauses.append(f"{col} IN ({', '.join('?' for _ in parts)})")
                args.extend(parts)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def _order(order: Sequence[Order]) -> str:
    if not order:
        return ""
    return " ORDER BY " + ", ".join(f'"{o.column}"' + (" DESC" if o.desc else "") for o in order)


def _marks_key(table: str, where: str, args: Sequence[Any], order: Sequence[Order]) -> tuple[Any, ...]:
    """What a query's bookmarks are kept under."""
    return (table, where, tuple(args), tuple((o.column, o.desc) for o in order))


Make = Callable[[Sequence[Any]], dict[str, Any]]
"""A row as the caller wants it, from its values in the selected columns' order (default: a dict by column)."""


def _maker(columns: Sequence[str], make: Make | None) -> Make:
    if make is not None:
        return make
    names = tuple(columns)
    return lambda row: dict(zip(names, row, strict=True))


def select_rows(
    db: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    filters: Sequence[Filter],
    values: Mapping[str, str],
    order: Sequence[Order],
    limit: int | None = None,
    offset: int = 0,
    make: Make | None = None,
) -> list[dict[str, Any]]:
    """The rows a bound operation serves: its filters, its total order, one page."""
    where, args = _where(filters, values)
    cols = ", ".join(f'"{c}"' for c in columns)
    sql = f'SELECT {cols} FROM "{table}"{where}{_order(order)}'
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        args = [*args, limit, offset]
    return list(map(_maker(columns, make), db.execute(sql, args)))


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


STRIDE = 32
"""Rows between two bookmarks of a paged query: a page at any depth skips fewer than this many rows."""
EXACT = 2048
"""A filtered query with at most this many rows keeps the key of each (a page of sparse matches is then found by
its keys, not by scanning past the rows that do not match)."""
KEYS_PER_QUERY = 200
"""Keys per query of `select_keys` (an OR of that many terms stays far below SQLite's expression depth)."""


@dataclass(frozen=True)
class Bookmarks:
    """Where a filtered, ordered query's pages start: the order key of every `stride`-th row and the total.
    `keys` is None when the order is not a strict total order of these rows (a tie or a NULL in the order
    columns), and pages then use OFFSET."""

    total: int
    stride: int
    keys: list[tuple[Any, ...]] | None


def bookmarks(
    db: sqlite3.Connection,
    table: str,
    filters: Sequence[Filter],
    values: Mapping[str, str],
    order: Sequence[Order],
    stride: int = STRIDE,
    exact: int = EXACT,
) -> Bookmarks:
    """One ordered scan of the matching rows' order columns (the count comes with it). Up to `exact` rows keep
    every key (stride 1: a page is then found by its rows' keys)."""
    where, args = _where(filters, values)
    cols = ", ".join(f'"{o.column}"' for o in order)
    keys: list[tuple[Any, ...]] | None = [] if order else None
    every = 1
    total = 0
    previous: tuple[Any, ...] | None = None
    for row in db.execute(f'SELECT {cols or "1"} FROM "{table}"{where}{_order(order)}', args):
        if keys is not None:
            if None in row or row == previous:
                keys = None
            else:
                if total == exact and every == 1:
                    keys, every = keys[::stride], stride
                if total % every == 0:
                    keys.append(row)
            previous = row
        total += 1
    return Bookmarks(total, every, keys)


def select_keys(
    db: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    filters: Sequence[Filter],
    values: Mapping[str, str],
    order: Sequence[Order],
    keys: Sequence[tuple[Any, ...]],
    make: Make | None = None,
) -> list[dict[str, Any]]:
    """The matching rows with these order keys (ascending in `order`), each found by an index seek where an
    index leads with the order columns."""
    where, args = _where(filters, values)
    cols = ", ".join(f'"{c}"' for c in columns)
    one = "(" + " AND ".join(f'"{o.column}" = ?' for o in order) + ")"
    out: list[dict[str, Any]] = []
    for start in range(0, len(keys), KEYS_PER_QUERY):
        chunk = keys[start : start + KEYS_PER_QUERY]
        match = " OR ".join(one for _ in chunk)
        clause = f"{where} AND ({match})" if where else f" WHERE {match}"
        key_args = [v for key in chunk for v in key]
        rows = db.execute(f'SELECT {cols} FROM "{table}"{clause}{_order(order)}', [*args, *key_args])
        out.extend(map(_maker(columns, make), rows))
    return out


def _from_key(order: Sequence[Order], key: tuple[Any, ...]) -> list[tuple[str, list[Any]]]:
    """The rows at or after `key` in `order`, as conditions to try one after the other, each a contiguous run of
    the order and each a range seek on an index of the order columns: equal on the first i columns and past
    the key on the next (at or past on the last column). Together, in this sequence, they are the order from
    `key` on (a single row-value comparison cannot say it when directions are mixed)."""
    parts: list[tuple[str, list[Any]]] = []
    for i in range(len(order) - 1, -1, -1):
        same = [f'"{o.column}" = ?' for o in order[:i]]
        o = order[i]
        op = ("<" if o.desc else ">") + ("=" if i == len(order) - 1 else "")
        parts.append((" AND ".join([*same, f'"{o.column}" {op} ?']), [*key[:i], key[i]]))
    return parts


def select_from(
    db: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    filters: Sequence[Filter],
    values: Mapping[str, str],
    order: Sequence[Order],
    key: tuple[Any, ...],
    skip: int,
    limit: int,
    make: Make | None = None,
) -> list[dict[str, Any]]:
    """Rows `skip` to `skip + limit` counted from the row whose order key is `key` (a strict total order). The
    skipped rows stay database tuples: only the page's rows are made."""
    where, args = _where(filters, values)
    cols = ", ".join(f'"{c}"' for c in columns)
    want = skip + limit
    seen = 0
    out: list[dict[str, Any]] = []
    for cond, key_args in _from_key(order, key):
        clause = f"{where} AND {cond}" if where else f" WHERE {cond}"
        sql = f'SELECT {cols} FROM "{table}"{clause}{_order(order)} LIMIT ?'
        rows = db.execute(sql, [*args, *key_args, want - seen]).fetchall()
        out.extend(map(_maker(columns, make), rows[max(0, skip - seen) :]))
        seen += len(rows)
        if seen >= want:
            break
    return out


@dataclass
class WorldStore:
    """The read-only world shared by every sandbox of a process, plus caches that are safe to share because the
    world never changes. With `opener`, each thread queries through its own connection (SQLite then runs queries
    of several threads at once); without, every query takes turns on `db`."""

    db: sqlite3.Connection
    opener: Callable[[], sqlite3.Connection] | None = None
    stride: int = STRIDE
    exact: int = EXACT
    max_cached_counts: int = 4096
    max_cached_keys: int = 1_000_000
    """Bookmark keys kept over all cached queries (a 2,000,000-row list with no filter holds 15,625)."""
    _counts: OrderedDict[tuple[Any, ...], int] = field(default_factory=OrderedDict)
    _marks: OrderedDict[tuple[Any, ...], Bookmarks] = field(default_factory=OrderedDict)
    _marked_keys: int = 0
    files_dir: Path | None = None
    """Where built bulk downloads are kept for other processes over the same world (None: memory only)."""
    _files: dict[str, bytes] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _local: threading.local = field(default_factory=threading.local)
    _owner: int = field(default_factory=threading.get_ident)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        if self.opener is None:
            with self._lock:
                yield self.db
        elif threading.get_ident() == self._owner:
            yield self.db
        else:
            conn = getattr(self._local, "db", None)
            if conn is None:
                conn = self._local.db = self.opener()
            yield conn

    def count(self, table: str, filters: Sequence[Filter], values: Mapping[str, str]) -> int:
        """The query's total, kept (least recently used go first); a whole table's total is also kept in
        `files_dir` for every later process over the same world (counting a large view takes seconds)."""
        where, args = _where(filters, values)
        key = (table, where, *args)
        with self._lock:
            if key in self._counts:
                self._counts.move_to_end(key)
                return self._counts[key]

        def counted() -> int:
            with self._db() as db:
                return count_rows(db, table, filters, values)

        if where:
            total = counted()
        else:
            total = int(self._on_disk(f"count-{table}.txt", lambda: str(counted()).encode()))
        with self._lock:
            self._counts[key] = total
            if len(self._counts) > self.max_cached_counts:
                self._counts.popitem(last=False)
        return total

    def bookmarks(
        self, table: str, filters: Sequence[Filter], values: Mapping[str, str], order: Sequence[Order]
    ) -> Bookmarks:
        """The query's bookmarks, scanned at its first deep page and kept (least recently used go first)."""
        where, args = _where(filters, values)
        key = _marks_key(table, where, args, order)
        with self._lock:
            if key in self._marks:
                self._marks.move_to_end(key)
                return self._marks[key]
        if where:
            with self._db() as db:
                marks = bookmarks(db, table, filters, values, order, self.stride, self.exact)
        else:
            marks = self._whole_table_marks(table, order)
        with self._lock:
            if key not in self._marks:
                self._marks[key] = marks
                self._marked_keys += len(marks.keys or ())
            while len(self._marks) > 1 and (
                self._marked_keys > self.max_cached_keys or len(self._marks) > self.max_cached_counts
            ):
                _, gone = self._marks.popitem(last=False)
                self._marked_keys -= len(gone.keys or ())
        return marks

    def _whole_table_marks(self, table: str, order: Sequence[Order]) -> Bookmarks:
        """The bookmarks of a whole table in `order`, scanned once per world: kept in `files_dir` (when given) for
        every later process over the same world, as bulk downloads are (a query with a filter is not kept: its
        values are unbounded, and it scans only its own rows)."""

        def scan() -> bytes:
            with self._db() as db:
                marks = bookmarks(db, table, [], {}, order, self.stride, self.exact)
            try:
                return json.dumps([marks.total, marks.stride, marks.keys]).encode()
            except TypeError:  # a key JSON cannot hold (a BLOB): no bookmarks, pages use OFFSET
                return json.dumps([marks.total, marks.stride, None]).encode()

        total, stride, keys = json.loads(self._on_disk(self._marks_name(table, order), scan))
        return Bookmarks(total, stride, None if keys is None else [tuple(k) for k in keys])

    def _marks_name(self, table: str, order: Sequence[Order]) -> str:
        made_of = json.dumps([table, [(o.column, o.desc) for o in order], self.stride, self.exact])
        return f"order-{table}-{hashlib.sha256(made_of.encode()).hexdigest()[:16]}.json"

    def _kept_marks(
        self, table: str, filters: Sequence[Filter], values: Mapping[str, str], order: Sequence[Order]
    ) -> Bookmarks | None:
        """The bookmarks of an unfiltered query if they were scanned already (in this process or kept in
        `files_dir`); None rather than a scan."""
        with self._lock:
            known = _marks_key(table, "", [], order) in self._marks
        kept = self.files_dir is not None and (self.files_dir / self._marks_name(table, order)).is_file()
        return self.bookmarks(table, filters, values, order) if known or kept else None

    def select(
        self,
        table: str,
        columns: Sequence[str],
        filters: Sequence[Filter],
        values: Mapping[str, str],
        order: Sequence[Order],
        limit: int | None = None,
        offset: int = 0,
        make: Make | None = None,
    ) -> list[dict[str, Any]]:
        """As `select_rows`; a page past the first `stride` rows starts from the nearest bookmark, so its cost
        does not grow with its depth, and a page of a small filtered result is found by its rows' keys. A first
        page of a whole table starts from the first bookmark when the bookmarks are known already: where no index
        serves the order (a view's join), a plain LIMIT sorts the whole table at every call."""
        filtered = bool(_where(filters, values)[0])
        marks: Bookmarks | None = None
        if limit is not None and order:
            if offset >= self.stride or (
                filtered and limit > 1 and self.count(table, filters, values) <= self.exact
            ):
                marks = self.bookmarks(table, filters, values, order)
            elif not filtered:
                marks = self._kept_marks(table, filters, values, order)
        if limit is not None and marks is not None and marks.keys is not None:
            if offset >= marks.total:
                return []
            if marks.stride == 1:
                with self._db() as db:
                    keys = marks.keys[offset : offset + limit]
                    return select_keys(db, table, columns, filters, values, order, keys, make)
            mark = offset // marks.stride
            with self._db() as db:
                return select_from(
                    db,
                    table,
                    columns,
                    filters,
                    values,
                    order,
                    marks.keys[mark],
                    offset - mark * marks.stride,
                    limit,
                    make,
                )
        with self._db() as db:
            return select_rows(db, table, columns, filters, values, order, limit, offset, make)

    def children(
        self,
        table: str,
        columns: Sequence[str],
        key: Sequence[str],
        parents: Sequence[tuple[Any, ...]],
        order: Sequence[Order],
    ) -> list[dict[str, Any]]:
        with self._db() as db:
            return select_children(db, table, columns, key, parents, order)

    def file(self, key: str, build: Callable[[], bytes]) -> bytes:
        """Bulk downloads are built once per world and kept: in memory, and in `files_dir` for the next process
        (`key` names everything the bytes depend on besides the world). The build runs outside the lock (it
        queries the store itself, and other requests must not wait for it)."""
        with self._lock:
            cached = self._files.get(key)
        if cached is not None:
            return cached
        cached = self._on_disk(f"{key}.bin", build)
        with self._lock:
            return self._files.setdefault(key, cached)

    def _on_disk(self, name: str, build: Callable[[], bytes]) -> bytes:
        """The bytes kept in `files_dir` under `name`, built and written there first if missing (built every time
        without `files_dir`)."""
        path = self.files_dir / name if self.files_dir is not None else None
        if path is not None and path.is_file():
            return path.read_bytes()
        made = build()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
            tmp.write_bytes(made)
            os.replace(tmp, path)  # atomic: another process reads a whole file or none
        return made
