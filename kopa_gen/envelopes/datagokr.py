"""data.go.kr standard: `response.header.resultCode/resultMsg`, `response.body.items.item`, numeric paging facts.

The one-item quirk is reproduced: in JSON `items.item` is a list for 2+ rows, a bare object for exactly one row,
and `items` is the empty string for none (or `item: []` where the operation says `empty_items: list`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

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
    text,
    xml_bytes,
)
from kopa_gen.language.kopa import Category, ResultCode
from kopa_gen.language.platform import Operation, Platform


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
    # echoed request parameters follow totalCount in `body` (where services that repeat them put them)
    echoes = True
    scaffold = """\
server: https://apis.data.go.kr/0000000/__ID__Service
path: /get__ROW__List
key: {name: serviceKey, description: 공공데이터포털 인증키 (Decoding 키)}
params:
  - {name: pageNo, in: query, description: 페이지 번호, schema: {type: integer, minimum: 1, default: 1}}
  - {name: numOfRows, in: query, description: 한 페이지 결과 수, schema: {type: integer, minimum: 1, maximum: 1000, default: 10}}
  - {name: resultType, in: query, description: "응답 형식 (xml 기본, json)", schema: {type: string, enum: [xml, json]}}
response:
  type: object
  required: [response]
  properties:
    response:
      type: object
      required: [header]
      properties:
        header:
          type: object
          properties: {resultCode: {type: string}, resultMsg: {type: string}}
        body:
          type: object
          properties:
            numOfRows: {type: integer}
            pageNo: {type: integer}
            totalCount: {type: integer}
            items:
              description: 'item: 2건 이상 배열, 1건이면 객체, 0건이면 빈 문자열'
              oneOf:
                - {type: object, properties: {item: {type: array, items: {$ref: "#/components/schemas/__ROW__"}}}}
                - {type: object, properties: {item: {$ref: "#/components/schemas/__ROW__"}}}
                - {type: string, const: ""}
x-kopa:
  envelope: datagokr
  gateway: datagokr
  auth: {scheme: serviceKey, env: DATA_GO_KR_SERVICE_KEY, key_pattern: "^[A-Za-z0-9+/]{86}==$"}
  format: {param: resultType, json: json, xml: xml}
  paging: {page: pageNo, size: numOfRows, default_size: 10, max_size: 1000}
  codes:
    - {code: "00", message: NORMAL SERVICE., category: ok}
    - {code: "03", message: NODATA_ERROR, category: no_data}
    - {code: "10", message: INVALID_REQUEST_PARAMETER_ERROR, category: bad_param}
    - {code: "11", message: NO_MANDATORY_REQUEST_PARAMETERS_ERROR, category: bad_param}
    - {code: "22", message: LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR, category: quota, gateway: true}
    - {code: "23", message: LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR, category: rate, gateway: true}
    - {code: "30", message: SERVICE_KEY_IS_NOT_REGISTERED_ERROR, category: auth, gateway: true}
    - {code: "99", message: UNKNOWN_ERROR, category: server, gateway: true}
  answers: {ok: "00", no_data: "03", bad_key: "30", missing_param: "11", invalid_param: "10", page_size: "10", quota: "22", rate: "23", server: "99"}
  limits: {daily: 10000, per_second: 30}
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
        header = {"resultCode": code.code, "resultMsg": code.message}
        fmt = platform.format(op)
        ok = code.category in (Category.OK, Category.NO_DATA) and page is not None
        if wire == "json":
            response: JSON = {"header": header}
            if ok and page is not None:
                response["body"] = {
                    "items": _items(op, page.rows),
                    "numOfRows": page.size,
                    "pageNo": page.page,
                    "totalCount": page.total,
                    **echo,
                }
            return Reply(200, dumps({"response": response}, op), fmt.json_content_type)
        root = ET.Element("response")
        head = add(root, "header")
        add(head, "resultCode", code.code)
        add(head, "resultMsg", code.message)
        if ok and page is not None:
            body = add(root, "body")
            items = add(body, "items")
            for row in page.rows:
                add_row(items, "item", row, op.row_props)
            add(body, "numOfRows", page.size)
            add(body, "pageNo", page.page)
            add(body, "totalCount", page.total)
            for name, value in echo.items():
                add(body, name, value)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        echoed = [e.field for e in platform.echo(op)]
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
                echo={name: str(content[name]) for name in echoed if name in content},
            )
        root = parse_xml(body)
        if root.tag != "response" or root.find("header") is None:
            raise EnvelopeError(f"no <response><header> in data.go.kr answer: {body[:120]!r}")
        content = root.find("body")
        return Parsed(
            text(root, "header/resultCode"),
            text(root, "header/resultMsg"),
            rows=rows_of(root.findall("body/items/item"), op.row_props),
            total=as_int(text(content, "totalCount", "")),
            page=as_int(text(content, "pageNo", "")),
            size=as_int(text(content, "numOfRows", "")),
            echo={} if content is None else {c.tag: c.text or "" for c in content if c.tag in echoed},
        )
