"""도로명주소 (juso.go.kr): `{"results": {"common": {errorCode, errorMessage, totalCount, currentPage,
countPerPage}, "juso": [...]}}`. Every value in `common` is a string, errors included (`juso` is null then); the
XML is `<results><common>…</common><juso>…</juso>…</results>`, one `<juso>` element per row. Echoed request
parameters go into `common`."""

from __future__ import annotations

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


@register_family("juso")
class JusoFamily:
    echoes = True
    scaffold = """\
server: https://business.juso.go.kr/addrlink
path: /__ROW__Api.do
key: {name: confmKey, description: 승인키 (API 종류마다 따로 발급)}
params:
  - {name: currentPage, in: query, description: 현재 페이지 번호, schema: {type: integer, minimum: 1, default: 1}}
  - {name: countPerPage, in: query, description: 페이지당 출력할 결과 수, schema: {type: integer, minimum: 1, maximum: 100, default: 10}}
  - {name: resultType, in: query, description: "검색결과형식 (xml 기본, json)", schema: {type: string, enum: [xml, json]}}
response:
  type: object
  required: [results]
  properties:
    results:
      type: object
      required: [common]
      properties:
        common:
          type: object
          description: 모든 값이 문자열
          properties:
            errorCode: {type: string}
            errorMessage: {type: string}
            totalCount: {type: string}
            currentPage: {type: string}
            countPerPage: {type: string}
        juso:
          oneOf:
            - {type: array, items: {$ref: "#/components/schemas/__ROW__"}}
            - {type: "null"}
x-kopa:
  envelope: juso
  auth: {scheme: confmKey, env: __ENV__, key_pattern: "^[A-Za-z0-9+/=]{20,120}$"}
  format: {param: resultType, json: json, xml: xml}
  paging: {page: currentPage, size: countPerPage, default_size: 10, max_size: 100}
  codes:
    - {code: "0", message: 정상, category: ok}
    - {code: "-999", message: 시스템에러, category: server}
    - {code: E0001, message: 승인되지 않은 KEY 입니다., category: auth}
    - {code: E0005, message: 검색어가 입력되지 않았습니다., category: bad_param}
    - {code: E0014, message: 개발승인키 기간이 만료되어 서비스를 이용하실 수 없습니다., category: auth}
    - {code: E0015, message: 검색 범위를 초과하였습니다., category: bad_param}
  answers: {ok: "0", no_data: "0", bad_key: E0001, missing_param: E0005, invalid_param: E0015, page_size: E0015, quota: "-999", rate: "-999", server: "-999"}
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
        common: dict[str, str] = {"errorMessage": code.message, "errorCode": code.code}
        ok = code.category in (Category.OK, Category.NO_DATA)
        rows: list[JSON] | None = None
        if ok:
            shown = Page.of(page, record)
            rows = shown.rows
            common.update(
                countPerPage=str(shown.size), totalCount=str(shown.total), currentPage=str(shown.page)
            )
            common.update(echo)
        fmt = platform.format(op)
        if wire == "json":
            return Reply(200, dumps({"results": {"common": common, "juso": rows}}, op), fmt.json_content_type)
        root = ET.Element("results")
        head = add(root, "common")
        for key, value in common.items():
            add(head, key, value)
        for row in rows or []:
            add_row(root, "juso", row, op.row_props)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        echoed = [e.field for e in platform.echo(op)]
        if wire == "json":
            data = loads(body)
            results = data.get("results") if isinstance(data, dict) else None
            if not isinstance(results, dict) or not isinstance(results.get("common"), dict):
                raise EnvelopeError(f"no results.common in juso answer: {body[:120]!r}")
            common = results["common"]
            rows = list(results.get("juso") or [])
            values = {k: str(v) for k, v in common.items()}
        else:
            root = parse_xml(body)
            head = root.find("common")
            if root.tag != "results" or head is None:
                raise EnvelopeError(f"no <results><common> in juso answer: {body[:120]!r}")
            values = {c.tag: c.text or "" for c in head}
            rows = rows_of(root.findall("juso"), op.row_props)
        return Parsed(
            values.get("errorCode", ""),
            values.get("errorMessage", ""),
            rows=rows,
            total=as_int(values.get("totalCount")),
            page=as_int(values.get("currentPage")),
            size=as_int(values.get("countPerPage")),
            echo={name: values[name] for name in echoed if name in values},
        ).shaped(op.kopa.shape)
