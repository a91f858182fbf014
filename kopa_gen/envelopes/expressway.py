"""한국도로공사 고속도로 공공데이터 (data.ex.co.kr): one flat object `{code, message, count, numOfRows, pageNo,
pageSize, <rows>: [...]}` where `pageSize` is the number of PAGES (not rows per page) and `code` is `SUCCESS`
when the key is valid (the message says so: "인증키가 유효합니다."). The rows key is `list` for most operations and
the operation's own name for some (`realUnitTrtmVO`, `trafficIc`): the row schema's OpenAPI `xml.name` names it,
in JSON and XML alike. Errors are the same object with another `code`, its message and no rows. The XML is a
`<data>` root holding the same fields and one element per row (layout unverified)."""

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
    add_row,
    as_int,
    dumps,
    loads,
    parse_xml,
    rows_of,
    xml_bytes,
)
from kopa_gen.language.kopa import Category, ResultCode
from kopa_gen.language.platform import Operation, Platform

ROOT = "data"


def rows_key(op: Operation) -> str:
    """The key of the rows: the row schema's `xml.name` (e.g. realUnitTrtmVO), else `list`."""
    xml = op.row_schema.get("xml")
    return str(xml["name"]) if isinstance(xml, Mapping) and xml.get("name") else "list"


@register_family("expressway")
class ExpresswayFamily:
    echoes = True  # echoed request parameters sit next to code and message
    scaffold = """\
server: https://data.ex.co.kr/openapi
path: /__ID__/__ROW__List
key: {name: key, description: 인증키 (data.ex.co.kr에서 발급, 10자리 숫자)}
params:
  - {name: type, in: query, description: "응답 형식 (xml 기본, json)", schema: {type: string, enum: [xml, json]}}
  - {name: numOfRows, in: query, description: "한 페이지 결과 수 (기본 10, 최대 99)", schema: {type: integer, minimum: 1, maximum: 99, default: 10}}
  - {name: pageNo, in: query, description: 페이지 번호 (기본 1), schema: {type: integer, minimum: 1, default: 1}}
response:
  type: object
  required: [code, message]
  properties:
    code: {type: string, description: 결과 코드 (정상 SUCCESS)}
    message: {type: string, description: 결과 메시지}
    count: {type: integer, description: 전체 결과 수}
    numOfRows: {type: integer, description: 한 페이지 결과 수}
    pageNo: {type: integer, description: 페이지 번호}
    pageSize: {type: integer, description: 전체 페이지 수 (한 페이지 행 수가 아님)}
    list: {type: array, items: {$ref: "#/components/schemas/__ROW__"}}
x-kopa:
  envelope: expressway
  auth: {scheme: key, env: __ENV__, key_pattern: "^[0-9]{10}$"}
  format: {param: type, json: json, xml: xml}
  paging: {page: pageNo, size: numOfRows, default_size: 10, max_size: 99}
  codes:
    - {code: SUCCESS, message: 인증키가 유효합니다., category: ok}
    - {code: ERROR, message: 인증키가 유효하지 않습니다., category: auth}
    - {code: INVALID_PARAMETER, message: 요청 파라미터가 올바르지 않습니다., category: bad_param}
    - {code: LIMITED, message: 일일 호출 한도를 초과하였습니다., category: quota}
    - {code: SYSTEM_ERROR, message: 시스템 오류가 발생하였습니다., category: server}
  answers: {ok: SUCCESS, no_data: SUCCESS, bad_key: ERROR, missing_param: INVALID_PARAMETER, invalid_param: INVALID_PARAMETER, page_size: INVALID_PARAMETER, quota: LIMITED, rate: LIMITED, server: SYSTEM_ERROR}
  limits: {daily: null, per_second: null}
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
        body: JSON = {"code": code.code, "message": code.message}
        key = rows_key(op)
        if code.category in (Category.OK, Category.NO_DATA):
            body.update(echo)
            shown = Page.of(page, record)
            body.update(
                count=shown.total,
                numOfRows=shown.size,
                pageNo=shown.page,
                pageSize=math.ceil(shown.total / shown.size) if shown.size else 0,
            )
            body[key] = shown.rows
        fmt = platform.format(op)
        if wire == "json":
            return Reply(200, dumps(body, op), fmt.json_content_type)
        root = ET.Element(ROOT)
        for name, value in body.items():
            if name == key:
                for row in value:
                    add_row(root, key, row, op.row_props)
            else:
                add(root, name, value)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        echoed = [e.field for e in platform.echo(op)]
        key = rows_key(op)
        if wire == "json":
            data = loads(body)
            if not isinstance(data, dict) or "code" not in data:
                raise EnvelopeError(f"no `code` in data.ex.co.kr answer: {body[:120]!r}")
            values = {k: v for k, v in data.items() if k != key}
            rows = list(data.get(key) or [])
        else:
            root = parse_xml(body)
            if root.tag != ROOT or root.find("code") is None:
                raise EnvelopeError(f"no <{ROOT}><code> in data.ex.co.kr answer: {body[:120]!r}")
            values = {c.tag: c.text or "" for c in root if c.tag != key}
            rows = rows_of(root.findall(key), op.row_props)
        return Parsed(
            str(values.get("code", "")),
            str(values.get("message", "")),
            rows=rows,
            total=as_int(values.get("count")),
            page=as_int(values.get("pageNo")),
            size=as_int(values.get("numOfRows")),
            echo={name: str(values[name]) for name in echoed if name in values},
        ).shaped(op.kopa.shape)
