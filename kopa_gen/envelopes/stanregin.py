"""StanReginCd (법정동코드): a hub-like envelope on data.go.kr with its own field names and the real typo
`NOMAL SERVICE`; JSON is sent as text/html; no data is a bare `RESULT` with INFO-3."""

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

ROOT = "StanReginCd"


@register_family("stanregin")
class StanReginFamily:
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
        result = {"resultCode": code.code, "resultMsg": code.message}
        ok = code.category is Category.OK and page is not None
        if wire == "json":
            body: Any
            if ok and page is not None:
                head = [
                    {"totalCount": page.total},
                    {"numOfRows": str(page.size), "pageNo": str(page.page), "type": "JSON"},
                    {"RESULT": result},
                ]
                body = {ROOT: [{"head": head}, {"row": page.rows}]}
            else:
                body = {"RESULT": result}
            return Reply(200, dumps(body), fmt.json_content_type)
        if ok and page is not None:
            root = ET.Element(ROOT)
            head_el = add(root, "head")
            add(head_el, "totalCount", page.total)
            add(head_el, "numOfRows", page.size)
            add(head_el, "pageNo", page.page)
            add(head_el, "type", "XML")
            res = add(head_el, "RESULT")
            add(res, "resultCode", code.code)
            add(res, "resultMsg", code.message)
            for row in page.rows:
                add_row(root, "row", row)
        else:
            root = ET.Element("RESULT")
            add(root, "resultCode", code.code)
            add(root, "resultMsg", code.message)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        if wire == "json":
            data = loads(body)
            if isinstance(data, dict) and "RESULT" in data:
                res = data["RESULT"]
                return Parsed(str(res.get("resultCode", "")), str(res.get("resultMsg", "")))
            parts = data.get(ROOT) if isinstance(data, dict) else None
            if not isinstance(parts, list) or not parts:
                raise EnvelopeError(f"no {ROOT!r} key in answer: {body[:120]!r}")
            head = parts[0].get("head", [])
            total = as_int(head[0].get("totalCount")) if head else None
            paging = head[1] if len(head) > 1 else {}
            res = head[2].get("RESULT", {}) if len(head) > 2 else {}
            return Parsed(
                str(res.get("resultCode", "")),
                str(res.get("resultMsg", "")),
                rows=parts[1].get("row", []) if len(parts) > 1 else [],
                total=total,
                page=as_int(paging.get("pageNo")),
                size=as_int(paging.get("numOfRows")),
            )
        root = parse_xml(body)
        if root.tag == "RESULT":
            return Parsed(text(root, "resultCode"), text(root, "resultMsg"))
        if root.tag != ROOT:
            raise EnvelopeError(f"expected <{ROOT}>, got <{root.tag}>")
        return Parsed(
            text(root, "head/RESULT/resultCode"),
            text(root, "head/RESULT/resultMsg"),
            rows=[row_of(el) for el in root.findall("row")],
            total=as_int(text(root, "head/totalCount", "")),
            page=as_int(text(root, "head/pageNo", "")),
            size=as_int(text(root, "head/numOfRows", "")),
        )
