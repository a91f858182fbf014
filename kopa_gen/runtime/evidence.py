"""What a call's result shows of the rows behind it: a row's identity across queries and the rows a page holds.
The gold run records them as a fixture's evidence and ACTION credits an agent call by them
(kopa_gen/evaluate/action.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import orjson


def covered_rows(result: Any) -> tuple[int, int] | None:
    """The rows [start, end) a list result's page holds, from its page, page size and total; None otherwise."""
    if not isinstance(result, Mapping):
        return None
    page, size, total = result.get("page"), result.get("page_size"), result.get("total_count")
    if not (isinstance(page, int) and isinstance(size, int) and isinstance(total, int)):
        return None
    start = (page - 1) * size
    return min(start, total), min(start + size, total)


def row_key(row: Any, ignore: Sequence[str] = ()) -> str:
    """A row's identity across queries: the digest of its canonical JSON (the same row returned by a filtered,
    sorted or larger page has the same key), without the fields its envelope numbers by position (`ignore`)."""
    if ignore and isinstance(row, Mapping):
        row = {k: v for k, v in row.items() if k not in ignore}
    try:
        data = orjson.dumps(row, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        data = json.dumps(row, ensure_ascii=False, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:16]
