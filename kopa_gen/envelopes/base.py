"""Shared types of the envelope families and small XML/JSON helpers."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol

import orjson

from kopa_gen.language.kopa import ResultCode
from kopa_gen.language.platform import Operation, Platform

Wire = Literal["json", "xml"]
JSON = dict[str, Any]
NO_ECHO: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Reply:
    """An HTTP answer as the sandbox sends it."""

    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()
    """Other response headers (e.g. a download's Content-Disposition)."""


@dataclass(frozen=True)
class Page:
    """Rows the sandbox found, already typed by the row schema, with the paging facts."""

    rows: list[JSON]
    total: int
    page: int
    size: int

    @staticmethod
    def of(page: Page | None, record: JSON | None) -> Page:
        """What an answer lays out as rows: the page, or the record as a page of one (none without either)."""
        if page is not None:
            return page
        rows = [record] if record is not None else []
        return Page(rows, len(rows), 1, len(rows))


@dataclass(frozen=True)
class Parsed:
    """What a client reads out of any envelope."""

    code: str
    message: str
    rows: list[JSON] = field(default_factory=list)
    total: int | None = None
    page: int | None = None
    size: int | None = None
    record: JSON | None = None
    echo: dict[str, str] = field(default_factory=dict)
    """The request parameters the envelope repeated (`x-kopa.echo`), by envelope field."""

    def shaped(self, shape: str) -> Parsed:
        """For a `record` operation, the first row as the record (families that always send rows)."""
        if shape != "record":
            return self
        return Parsed(self.code, self.message, record=self.rows[0] if self.rows else None, echo=self.echo)


class EnvelopeError(Exception):
    """The body is not in the platform's envelope at all (HTML error page, truncated body, wrong service)."""


class Family(Protocol):
    echoes: bool
    scaffold: str
    """YAML that `kopa-gen new platform ID --family NAME` starts a platform of this family from: `server`, `path`,
    `key` (the key parameter), `params` (format and paging), `response` (the envelope's JSON Schema; `__ROW__` is
    the row schema's name) and the platform-level `x-kopa` (`__ID__` the platform id, `__ENV__` its key variable)."""
    """Whether the family places echoed request parameters (`x-kopa.echo`); the spec load refuses echo otherwise."""

    def render(
        self,
        platform: Platform,
        op: Operation,
        code: ResultCode,
        wire: Wire,
        page: Page | None = None,
        record: JSON | None = None,
        echo: Mapping[str, str] = NO_ECHO,
    ) -> Reply: ...

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed: ...


def positional(family: Family, op: Operation) -> list[str]:
    """The row fields a family fills with the row's position in the answer (law.go.kr's `id`): a row's identity
    across queries leaves them out. A family declares them with a `positional(op)` method; most have none."""
    declared = getattr(family, "positional", None)
    return list(declared(op)) if callable(declared) else []


def coerce(props: Mapping[str, Any], row: Mapping[str, Any]) -> JSON:
    """Type a row as the real API types it: strings unless the row schema says integer/number.
    None becomes the empty string (what the real services send for a missing value). Properties marked
    `writeOnly` are filter-only columns of the world and are never sent. A sub-list (an array property; `props`
    are an operation's `row_props`) is a list of items typed the same way by the item schema."""
    return row_type(props)(row)


def coerce_rows(props: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> list[JSON]:
    """`coerce` of every row, except that a row already typed (the schema's fields, in its order, each of its
    type, as a sandbox's JSON answer parses) comes back as it is, not copied: pass rows nothing else holds."""
    return row_type(props).rows(rows)


@dataclass(frozen=True)
class RowType:
    """How rows of one row schema are typed (see `coerce`), worked out once per schema: rows are typed for every
    row of every answer, twice (sandbox and client). A row that needs no change is recognised at C speed, and
    so is one that needs only `str` on each value (a schema of strings); the others are typed field by field."""

    names: tuple[str, ...]
    """The sent properties, in schema order."""
    kinds: tuple[str, ...]
    items: tuple[Mapping[str, Any], ...]
    """Item properties of each array property (empty for the others)."""
    strings: bool
    """Every sent property is typed as text (not integer, number or array)."""
    plain: tuple[type, ...] | None
    """The Python type of each field of a typed row with no missing value (None: an array field, no shortcut)."""
    floats: bool
    """A typed row may hold a float (a number property, here or in an item schema)."""

    def __call__(self, row: Mapping[str, Any]) -> JSON:
        return self.from_values(tuple(map(row.get, self.names)))

    def from_values(self, values: Sequence[Any]) -> JSON:
        """The typed row whose values, in `names` order, are `values` (a database row of these columns)."""
        if self.strings:
            if None not in values:  # str() leaves a str as it is and types the rest as the slow path does
                return dict(zip(self.names, map(str, values), strict=False))  # one value per name
        elif tuple(map(type, values)) == self.plain:
            return dict(zip(self.names, values, strict=False))
        return {
            name: _typed_value(kind, item_props, value)
            for name, kind, item_props, value in zip(self.names, self.kinds, self.items, values, strict=True)
        }

    def rows(self, rows: Iterable[Mapping[str, Any]]) -> list[JSON]:
        """Each row typed; one already typed as a dict comes back as it is (see `coerce_rows`)."""
        names, plain = self.names, self.plain
        return [
            row
            if type(row) is dict and tuple(row) == names and tuple(map(type, row.values())) == plain
            else self(row)
            for row in rows
        ]


def _typed_value(kind: str, item_props: Mapping[str, Any], value: Any) -> Any:
    if kind == "array":
        items = [value] if isinstance(value, dict) else value if isinstance(value, list) else []
        typed = row_type(item_props)
        return [typed(item) for item in items if isinstance(item, Mapping)]
    if kind == "integer":
        return int(value) if value not in (None, "") else None
    if kind == "number":
        return float(value) if value not in (None, "") else None
    return "" if value is None else value if type(value) is str else str(value)


_PLAIN = {"integer": int, "number": float}
_ROW_TYPES: dict[int, tuple[Mapping[str, Any], RowType]] = {}


def row_type(props: Mapping[str, Any]) -> RowType:
    """The `RowType` of a row schema's properties (an operation's `row_props`), made at its first use."""
    hit = _ROW_TYPES.get(id(props))
    if hit is not None and hit[0] is props:
        return hit[1]
    sent = [(name, schema) for name, schema in props.items() if not schema.get("writeOnly")]
    kinds = tuple(schema.get("type", "string") for _, schema in sent)
    items = tuple(schema.get("items", {}).get("properties", {}) for _, schema in sent)
    typed = RowType(
        names=tuple(name for name, _ in sent),
        kinds=kinds,
        items=items,
        strings=all(kind not in ("integer", "number", "array") for kind in kinds),
        plain=None if "array" in kinds else tuple(_PLAIN.get(kind, str) for kind in kinds),
        floats="number" in kinds
        or any(row_type(item).floats for kind, item in zip(kinds, items, strict=True) if kind == "array"),
    )
    if len(_ROW_TYPES) >= 4096:  # schemas made on the fly (tests, inline specs) must not pile up
        _ROW_TYPES.clear()
    _ROW_TYPES[id(props)] = (props, typed)  # the entry holds `props`, so its id is not reused while cached
    return typed


def dumps(data: Any, op: Operation | None = None) -> bytes:
    """Compact UTF-8 JSON, byte for byte what `json.dumps(data, ensure_ascii=False, separators=(",", ":"))`
    writes. orjson writes the same bytes about ten times faster, except for floats (it writes 1e-05 as 0.00001
    and 1e+16 as 1e16) and integers past 64 bits (it refuses them): it is used for an answer of an operation `op`
    whose typed rows hold no float (`RowType.floats`; the envelopes add none)."""
    if op is not None and not row_type(op.row_props).floats:
        try:
            return orjson.dumps(data)
        except TypeError:  # an integer past 64 bits
            pass
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def loads(body: bytes) -> Any:
    """JSON as `json.loads` reads it. orjson reads it about twice as fast and gives the same values, except that
    it turns an integer literal past 64 bits into a float (no Korean public API sends one) and refuses what is not
    strict JSON (NaN, a byte-order mark, a lone surrogate), which the standard library then reads."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(body)
    except ValueError as exc:
        raise EnvelopeError(f"not JSON: {body[:120]!r}") from exc


def xml_bytes(root: ET.Element) -> bytes:
    text = ET.tostring(root, encoding="unicode", short_empty_elements=False)
    return ('<?xml version="1.0" encoding="UTF-8"?>' + text).encode("utf-8")


def add(parent: ET.Element, tag: str, text: Any = None) -> ET.Element:
    el = ET.SubElement(parent, tag)
    if text is not None:
        el.text = str(text)
    return el


def _xml_name(schema: Mapping[str, Any], default: str) -> str:
    xml = schema.get("xml")
    return str(xml["name"]) if isinstance(xml, Mapping) and xml.get("name") else default


def is_attribute(schema: Any) -> bool:
    """Whether a property is laid out as an XML attribute of its row's element (OpenAPI `xml: {attribute: true}`,
    law.go.kr's `<law id="1">`)."""
    xml = schema.get("xml") if isinstance(schema, Mapping) else None
    return isinstance(xml, Mapping) and bool(xml.get("attribute"))


def list_tags(name: str, schema: Mapping[str, Any]) -> tuple[str | None, str]:
    """(wrapper, item) element names of a sub-list in XML, as OpenAPI lays arrays out: each item an element
    named by the item schema's `xml.name`, else the property name; wrapped in one element (the property's
    `xml.name`, else its name) only when the property says `xml: {wrapped: true}`."""
    xml = schema.get("xml")
    wrapped = isinstance(xml, Mapping) and bool(xml.get("wrapped"))
    item = _xml_name(schema.get("items") or {}, name)
    return (_xml_name(schema, name) if wrapped else None), item


def add_row(
    parent: ET.Element, tag: str, row: Mapping[str, Any], props: Mapping[str, Any] | None = None
) -> None:
    """One row as an element of one child element per field; a sub-list (given the operation's `row_props`) as
    repeated child elements (see `list_tags`), each item laid out the same way."""
    add_fields(ET.SubElement(parent, tag), row, props)


def add_fields(el: ET.Element, row: Mapping[str, Any], props: Mapping[str, Any] | None = None) -> None:
    """The fields of a row as child elements of `el` (see `add_row`)."""
    for key, value in row.items():
        schema = (props or {}).get(key) or {}
        if is_attribute(schema):
            el.set(_xml_name(schema, key), "" if value is None else str(value))
        elif isinstance(value, list):
            wrapper, item = list_tags(key, schema)
            holder = add(el, wrapper) if wrapper is not None else el
            item_props = (schema.get("items") or {}).get("properties")
            for sub in value:
                add_row(holder, item, sub, item_props)
        else:
            add(el, key, "" if value is None else value)


def parse_xml(body: bytes) -> ET.Element:
    try:
        return ET.fromstring(body)
    except ET.ParseError as exc:
        raise EnvelopeError(f"not XML: {body[:120]!r}") from exc


def row_of(el: ET.Element, props: Mapping[str, Any] | None = None) -> JSON:
    """The fields of a row element (text of each child); given the operation's `row_props`, its sub-lists too,
    read back as `add_row` lays them out (absent elements read as an empty list)."""
    return RowReader.of(props)(el)


def rows_of(elements: Iterable[ET.Element], props: Mapping[str, Any] | None = None) -> list[JSON]:
    """`row_of` of each element, the layout worked out once (a bulk file holds 110,000 rows)."""
    read = RowReader.of(props)
    return [read(el) for el in elements]


@dataclass(frozen=True)
class RowReader:
    """How a row element of one row schema is read back (see `row_of`)."""

    attributes: tuple[tuple[str, str], ...]
    """(field, attribute name) of the fields laid out as attributes."""
    lists: tuple[tuple[str, str | None, str, RowReader], ...]
    """(field, wrapper element or None, item element, how an item is read) of the sub-lists."""
    taken: frozenset[str]
    """Child element names that hold sub-lists, not fields."""

    @classmethod
    def of(cls, props: Mapping[str, Any] | None) -> RowReader:
        props = props or {}
        lists = []
        for name, schema in props.items():
            if isinstance(schema, Mapping) and schema.get("type") == "array":
                wrapper, item = list_tags(name, schema)
                items = cls.of((schema.get("items") or {}).get("properties"))
                lists.append((name, wrapper, item, items))
        attributes = tuple((name, _xml_name(s, name)) for name, s in props.items() if is_attribute(s))
        taken = frozenset(wrapper if wrapper is not None else item for _, wrapper, item, _ in lists)
        return cls(attributes, tuple(lists), taken)

    def __call__(self, el: ET.Element) -> JSON:
        out: JSON = {name: el.get(attribute, "") for name, attribute in self.attributes}
        if not self.taken:
            out.update({child.tag: (child.text or "") for child in el})
            return out
        out.update({child.tag: (child.text or "") for child in el if child.tag not in self.taken})
        for name, wrapper, item, read in self.lists:
            holder = next((c for c in el if c.tag == wrapper), None) if wrapper is not None else el
            out[name] = [] if holder is None else [read(c) for c in holder if c.tag == item]
        return out


def text(el: ET.Element | None, path: str, default: str = "") -> str:
    if el is None:
        return default
    found = el.find(path)
    return default if found is None or found.text is None else found.text


def as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
