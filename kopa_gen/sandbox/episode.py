"""Per-episode mutable state (the agent's workspace): an in-memory SQLite database per sandbox, created from the
world spec's episode tables, changed only by write operations, hashed canonically for the ENVIRONMENT axis."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from kopa_gen.language.kopa import Filter, Order
from kopa_gen.language.world import EpisodeTable, column_sql
from kopa_gen.sandbox.store import count_rows, select_children, select_rows


class EpisodeStore:
    """Same read interface as WorldStore (count, select), plus writes and a state hash."""

    def __init__(self, tables: Sequence[EpisodeTable]) -> None:
        self.tables = {t.name: t for t in tables}
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        for t in tables:
            keys = ", ".join(f'"{k}"' for k in t.key)
            cols = ", ".join(column_sql(c) for c in t.columns)
            self.db.execute(f'CREATE TABLE "{t.name}" ({cols}, PRIMARY KEY ({keys}))')

    def __contains__(self, table: str) -> bool:
        return table in self.tables

    def count(self, table: str, filters: Sequence[Filter], values: Mapping[str, str]) -> int:
        return count_rows(self.db, table, filters, values)

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
        return select_rows(self.db, table, columns, filters, values, order, limit, offset)

    def children(
        self,
        table: str,
        columns: Sequence[str],
        key: Sequence[str],
        parents: Sequence[tuple[Any, ...]],
        order: Sequence[Order],
    ) -> list[dict[str, Any]]:
        return select_children(self.db, table, columns, key, parents, order)

    def full(self, table: str, key: Mapping[str, Any]) -> int | None:
        """The table's row limit when writing the row of `key` would add a row past it; None when the write fits
        (the row exists, or there is room)."""
        limit = self.tables[table].max_rows
        if limit is None:
            return None
        (count,) = self.db.execute(f'SELECT count(*) FROM "{table}"').fetchone()
        if count < limit:
            return None
        where = " AND ".join(f'"{k}" = ?' for k in key)
        exists = self.db.execute(f'SELECT 1 FROM "{table}" WHERE {where}', list(key.values())).fetchone()
        return None if exists else limit

    def upsert(self, table: str, row: Mapping[str, Any]) -> None:
        names = list(row)
        cols = ", ".join(f'"{n}"' for n in names)
        marks = ", ".join("?" for _ in names)
        self.db.execute(
            f'INSERT OR REPLACE INTO "{table}" ({cols}) VALUES ({marks})', [row[n] for n in names]
        )

    def delete(self, table: str, key: Mapping[str, Any]) -> int:
        where = " AND ".join(f'"{k}" = ?' for k in key)
        return self.db.execute(f'DELETE FROM "{table}" WHERE {where}', list(key.values())).rowcount

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        """Every episode table's stored columns (generated ones are derivable), rows sorted by key."""
        out: dict[str, list[dict[str, Any]]] = {}
        for name, t in sorted(self.tables.items()):
            cols = [c.name for c in t.columns if not c.generated]
            order = ", ".join(f'"{k}"' for k in t.key)
            listed = ", ".join(f'"{c}"' for c in cols)
            rows = self.db.execute(f'SELECT {listed} FROM "{name}" ORDER BY {order}')
            out[name] = [dict(zip(cols, r, strict=True)) for r in rows]
        return out

    def scoped(self, scope: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The rows a task's ENVIRONMENT check looks at, in scope order: each `{table, key}` with its row's stored
        columns (text normalized by `normalize_content`), or `row: null` when the row is absent."""
        out: list[dict[str, Any]] = []
        for entry in scope:
            table, key = str(entry["table"]), dict(entry["key"])
            t = self.tables.get(table)
            row: dict[str, Any] | None = None
            if t is not None:
                cols = [c.name for c in t.columns if not c.generated]
                where = " AND ".join(f'"{k}" = ?' for k in key)
                listed = ", ".join(f'"{c}"' for c in cols)
                found = self.db.execute(
                    f'SELECT {listed} FROM "{table}" WHERE {where}', list(key.values())
                ).fetchone()
                if found is not None:
                    row = {c: normalize_content(v) for c, v in zip(cols, found, strict=True)}
            out.append({"table": table, "key": key, "row": row})
        return out

    def state_hash(self, scope: Sequence[Mapping[str, Any]] | None = None) -> str:
        """SHA-256 of canonical JSON (sorted keys, no spaces, UTF-8): of the rows in `scope` (what a task's gold
        writes), or of the whole snapshot when no scope is given."""
        return digest(self.snapshot() if scope is None else self.scoped(scope))


def digest(state: Any) -> str:
    """SHA-256 of the canonical JSON of a state (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(state, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def normalize_content(value: Any) -> Any:
    """Text as a careful reader compares files: NFC, CR/CRLF line ends as LF, spaces at line ends and blank lines
    around the text dropped. Other values unchanged."""
    if not isinstance(value, str):
        return value
    text = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()
