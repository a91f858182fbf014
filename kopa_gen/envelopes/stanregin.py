"""StanReginCd (법정동코드): a hub-like envelope on data.go.kr with its own field names and the real typo
`NOMAL SERVICE`; JSON is sent as text/html; no data is a bare `RESULT` with INFO-3."""

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

ROOT = "StanReginCd"


@register_family("stanregin")
class StanReginFamily:
    echoes = False  # the real API repeats no request parameter beyond the paging facts it already sends
    scaffold = """\
server: https://apis.data.go.kr/0000000/__ID__Service
path: /get__ROW__List
key: {name: ServiceKey, description: 공공데이터포털 인증키 (Decoding 키)}
params:
  - {name: pageNo, in: query, description: 페이지 번호, schema: {type: integer, minimum: 1, default: 1}}
  - {name: numOfRows, in: query, description: 한 페이지 결과 수, schema: {type: integer, minimum: 1, maximum: 1000, default: 10}}
  - {name: type, in: query, description: "응답 형식 (xml 기본, json)", schema: {type: string, enum: [xml, json]}}
response:
  type: object
  description: "{서비스명: [{head: [{totalCount}, {numOfRows, pageNo, type}, {RESULT}]}, {row: [...]}]}"
  additionalProperties:
    type: array
    items:
      type: object
      properties:
        head: {type: array}
        row: {type: array, items: {$ref: "#/components/schemas/__ROW__"}}
x-kopa:
  envelope: stanregin
  gateway: datagokr
  auth: {scheme: ServiceKey, env: DATA_GO_KR_SERVICE_KEY, key_pattern: "^[A-Za-z0-9+/]{86}==$"}
  format: {param: type, json: json, xml: xml, json_content_type: "text/html;charset=UTF-8"}
  paging: {page: pageNo, size: numOfRows, default_size: 10, max_size: 1000}
  codes:
    - {code: INFO-0, message: NOMAL SERVICE, category: ok}
    - {code: INFO-3, message: 데이터없음 에러, category: no_data}
    - {code: ERROR-1, message: 요청 파라미터 오류, category: bad_param}
    - {code: ERROR-9, message: 서버 오류, category: server}
    - {code: "22", message: LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR, category: quota, gateway: true}
    - {code: "23", message: LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR, category: rate, gateway: true}
    - {code: "30", message: SERVICE_KEY_IS_NOT_REGISTERED_ERROR, category: auth, gateway: true}
  answers: {ok: INFO-0, no_data: INFO-3, bad_key: "30", missing_param: ERROR-1, invalid_param: ERROR-1, page_size: ERROR-1, quota: "22", rate: "23", server: ERROR-9}
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
        fmt = platform.format(op)
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
            return Reply(200, dumps(body, op), fmt.json_content_type)
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
                add_row(root, "row", row, op.row_props)
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
            rows=rows_of(root.findall("row"), op.row_props),
            total=as_int(text(root, "head/totalCount", "")),
            page=as_int(text(root, "head/pageNo", "")),
            size=as_int(text(root, "head/numOfRows", "")),
        )
