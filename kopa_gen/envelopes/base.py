"""Shared types of the envelope families and small XML/JSON helpers."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from kopa_gen.spec.kopa import ResultCode
from kopa_gen.spec.platform import Operation, Platform

Wire = Literal["json", "xml"]
JSON = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """An HTTP answer as the sandbox sends it."""

    status: int
    body: bytes
    content_type: str


@dataclass(frozen=True)
class Page:
    """Rows the sandbox found, already typed by the row schema, with the paging facts."""

    rows: list[JSON]
    total: int
    page: int
    size: int


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


class EnvelopeError(Exception):
    """The body is not in the platform's envelope at all (HTML error page, truncated body, wrong service)."""


class Family(Protocol):
    def render(
        self,
        platform: Platform,
        op: Operation,
        code: ResultCode,
        wire: Wire,
        page: Page | None = None,
        record: JSON | None = None,
    ) -> Reply: ...

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed: ...


def coerce(props: Mapping[str, Any], row: Mapping[str, Any]) -> JSON:
    """Type a row as the real API types it: strings unless the row schema says integer/number.
    None becomes the empty string (what the real services send for a missing value). Properties marked
    `writeOnly` are filter-only columns of the world and are never sent."""
    out: JSON = {}
    for name, schema in props.items():
        if schema.get("writeOnly"):
            continue
        value = row.get(name)
        kind = schema.get("type", "string")
        if kind == "integer":
            out[name] = int(value) if value not in (None, "") else None
        elif kind == "number":
            out[name] = float(value) if value not in (None, "") else None
        elif value is None:
            out[name] = ""
        else:
            out[name] = str(value)
    return out


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def loads(body: bytes) -> Any:
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


def add_row(parent: ET.Element, tag: str, row: Mapping[str, Any]) -> None:
    el = ET.SubElement(parent, tag)
    for key, value in row.items():
        add(el, key, "" if value is None else value)


def parse_xml(body: bytes) -> ET.Element:
    try:
        return ET.fromstring(body)
    except ET.ParseError as exc:
        raise EnvelopeError(f"not XML: {body[:120]!r}") from exc


def row_of(el: ET.Element) -> dict[str, str]:
    return {child.tag: (child.text or "") for child in el}


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
