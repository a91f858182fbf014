"""The "OpenAPI hub" software (NEIS, National Assembly): `{SERVICE: [{head: [...]}, {row: [...]}]}`; errors and
no-data are a bare top-level `RESULT`."""

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


def service(op: Operation) -> str:
    """The envelope's top key is the service name, i.e. the last path segment."""
    return op.path.rstrip("/").rsplit("/", 1)[-1]


@register_family("hub")
class HubFamily:
    echoes = False  # the real API repeats no request parameter beyond the paging facts it already sends
    scaffold = """\
server: https://open.__ID__.example.kr/hub
path: /__ROW__Info
key: {name: KEY, description: 인증키 (없으면 샘플 5건)}
params:
  - {name: Type, in: query, description: "호출 문서 (xml 기본, json)", schema: {type: string, enum: [xml, json]}}
  - {name: pIndex, in: query, description: 페이지 위치, schema: {type: integer, minimum: 1, default: 1}}
  - {name: pSize, in: query, description: 페이지 당 신청 숫자, schema: {type: integer, minimum: 1, maximum: 1000, default: 100}}
response:
  type: object
  description: "{서비스명: [{head: [{list_total_count}, {RESULT}]}, {row: [...]}]} or a bare {RESULT}"
  additionalProperties:
    type: array
    items:
      type: object
      properties:
        head: {type: array}
        row: {type: array, items: {$ref: "#/components/schemas/__ROW__"}}
x-kopa:
  envelope: hub
  auth: {scheme: KEY, env: __ENV__, key_pattern: "^[0-9a-f]{32}$", optional: true}
  format: {param: Type, json: json, xml: xml}
  paging: {page: pIndex, size: pSize, default_size: 100, max_size: 1000}
  codes:
    - {code: INFO-000, message: 정상 처리되었습니다., category: ok}
    - {code: INFO-200, message: 해당하는 데이터가 없습니다., category: no_data}
    - {code: ERROR-290, message: "인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오.", category: auth}
    - {code: ERROR-300, message: 필수 값이 누락되어 있습니다. 요청인자를 참고 하십시오., category: bad_param}
    - {code: ERROR-333, message: 요청위치 값의 타입이 유효하지 않습니다.요청위치 값은 정수를 입력하세요., category: bad_param}
    - {code: ERROR-336, message: "데이터요청은 한번에 최대 1,000건을 넘을 수 없습니다.", category: bad_param}
    - {code: ERROR-337, message: 일별 트래픽 제한을 넘은 호출입니다. 오늘은 더이상 호출할 수 없습니다., category: quota}
    - {code: ERROR-500, message: 서버 오류입니다. 지속적으로 발생시 홈페이지로 문의(Q&A) 바랍니다., category: server}
  answers: {ok: INFO-000, no_data: INFO-200, bad_key: ERROR-290, missing_param: ERROR-300, invalid_param: ERROR-333, page_size: ERROR-336, quota: ERROR-337, rate: ERROR-337, server: ERROR-500}
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
        fmt = platform.format(op)
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
            return Reply(200, dumps(body, op), fmt.json_content_type)
        if ok and page is not None:
            root = ET.Element(name)
            head_el = add(root, "head")
            add(head_el, "list_total_count", page.total)
            res = add(head_el, "RESULT")
            add(res, "CODE", code.code)
            add(res, "MESSAGE", code.message)
            for row in page.rows:
                add_row(root, "row", row, op.row_props)
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
            rows=rows_of(root.findall("row"), op.row_props),
            total=as_int(text(root, "head/list_total_count", "")),
        )
