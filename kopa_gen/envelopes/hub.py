"""The "OpenAPI hub" software (NEIS, National Assembly): `{SERVICE: [{head: [...]}, {row: [...]}]}`; errors and
no-data are a bare top-level `RESULT`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from kopa_gen.envelopes import register_family
from kopa_gen.envelopes.base import (
    JSON,
    EnvelopeError,
    Page,
    Parsed,
    Reply,
    Wire,
    add,
    add_row,
    as_int,
    dumps,
    loads,
    parse_xml,
    row_of,
    text,
    xml_bytes,
)
from kopa_gen.spec.kopa import Category, ResultCode
from kopa_gen.spec.platform import Operation, Platform


def service(op: Operation) -> str:
    """The envelope's top key is the service name, i.e. the last path segment."""
    return op.path.rstrip("/").rsplit("/", 1)[-1]


@register_family("hub")
class HubFamily:
    def render(
        self,
        platform: Platform,
        op: Operation,
        code: ResultCode,
        wire: Wire,
        page: Page | None = None,
        record: JSON | None = None,
    ) -> Reply:
        fmt = platform.kopa.format
        result = {"CODE": code.code, "MESSAGE": code.message}
        ok = code.category is Category.OK and page is not None
        name = service(op)
        if wire == "json":
            body: Any
            if ok and page is not None:
                head = [{"list_total_count": page.total}, {"RESULT": result}]
                body = {name: [{"head": head}, {"row": page.rows}]}
            else:
                body = {"RESULT": result}
            return Reply(200, dumps(body), fmt.json_content_type)
        if ok and page is not None:
            root = ET.Element(name)
            head_el = add(root, "head")
            add(head_el, "list_total_count", page.total)
            res = add(head_el, "RESULT")
            add(res, "CODE", code.code)
            add(res, "MESSAGE", code.message)
            for row in page.rows:
                add_row(root, "row", row)
        else:
            root = ET.Element("RESULT")
            add(root, "CODE", code.code)
            add(root, "MESSAGE", code.message)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        name = service(op)
        if wire == "json":
            data = loads(body)
            if isinstance(data, dict) and "RESULT" in data:
                return Parsed(str(data["RESULT"].get("CODE", "")), str(data["RESULT"].get("MESSAGE", "")))
            parts = data.get(name) if isinstance(data, dict) else None
            if not isinstance(parts, list) or not parts:
                raise EnvelopeError(f"no {name!r} key in hub answer: {body[:120]!r}")
            head = parts[0].get("head", [])
            total = as_int(head[0].get("list_total_count")) if head else None
            res = head[1].get("RESULT", {}) if len(head) > 1 else {}
            rows = parts[1].get("row", []) if len(parts) > 1 else []
            return Parsed(str(res.get("CODE", "")), str(res.get("MESSAGE", "")), rows=rows, total=total)
        root = parse_xml(body)
        if root.tag == "RESULT":
            return Parsed(text(root, "CODE"), text(root, "MESSAGE"))
        if root.tag != name:
            raise EnvelopeError(f"expected <{name}> in hub answer, got <{root.tag}>")
        return Parsed(
            text(root, "head/RESULT/CODE"),
            text(root, "head/RESULT/MESSAGE"),
            rows=[row_of(el) for el in root.findall("row")],
            total=as_int(text(root, "head/list_total_count", "")),
        )
