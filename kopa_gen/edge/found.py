"""What the world holds, asked of the sandbox's database before a call is made: does any row carry this value in
the column a tool filters on? EDGE Phase B builds its chains against the sandbox, so it can ask first instead of
spending a call (and one of a hop's tries) on an edge that will come back empty: most of the world's companies
have no filing of most kinds, and a walk that draws its edges blindly dies at its first hop. Only an equality
filter is asked about; anything else is unknown and tried as before."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable

from kopa_gen.project import Project


class Found:
    """Which of some values the world holds in the column a consumer filters on: one query per chunk of values,
    each value's first matching row is enough (the NEIS timetable views multiply into millions of rows; a
    DISTINCT over them took 26 s, this takes milliseconds)."""

    CHUNK = 900  # bound parameters per query (SQLite's default limit is 999)
    # values asked one query each first: a plain equality lets SQLite push the filter into a view's every branch
    # (the NEIS classroom view, a UNION ALL of joins: 35 µs a school, where the chunked form scans it, 1.8 s for
    # 433 schools); where one such query is slower than QUICK (the NEIS timetable views: 3 ms a school), the
    # rest go in chunks (0.3 s for the same schools). Either way the same values are found.
    FEW = 32
    QUICK = 0.0005  # seconds a value

    def __init__(self, project: Project, db: sqlite3.Connection) -> None:
        self.project = project
        self.db = db
        # (table, column) -> value -> held: the same schools and stops are asked again for every edge and shard
        self.known: dict[tuple[str, str], dict[str, bool]] = {}

    def column(self, tool: str, param: str, values: Iterable[str]) -> frozenset[str] | None:
        """Those of `values` in the column `tool`'s `param` selects by equality, or None where the parameter is
        not such a filter (a partial match, a local filter, a tool without a table)."""
        source = self.project.platform_of(tool).operation(tool).kopa.source
        if source is None:
            return None
        match = [f for f in source.filters if f.param == param and f.match == "eq"]
        if not match:
            return None
        table, column = source.table, match[0].column
        asked = {v for v in values if v}
        memo = self.known.setdefault((table, column), {})
        wanted = sorted(asked - memo.keys())
        try:
            got = self._held(table, column, wanted)
        except sqlite3.Error:
            return None
        memo.update((v, v in got) for v in wanted)
        return frozenset(v for v in asked if memo[v])

    def _held(self, table: str, column: str, wanted: list[str]) -> set[str]:
        got: set[str] = set()
        one = f'SELECT 1 FROM "{table}" WHERE "{column}" = ? LIMIT 1'
        start = time.perf_counter()
        for n, v in enumerate(wanted, 1):
            if self.db.execute(one, (v,)).fetchone():
                got.add(v)
            if n >= self.FEW and time.perf_counter() - start > self.QUICK * n:
                break
        else:
            return got
        rest = wanted[n:]
        for i in range(0, len(rest), self.CHUNK):
            part = rest[i : i + self.CHUNK]
            marks = ", ".join("(?)" for _ in part)
            got |= {
                v
                for (v,) in self.db.execute(
                    f"WITH v(x) AS (VALUES {marks}) SELECT x FROM v "
                    f'WHERE EXISTS (SELECT 1 FROM "{table}" WHERE "{column}" = v.x)',
                    part,
                )
            }
        return got

    def has(self, tool: str, param: str, value: str) -> bool | None:
        """Whether a row of `tool`'s table carries `value` where `param` selects (None: not an equality
        filter)."""
        found = self.column(tool, param, [value])
        return None if found is None else value in found
