"""OpenDART: flat `{status, message, ...}` objects; `list` rows; list.json adds paging numbers; XML root `<result>`
with one `<list>` element per row."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from kopa_gen.envelopes import register_family
from kopa_gen.envelopes.base import (
    JSON,
    NO_ECHO,
    EnvelopeError,
    Page,
    Parsed,
    Reply,
    Wire,
    add,
    add_fields,
    add_row,
    as_int,
    coerce,
    dumps,
    loads,
    parse_xml,
    row_of,
    rows_of,
    text,
    xml_bytes,
)
from kopa_gen.language.kopa import Category, ResultCode
from kopa_gen.language.platform import Operation, Platform
from kopa_gen.language.source import resolve

PAGING = ("page_no", "page_count", "total_count", "total_page")
STATUS = ("status", "message")


# `flat` is the same {status, message, list} shape, for kopa-gen's own workspace platform
@register_family("dart", "flat")
class DartFamily:
    # echoed request parameters sit next to status and message (OpenDART itself repeats none)
    echoes = True
    scaffold = """\
server: https://opendart.fss.or.kr/api
path: /__ID__.json
key: {name: crtfc_key, description: API 인증키 (40자리)}
params:
  - {name: page_no, in: query, description: 페이지 번호, schema: {type: integer, minimum: 1, default: 1}}
  - {name: page_count, in: query, description: 페이지 별 건수, schema: {type: integer, minimum: 1, maximum: 100, default: 10}}
response:
  type: object
  required: [status, message]
  properties:
    status: {type: string, description: 결과 코드}
    message: {type: string, description: 결과 메시지}
    page_no: {type: integer}
    page_count: {type: integer}
    total_count: {type: integer}
    total_page: {type: integer}
    list: {type: array, items: {$ref: "#/components/schemas/__ROW__"}}
x-kopa:
  envelope: dart
  auth: {scheme: crtfc_key, env: __ENV__, key_pattern: "^[0-9a-f]{40}$"}
  format: {extension: true, json_content_type: "application/json;charset=UTF-8", xml_content_type: "application/xml;charset=UTF-8"}
  paging: {page: page_no, size: page_count, default_size: 10, max_size: 100}
  codes:
    - {code: "000", message: 정상, category: ok}
    - {code: "010", message: 등록되지 않은 키입니다., category: auth}
    - {code: "013", message: 조회된 데이타가 없습니다., category: no_data}
    - {code: "020", message: 요청 제한을 초과하였습니다., category: quota}
    - {code: "100", message: 필드의 부적절한 값입니다., category: bad_param}
    - {code: "900", message: 정의되지 않은 오류가 발생하였습니다., category: server}
  answers: {ok: "000", no_data: "013", bad_key: "010", missing_param: "100", invalid_param: "100", page_size: "100", quota: "020", rate: "020", server: "900"}
  limits: {daily: 20000, per_second: null}
"""

    def render(
        self,
        platform: Platform,
        op: Operation,
        code: ResultCode,
        wire: Wire,
        page: Page | None = None,
        record: JSON | None = None,
        echo: Mapping[str, str] = NO_ECHO,
    ) -> Reply:
        body: JSON = {"status": code.code, "message": code.message}
        if code.category in (Category.OK, Category.NO_DATA):
            body.update(echo)
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
                if op.kopa.groups is not None:
                    body["group"] = grouped(platform, op, page.rows)
                else:
                    body["list"] = page.rows
        fmt = platform.format(op)
        if wire == "json":
            # grouped items are typed by their groups' schemas, which `dumps` does not look into
            return Reply(200, dumps(body, op if op.kopa.groups is None else None), fmt.json_content_type)
        root = ET.Element("result")
        for key, value in body.items():
            if key == "list":
                for row in value:
                    add_row(root, "list", row, op.row_props)
            elif key == "group":
                for group in value:
                    el = add(root, "group")
                    add(el, "title", group["title"])
                    for row in group["list"]:
                        add_row(el, "list", row)
            elif record is None or key not in record:
                add(root, key, value)
        if code.category is Category.OK and record is not None:
            add_fields(root, record, op.row_props)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        echoed = [e.field for e in platform.echo(op)]
        envelope = (*STATUS, *echoed)
        if wire == "json":
            data = loads(body)
            if not isinstance(data, dict) or "status" not in data:
                raise EnvelopeError(f"no `status` in OpenDART answer: {body[:120]!r}")
            status, message = str(data["status"]), str(data.get("message", ""))
            echo = {name: str(data[name]) for name in echoed if name in data}
            if op.kopa.shape == "record":
                rest = {k: v for k, v in data.items() if k not in envelope}
                return Parsed(status, message, record=rest or None, echo=echo)
            rows = list(data.get("list") or [])
            if op.kopa.groups is not None:
                rows = flattened(op, data.get("group") or [])
            return Parsed(
                status,
                message,
                rows=rows,
                total=as_int(data.get("total_count")),
                page=as_int(data.get("page_no")),
                size=as_int(data.get("page_count")),
                echo=echo,
            )
        root = parse_xml(body)
        if root.tag != "result" or root.find("status") is None:
            raise EnvelopeError(f"no <result><status> in OpenDART answer: {body[:120]!r}")
        status, message = text(root, "status"), text(root, "message")
        echo = {c.tag: c.text or "" for c in root if c.tag in echoed}
        if op.kopa.shape == "record":
            fields = ET.Element("result")
            fields.extend(c for c in root if c.tag not in envelope)
            return Parsed(
                status, message, record=row_of(fields, op.row_props) if len(fields) else None, echo=echo
            )
        rows = rows_of(root.findall("list"), op.row_props)
        if op.kopa.groups is not None:
            groups = [
                {"title": text(g, "title"), "list": [row_of(el) for el in g.findall("list")]}
                for g in root.findall("group")
            ]
            rows = flattened(op, groups)
        return Parsed(
            status,
            message,
            rows=rows,
            total=as_int(text(root, "total_count", "")),
            page=as_int(text(root, "page_no", "")),
            size=as_int(text(root, "page_count", "")),
            echo=echo,
        )


def group_props(platform: Platform, pointer: str) -> JSON:
    """The properties of a group's item schema (`x-kopa.groups.schemas`)."""
    props = resolve(platform.doc, pointer).get("properties", {})
    assert isinstance(props, dict)
    return props


def grouped(platform: Platform, op: Operation, rows: list[JSON]) -> list[JSON]:
    """Rows of a grouped operation as the wire sends them: one `{title, list}` per declared group, in order, each
    item holding only its group's fields."""
    spec = op.kopa.groups
    assert spec is not None
    out: list[JSON] = []
    for title, pointer in spec.schemas.items():
        props = group_props(platform, pointer)
        items = [coerce(props, row) for row in rows if row.get(spec.by) == title]
        out.append({"title": title, "list": items})
    return out


def flattened(op: Operation, groups: list[JSON]) -> list[JSON]:
    """A grouped answer read back as rows, each carrying its group's title in the `by` column."""
    spec = op.kopa.groups
    assert spec is not None
    return [
        {spec.by: str(group.get("title", "")), **item}
        for group in groups
        if isinstance(group, dict)
        for item in group.get("list") or []
        if isinstance(item, dict)
    ]
