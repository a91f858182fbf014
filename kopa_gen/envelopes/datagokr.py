"""data.go.kr standard: `response.header.resultCode/resultMsg`, `response.body.items.item`, numeric paging facts.

The one-item quirk is reproduced: in JSON `items.item` is a list for 2+ rows, a bare object for exactly one row,
and `items` is the empty string for none (or `item: []` where the operation says `empty_items: list`).
"""

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


def _items(op: Operation, rows: list[JSON]) -> Any:
    if not rows:
        return {"item": []} if op.kopa.empty_items == "list" else ""
    return {"item": rows[0] if len(rows) == 1 else rows}


def _unitems(items: Any) -> list[JSON]:
    if isinstance(items, dict):
        item = items.get("item")
        if isinstance(item, list):
            return item
        if isinstance(item, dict):
            return [item]
        return []
    return []


@register_family("datagokr")
class DataGoKrFamily:
    def render(
        self,
        platform: Platform,
        op: Operation,
        code: ResultCode,
        wire: Wire,
        page: Page | None = None,
        record: JSON | None = None,
    ) -> Reply:
        header = {"resultCode": code.code, "resultMsg": code.message}
        fmt = platform.kopa.format
        ok = code.category in (Category.OK, Category.NO_DATA) and page is not None
        if wire == "json":
            response: JSON = {"header": header}
            if ok and page is not None:
                response["body"] = {
                    "items": _items(op, page.rows),
                    "numOfRows": page.size,
                    "pageNo": page.page,
                    "totalCount": page.total,
                }
            return Reply(200, dumps({"response": response}), fmt.json_content_type)
        root = ET.Element("response")
        head = add(root, "header")
        add(head, "resultCode", code.code)
        add(head, "resultMsg", code.message)
        if ok and page is not None:
            body = add(root, "body")
            items = add(body, "items")
            for row in page.rows:
                add_row(items, "item", row)
            add(body, "numOfRows", page.size)
            add(body, "pageNo", page.page)
            add(body, "totalCount", page.total)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        if wire == "json":
            data = loads(body)
            response = data.get("response") if isinstance(data, dict) else None
            if not isinstance(response, dict) or "header" not in response:
                raise EnvelopeError(f"no response.header in data.go.kr answer: {body[:120]!r}")
            header = response["header"]
            content = response.get("body") or {}
            return Parsed(
                str(header.get("resultCode", "")),
                str(header.get("resultMsg", "")),
                rows=_unitems(content.get("items")),
                total=as_int(content.get("totalCount")),
                page=as_int(content.get("pageNo")),
                size=as_int(content.get("numOfRows")),
            )
        root = parse_xml(body)
        if root.tag != "response" or root.find("header") is None:
            raise EnvelopeError(f"no <response><header> in data.go.kr answer: {body[:120]!r}")
        content = root.find("body")
        return Parsed(
            text(root, "header/resultCode"),
            text(root, "header/resultMsg"),
            rows=[row_of(el) for el in root.findall("body/items/item")],
            total=as_int(text(content, "totalCount", "")),
            page=as_int(text(content, "pageNo", "")),
            size=as_int(text(content, "numOfRows", "")),
        )
