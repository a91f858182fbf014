"""Nested records: checks of `x-kopa.nested` against the row schema (at spec load) and against the world (with the
project), and the resolved item schemas the envelopes and the client type nested rows by."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kopa_gen.language.diagnostics import Diagnostic
from kopa_gen.language.kopa import Nested
from kopa_gen.language.source import Loc

JSON = dict[str, Any]
Diag = Callable[[Loc, str], Diagnostic]
Resolve = Callable[[str], Any]


def is_list(schema: Any) -> bool:
    """Whether a (resolved) property schema is an array: a sub-list, never a column."""
    return isinstance(schema, dict) and schema.get("type") == "array"


def _deref(resolve: Resolve, schema: Any) -> Any:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return resolve(schema["$ref"])
    return schema


def wire_props(
    resolve: Resolve,
    props: Mapping[str, Any],
    nested: Sequence[Nested],
    owner: str,
    loc: Loc,
    owner_loc: Loc,
    diag: Diag,
    out: list[Diagnostic],
) -> JSON:
    """`props` with the item schema of every declared sub-list resolved, to any depth; what the envelopes and the
    client type nested rows by. Records a diagnostic (into `out`) for a sub-list that is not an array of objects,
    a key naming no parent property, and an array property nothing fills. `owner` names the schema for messages,
    `loc` is the place of the `nested` list, `owner_loc` where the schema is bound."""
    declared = {n.field for n in nested}
    for name, schema in props.items():
        if is_list(_deref(resolve, schema)) and name not in declared:
            out.append(
                diag(
                    owner_loc,
                    f"property {name!r} of {owner} is an array, which no x-kopa.nested entry fills; add "
                    f"`nested: [{{field: {name}, table: <world table>, key: {{<child column>: <parent property>}}}}]` "
                    "or give it a scalar type",
                )
            )
    resolved: JSON = dict(props)
    seen: set[str] = set()
    for i, entry in enumerate(nested):
        here: Loc = (*loc, i)
        if entry.field in seen:
            out.append(diag((*here, "field"), f"sub-list {entry.field!r} is declared twice; remove one"))
            continue
        seen.add(entry.field)
        if entry.field not in props:
            out.append(
                diag(
                    (*here, "field"),
                    f"{entry.field!r} is not a property of {owner}; add it as `{entry.field}: {{type: array, "
                    "items: {type: object, properties: ...}}` or name one of its array properties",
                )
            )
            continue
        schema = _deref(resolve, props[entry.field])
        items = _deref(resolve, schema.get("items")) if is_list(schema) else None
        item_props = items.get("properties") if isinstance(items, dict) else None
        if not isinstance(item_props, dict) or not item_props:
            out.append(
                diag(
                    (*here, "field"),
                    f"property {entry.field!r} of {owner} is not an array of objects; give it `type: array` and "
                    "`items:` an object schema with properties (or a $ref to one)",
                )
            )
            continue
        assert isinstance(items, dict)
        for child, parent in entry.key.items():
            if parent not in props or parent in declared:
                out.append(
                    diag(
                        (*here, "key", child),
                        f"parent property {parent!r} is not a scalar property of {owner}; link to one of its "
                        "properties (mark it writeOnly to keep it off the wire)",
                    )
                )
        inner = wire_props(
            resolve,
            item_props,
            entry.nested,
            f"the items of {entry.field}",
            (*here, "nested"),
            (*here, "field"),
            diag,
            out,
        )
        resolved[entry.field] = {**schema, "items": {**items, "properties": inner}}
    return resolved


def check_world(
    props: Mapping[str, Any],
    nested: Sequence[Nested],
    loc: Loc,
    columns: Mapping[str, Sequence[str]],
    diag: Diag,
    out: list[Diagnostic],
) -> None:
    """Every sub-list's table exists in the world and has the key, order and item columns it is read by.
    `props` are the resolved (wire) properties of the parent, `loc` the place of its `nested` list."""
    for i, entry in enumerate(nested):
        here: Loc = (*loc, i)
        schema = props.get(entry.field)
        if not is_list(schema):
            continue  # reported at load
        assert isinstance(schema, dict)
        item_props: JSON = schema["items"]["properties"]
        if entry.table not in columns:
            out.append(
                diag(
                    (*here, "table"),
                    f"world has no table or view {entry.table!r}; define it under specs/world/",
                )
            )
            continue
        have = set(columns[entry.table])
        for child in entry.key:
            if child not in have:
                out.append(
                    diag(
                        (*here, "key", child),
                        f"key column {child!r} is not a column of {entry.table!r} "
                        f"(columns: {', '.join(columns[entry.table])})",
                    )
                )
        for j, order in enumerate(entry.order):
            if order.column not in have:
                out.append(
                    diag(
                        (*here, "order", j, "column"),
                        f"order column {order.column!r} is not a column of {entry.table!r} "
                        f"(columns: {', '.join(columns[entry.table])})",
                    )
                )
        sub = {n.field for n in entry.nested}
        missing = [name for name in item_props if name not in sub and name not in have]
        if missing:
            out.append(
                diag(
                    (*here, "table"),
                    f"world view {entry.table!r} lacks columns {', '.join(missing)} of the items of "
                    f"{entry.field}; add them to the view or remove them from the item schema",
                )
            )
        check_world(item_props, entry.nested, (*here, "nested"), columns, diag, out)


def columns(props: Mapping[str, Any], nested: Sequence[Nested]) -> list[str]:
    """The properties of a row that are columns of its table: all but its sub-lists."""
    sub = {n.field for n in nested}
    return [name for name in props if name not in sub]
