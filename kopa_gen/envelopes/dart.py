"""OpenDART: flat `{status, message, ...}` objects; `list` rows; list.json adds paging numbers; XML root `<result>`
with one `<list>` element per row."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

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

PAGING = ("page_no", "page_count", "total_count", "total_page")


# `flat` is the same {status, message, list} shape, for kopa-gen's own workspace platform
@register_family("dart", "flat")
class DartFamily:
    def render(
        self,
        platform: Platform,
        op: Operation,
        code: ResultCode,
        wire: Wire,
        page: Page | None = None,
        record: JSON | None = None,
    ) -> Reply:
        body: JSON = {"status": code.code, "message": code.message}
        if code.category is Category.OK:
            if record is not None:
                body.update(record)
            elif page is not None:
                if platform.paged(op):
                    body.update(
                        page_no=page.page,
                        page_count=page.size,
                        total_count=page.total,
                        total_page=math.ceil(page.total / page.size) if page.size else 0,
                    )
                body["list"] = page.rows
        fmt = platform.kopa.format
        if wire == "json":
            return Reply(200, dumps(body), fmt.json_content_type)
        root = ET.Element("result")
        for key, value in body.items():
            if key == "list":
                for row in value:
                    add_row(root, "list", row)
            else:
                add(root, key, value)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        if wire == "json":
            data = loads(body)
            if not isinstance(data, dict) or "status" not in data:
                raise EnvelopeError(f"no `status` in OpenDART answer: {body[:120]!r}")
            status, message = str(data["status"]), str(data.get("message", ""))
            if op.kopa.shape == "record":
                rest = {k: v for k, v in data.items() if k not in ("status", "message")}
                return Parsed(status, message, record=rest or None)
            return Parsed(
                status,
                message,
                rows=list(data.get("list") or []),
                total=as_int(data.get("total_count")),
                page=as_int(data.get("page_no")),
                size=as_int(data.get("page_count")),
            )
        root = parse_xml(body)
        if root.tag != "result" or root.find("status") is None:
            raise EnvelopeError(f"no <result><status> in OpenDART answer: {body[:120]!r}")
        status, message = text(root, "status"), text(root, "message")
        if op.kopa.shape == "record":
            rest = {c.tag: c.text or "" for c in root if c.tag not in ("status", "message")}
            return Parsed(status, message, record=rest or None)
        return Parsed(
            status,
            message,
            rows=[row_of(el) for el in root.findall("list")],
            total=as_int(text(root, "total_count", "")),
            page=as_int(text(root, "page_no", "")),
            size=as_int(text(root, "page_count", "")),
        )
