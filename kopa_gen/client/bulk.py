"""Bulk files (x-kopa shape `file`, DART's CORPCODE.xml) as searchable rows: parsed once per distinct file and
indexed, so that a tool call finds its rows without testing each of the 110,000 rows against its filters."""

from __future__ import annotations

import bisect
import hashlib
import html
import io
import re
import threading
import xml.etree.ElementTree as ET
import zipfile
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from kopa_gen.client.errors import ToolArgumentError
from kopa_gen.envelopes.base import JSON, coerce, coerce_rows, rows_of
from kopa_gen.heap import collection_paused
from kopa_gen.language.kopa import Filter
from kopa_gen.language.platform import Operation

SEP = "\x00"
FOUND_CACHE = 256
"""Substring searches remembered per file (episodes of one task repeat the same searches)."""
"""Joins a column's values into one text that `contains` and `prefix` search at C speed."""


class BulkRows:
    """The rows of one bulk file, with lazily built indexes per filtered column: equal values (stripped, as
    `eq` compares) to row numbers, and the column's values joined by SEP for substring search."""

    def __init__(self, rows: Sequence[JSON]) -> None:
        self.rows = tuple(rows)
        self._equal: dict[str, dict[str, list[int]]] = {}
        self._text: dict[str, tuple[str, list[int]] | None] = {}
        self._found: OrderedDict[tuple[str, str, str], list[int]] = OrderedDict()
        self._lock = threading.Lock()

    def search(self, filters: Sequence[Filter], params: Mapping[str, Any]) -> list[JSON]:
        """The rows, in file order, that pass every filter with a value in `params` (as `matches`)."""
        active = [f for f in filters if params.get(f.param) not in (None, "")]
        if not active:
            return list(self.rows)
        first = min(active, key=lambda f: f.match != "eq")  # an equality index narrows most
        found = self._candidates(first, str(params[first.param]))
        if found is None:
            return [r for r in self.rows if matches(r, active, params)]
        rest = [f for f in active if f is not first]
        return [self.rows[i] for i in found if matches(self.rows[i], rest, params)]

    def prepare(self, filters: Sequence[Filter]) -> None:
        """Build the indexes these filters search."""
        for f in filters:
            if f.match == "eq":
                self._equal_index(f.column)
            elif f.match in ("contains", "prefix"):
                self._text_index(f.column)

    def _candidates(self, f: Filter, value: str) -> list[int] | None:
        """Row numbers (ascending) passing `f`; None when no index serves it."""
        if f.match == "eq":
            return self._equal_index(f.column).get(value.strip(), [])
        if f.match not in ("contains", "prefix") or SEP in value:
            return None
        key = (f.column, f.match, value)
        with self._lock:
            if key in self._found:
                self._found.move_to_end(key)
                return self._found[key]
        found = self._scan(f, value)
        if found is not None:
            with self._lock:
                self._found[key] = found
                if len(self._found) > FOUND_CACHE:
                    self._found.popitem(last=False)
        return found

    def _scan(self, f: Filter, value: str) -> list[int] | None:
        """Row numbers whose cell contains (or starts with) `value`: `str.find` over the joined column."""
        text = self._text_index(f.column)
        if text is None:
            return None
        blob, starts = text
        needle = SEP + value if f.match == "prefix" else value
        out: list[int] = []
        pos = blob.find(needle)
        while pos >= 0:
            line = bisect.bisect_right(starts, pos if f.match == "contains" else pos + 1) - 1
            out.append(line)
            if line + 1 >= len(starts):
                break
            pos = blob.find(needle, starts[line + 1] - (1 if f.match == "prefix" else 0))
        return out

    def _equal_index(self, column: str) -> dict[str, list[int]]:
        with self._lock:
            if column not in self._equal:
                index: dict[str, list[int]] = {}
                for i, row in enumerate(self.rows):
                    index.setdefault(str(row.get(column, "")).strip(), []).append(i)
                self._equal[column] = index
            return self._equal[column]

    def _text_index(self, column: str) -> tuple[str, list[int]] | None:
        """(SEP + values joined by SEP, start offset of each value); None if a value holds SEP itself."""
        with self._lock:
            if column not in self._text:
                cells = [str(row.get(column, "")) for row in self.rows]
                if any(SEP in c for c in cells):
                    self._text[column] = None
                else:
                    starts: list[int] = []
                    at = 1
                    for c in cells:
                        starts.append(at)
                        at += len(c) + 1
                    self._text[column] = (SEP + SEP.join(cells), starts)
            return self._text[column]


def matches(row: JSON, filters: Sequence[Filter], params: Mapping[str, Any]) -> bool:
    """Whether a row passes the tool's `local_filters` (an absent or empty parameter passes)."""
    for f in filters:
        value = params.get(f.param)
        if value is None or value == "":
            continue
        cell = str(row.get(f.column, ""))
        value = str(value)
        if f.match == "eq" and cell.strip() != value.strip():
            return False
        if f.match == "contains" and value not in cell:
            return False
        if f.match == "prefix" and not cell.startswith(value):
            return False
    return True


_PARSED: dict[tuple[str, str], BulkRows] = {}
_PARSED_LOCK = threading.Lock()


def parse_bulk_file(op: Operation, body: bytes) -> BulkRows:
    """Rows of a downloaded bulk file. Parsing is a pure function of the bytes, so a process parses (and indexes)
    each distinct file once (an episode per session would otherwise re-parse the same 110,000 rows)."""
    spec = op.kopa.file
    assert spec is not None
    key = (op.operation_id, hashlib.sha256(body).hexdigest())
    with _PARSED_LOCK:
        found = _PARSED.get(key)
    if found is not None:
        return found
    assert spec.member is not None
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        member = zf.read(spec.member)
    props = op.row_props
    with collection_paused():  # the parse 1.1 -> 0.7 s
        root = ET.fromstring(member)
        parsed = BulkRows(coerce_rows(props, rows_of(root.iter(spec.row_element), props)))
        del root
    parsed.prepare(
        op.kopa.local_filters
    )  # the first search would build them anyway; the download is slow already
    with _PARSED_LOCK:
        if len(_PARSED) >= 4 and key not in _PARSED:
            _PARSED.pop(next(iter(_PARSED)))
        return _PARSED.setdefault(key, parsed)


MEMBER_ARGS = ("member", "offset")
"""Tool arguments of a per-row download (`file.name_column`) that stay on this side: which member to read, from
which character."""
TAGS = re.compile(r"<[^>]*>")
SPACES = re.compile(r"[ \t\r\f\v]*\n[\s]*|[ \t\r\f\v]+")


def decoded(data: bytes) -> str:
    """A member's text: UTF-8, else EUC-KR (DART's documents say euc-kr in a meta tag while their bytes are
    mostly UTF-8; clients try both)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("euc-kr", errors="replace")


def plain(markup: str) -> str:
    """Markup without its tags and entities, one line per block, runs of blanks squeezed."""
    text = html.unescape(TAGS.sub(" ", markup))
    return SPACES.sub(lambda m: "\n" if "\n" in m.group(0) else " ", text).strip()


def member_rows(op: Operation, body: bytes, params: Mapping[str, Any]) -> list[JSON]:
    """The members of a per-row download as tool rows: every member's name, and the text of one (`member`, else
    the first: the main document) from `offset`, at most `file.text_chars` characters, with a note saying where it
    was cut and how to read on. The other members' `content` says how long each is and how to read it."""
    spec = op.kopa.file
    assert spec is not None and spec.name_column is not None and spec.content_column is not None
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        members = [(info.filename, decoded(zf.read(info))) for info in zf.infolist()]
    names = [name for name, _ in members]
    wanted = str(params.get("member") or names[0])
    if wanted not in names:
        raise ToolArgumentError(f"member: {wanted!r} is not in this file; its members are {', '.join(names)}")
    offset = int(params.get("offset") or 0)
    rows: list[JSON] = []
    for name, content in members:
        text = plain(content) if spec.text == "plain" else content
        if name != wanted:
            shown = f"[{len(text):,}자. 읽으려면 member={name}]"
        elif offset >= len(text) and text:
            raise ToolArgumentError(f"offset: {offset} is past the end of {name} ({len(text):,} characters)")
        else:
            end = min(len(text), offset + spec.text_chars)
            shown = text[offset:end]
            if offset or end < len(text):
                more = f" 이어 읽으려면 member={name}, offset={end}." if end < len(text) else ""
                shown += f"\n[전체 {len(text):,}자 중 {offset:,}–{end:,}자를 보였습니다.{more}]"
        rows.append({spec.name_column: name, spec.content_column: shown})
    return [coerce(op.row_props, r) for r in rows]
