"""Sub-lists of served rows (`x-kopa.nested`): each level filled from its child table with one query for all
parents of the page, to any depth."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kopa_gen.language.kopa import Nested, Order
from kopa_gen.language.nested import columns as item_columns

Row = dict[str, Any]


class ChildReader(Protocol):
    """What the world store and the episode store both offer for sub-lists."""

    def children(
        self,
        table: str,
        columns: Sequence[str],
        key: Sequence[str],
        parents: Sequence[tuple[Any, ...]],
        order: Sequence[Order],
    ) -> list[Row]: ...


def _link(values: Sequence[Any]) -> tuple[str, ...] | None:
    """A key compared as text: a view may give the parent's code as an integer and the child's as a string."""
    return None if any(v is None for v in values) else tuple(str(v) for v in values)


def with_sublists(
    reader: Callable[[str], ChildReader],
    props: Mapping[str, Any],
    nested: Sequence[Nested],
    rows: Sequence[Row],
    params: Mapping[str, str] | None = None,
) -> list[Row]:
    """`rows` (as selected, untyped) with every declared sub-list filled. `props` are the parent's wire properties
    (an operation's `row_props`); `reader` gives the store that holds a table; `params` (the request's) select
    items where a sub-list declares `filters`."""
    out = [dict(row) for row in rows]
    for entry in nested:
        child_cols = list(entry.key)
        parent_cols = [entry.key[c] for c in child_cols]
        parents: dict[tuple[str, ...], tuple[Any, ...]] = {}
        for row in out:
            values = tuple(row.get(c) for c in parent_cols)
            link = _link(values)
            if link is not None:
                parents.setdefault(link, values)
        item_props: Mapping[str, Any] = props[entry.field]["items"]["properties"]
        wanted = item_columns(item_props, entry.nested)
        columns = [*wanted, *(c for c in child_cols if c not in wanted)]
        found = reader(entry.table).children(
            entry.table, columns, child_cols, list(parents.values()), entry.order
        )
        found = [child for child in found if _kept(child, entry, params or {})]
        found = with_sublists(reader, item_props, entry.nested, found, params) if entry.nested else found
        groups: dict[tuple[str, ...] | None, list[Row]] = {}
        for child in found:
            groups.setdefault(_link([child[c] for c in child_cols]), []).append(child)
        for row in out:
            link = _link([row.get(c) for c in parent_cols])
            row[entry.field] = groups.get(link, []) if link is not None else []
    return out


def _kept(child: Row, entry: Nested, params: Mapping[str, str]) -> bool:
    """Whether an item passes the sub-list's filters (equality, compared as text; an absent parameter keeps all)."""
    for f in entry.filters:
        value = params.get(f.param)
        if value not in (None, "") and str(child.get(f.column)) != value:
            return False
    return True
