"""A tool result as the model reads it, within the tool-result budget.

Rendering is compact: a list result is one header line (the result's own fields: code, message, total_count,
page, page_size, then `rows_on_page`, `same_in_every_row` for the fields every row of the page shares, and
`columns`) and one JSON array per row in the order of `columns`, instead of a key per value; a record, or rows
that are not objects, stay compact JSON. Values keep their JSON types; nothing is dropped.

The budget (kopa_gen.language.settings.TOOL_RESULT_CHARS by default) is counted in characters, as verl's
`max_tool_response_length` counts them. A result over it is cut at a row boundary, and the last line says so:
which rows are shown, how many the page has, and how to ask for the rest (a smaller page through the
platform's size parameter, then the next page). Text with no rows to cut at (a long record) is cut at the budget
with the same kind of note. Nothing is cut silently and the text never exceeds the budget, so verl's own cut
never fires.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

CUT_MARK = "[cut to fit "
"""How the note of a cut result begins (what the export and the preflight look for)."""


@dataclass(frozen=True)
class Rendering:
    """How a session renders results for its model: compact, cut at `budget` characters (None: never cut)."""

    budget: int | None = None


@dataclass(frozen=True)
class PageParams:
    """The tool's paging argument names (the platform's x-kopa.paging), for the note that says how to page on."""

    page: str
    size: str


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII as is (orjson; the standard library for what orjson refuses, such as an integer
    past 64 bits)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def render_result(data: dict[str, Any], budget: int | None = None, paging: PageParams | None = None) -> str:
    """`data` (a tool's structured result) as the model reads it, at most `budget` characters (None: no cut)."""
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        if isinstance(rows, list) and rows:
            head = {k: v for k, v in data.items() if k != "rows"} | {"rows_on_page": len(rows)}
            return _fit([dumps(head)], [dumps(r) for r in rows], data, budget, paging)
        return _cut_text(dumps(data), budget)
    columns = _columns(rows)
    first = rows[0]
    same = (
        {c: first[c] for c in columns if all(c in row and row[c] == first[c] for row in rows)}
        if len(rows) > 1
        else {}
    )
    columns = [c for c in columns if c not in same]
    head = {k: v for k, v in data.items() if k != "rows"} | {"rows_on_page": len(rows)}
    if same:
        head["same_in_every_row"] = same
    head["columns"] = columns
    lines = [dumps([row.get(c) for c in columns]) for row in rows]
    return _fit([dumps(head)], lines, data, budget, paging)


def _fit(
    head: list[str], lines: list[str], data: dict[str, Any], budget: int | None, paging: PageParams | None
) -> str:
    full = "\n".join([*head, *lines])
    if budget is None or len(full) <= budget:
        return full
    used = len(head[0])
    shown = 0
    while True:  # the longest prefix of rows that fits together with its note
        note = _note(shown, len(lines), data, budget, paging)
        nxt = used + 1 + len(lines[shown]) if shown < len(lines) else None
        if nxt is None or nxt + 1 + len(_note(shown + 1, len(lines), data, budget, paging)) > budget:
            break
        used, shown = nxt, shown + 1
    text = "\n".join([*head, *lines[:shown], note])
    if len(text) > budget:  # even the header and the note do not fit: cut the characters, said so
        return _cut_text(full, budget)
    return text


def _note(shown: int, on_page: int, data: dict[str, Any], budget: int, paging: PageParams | None) -> str:
    page, size, total = data.get("page"), data.get("page_size"), data.get("total_count")
    offset = (page - 1) * size if isinstance(page, int) and isinstance(size, int) and page >= 1 else None
    what = f"rows 1-{shown} of the {on_page} on this page are shown" if shown else "no row fits"
    if offset is not None and shown:
        overall = f" (rows {offset + 1}-{offset + shown}"
        overall += f" of {total:,} in all)" if isinstance(total, int) else ")"
        what += overall
    if paging is not None and shown:
        if offset is not None and offset % shown == 0:
            ask = f"ask for {paging.size}={shown} with {paging.page}={offset // shown + 2}"
        else:
            ask = f"ask for pages of at most {shown} rows ({paging.size}) and page on with {paging.page}"
        how = f"For the rest, {ask}, or narrow the query."
    elif paging is not None:
        how = f"Ask for a smaller page ({paging.size}) or narrow the query."
    else:
        how = "Narrow the query to get fewer rows."
    return f"{CUT_MARK}{budget:,} characters: {what}. {how}]"


def _cut_text(text: str, budget: int | None) -> str:
    if budget is None or len(text) <= budget:
        return text
    note = f"\n{CUT_MARK}{budget:,} characters: the first {{}} of {len(text):,} characters are shown.]"
    keep = max(0, budget - len(note.format(budget)))
    return text[:keep] + note.format(f"{keep:,}")
