"""Envelope families: how each platform wraps rows, paging facts and result codes, in JSON and XML.

Each family is one module in this package: a class with `render` (what the sandbox sends) and `parse` (what the
client reads) side by side, so the two can never drift apart, registered under the names a spec's
`x-kopa.envelope` uses with `@register_family("name")`. Adding a family is adding a module; nothing else changes.

What a family is handed and must hand back:

- Rows and records arrive typed (`base.coerce`), sub-lists (`x-kopa.nested`) included as lists of typed items. In
  XML, lay a row out with `base.add_row(parent, tag, row, op.row_props)` (or `add_fields` into an element of the
  family's own) and read it back with `base.row_of(element, op.row_props)`: given the operation's `row_props`, both
  place sub-lists as OpenAPI lays out arrays (see `base.list_tags`), so parsed rows equal the JSON ones.
- Request echo (`x-kopa.echo`): `render` gets `echo`, the envelope field -> value of each repeated request
  parameter in declaration order (defaults applied). The family puts the fields where its real API does and, in
  `parse`, returns them as `Parsed.echo` (the fields to look for are `platform.echo(op)`). A family whose real API
  repeats nothing sets `echoes = False`, and the spec load refuses `echo` for it; one that places them sets
  `echoes = True`.
"""

from __future__ import annotations

from collections.abc import Callable

from kopa_gen.envelopes.base import Family, Page, Parsed, Reply, Wire
from kopa_gen.plugins import Registry

FAMILIES: Registry[Family] = Registry(
    "envelope family", __name__, "a new family is one module in kopa_gen/envelopes/ with @register_family"
)


def register_family(*names: str) -> Callable[[type], type]:
    """Register an envelope family class under one or more names (one instance serves them all)."""

    def wrap(cls: type) -> type:
        instance = cls()
        for name in names:
            FAMILIES.add(name, instance, f"{cls.__module__}.{cls.__qualname__}")
        return cls

    return wrap


def family_names() -> list[str]:
    """Every registered family name, sorted."""
    return FAMILIES.names()


def family(name: str) -> Family:
    """The family registered under `name`; UnknownName (a KeyError) naming the known ones otherwise."""
    return FAMILIES.get(name)


__all__ = [
    "FAMILIES",
    "Family",
    "Page",
    "Parsed",
    "Reply",
    "Wire",
    "family",
    "family_names",
    "register_family",
]
