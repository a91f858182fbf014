"""One record as one line of strict JSON (RFC 8259), whatever a model put into it.

A record logs what the model sent, including calls the session refused: an unpaired surrogate (not encodable as
UTF-8), NaN or Infinity (not JSON at all, though Python writes them), an integer too long for Python to write,
arguments nested past the encoder's stack. The common record is written as is; one that holds any of these is
written from a copy where each such value is replaced, in place, by a visible stand-in (U+FFFD for a surrogate,
"NaN" as text, a sentence saying what was cut), so no line is lost and every reader parses every line."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from kopa_gen.client.errors import redact
from kopa_gen.mcp.boundary import encodable

DEPTH = 64
"""Nesting kept in a written record: a value deeper than this (only a hostile call's arguments are) is replaced by
a sentence saying so."""
_BIG = 10**4000  # Python refuses to write an integer of more than 4,300 digits as text (sys.int_info)


def json_line(record: Any, secrets: Sequence[str] = ()) -> str:
    """`record` as one line of strict JSON (no newline at the end), every secret redacted."""
    try:
        text = json.dumps(record, ensure_ascii=False, default=str, allow_nan=False)
        text.encode("utf-8")
    except (ValueError, UnicodeEncodeError, RecursionError):
        text = json.dumps(strict(record), ensure_ascii=False, default=str, allow_nan=False)
    return redact(text, list(secrets))


def strict(value: Any) -> Any:
    """A copy of `value` that strict JSON can carry (see the module's docstring). Iterative: a value nested a
    hundred thousand levels deep is copied down to `DEPTH` without touching Python's recursion limit."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, parent, slot, depth = stack.pop()
        parent[slot] = _leaf(item, depth)
        out = parent[slot]
        if out is _BRANCH:
            if isinstance(item, Mapping):
                copy: dict[str, Any] = {}
                for key, inner in item.items():
                    name = encodable(key if isinstance(key, str) else str(key))
                    copy[name] = None
                    stack.append((inner, copy, name, depth + 1))
                parent[slot] = copy
            else:
                items: list[Any] = [None] * len(item)
                stack.extend((inner, items, i, depth + 1) for i, inner in enumerate(item))
                parent[slot] = items
    return root[0]


_BRANCH = object()


def _leaf(item: Any, depth: int) -> Any:
    """The stand-in of a scalar, or `_BRANCH` for a list or mapping to copy."""
    if isinstance(item, str):
        return encodable(item)
    if item is None or isinstance(item, bool):
        return item
    if isinstance(item, int):
        if -_BIG < item < _BIG:
            return item
        digits = int(item.bit_length() * math.log10(2)) + 1
        return f"(an integer of about {digits:,} digits, too long to write)"
    if isinstance(item, float):
        if math.isfinite(item):
            return item
        return "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
    if isinstance(item, Mapping | list | tuple):
        if depth >= DEPTH:
            return f"(nested deeper than {DEPTH} levels: cut here)"
        return _BRANCH
    return encodable(str(item))
