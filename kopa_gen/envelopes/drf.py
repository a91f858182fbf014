"""국가법령정보센터 (law.go.kr DRF): a search answers `<LawSearch><target/><키워드/><section/><totalCnt/><page/>…
<law id="1">…</law>…</LawSearch>`, a detail answers its document (`<법령>…</법령>`, `<PrecService>…`); JSON mirrors the
XML (`{"LawSearch": {…, "totalCnt": "4", "law": [...]}}`, totals as strings). Element names are Korean, and each
search item carries its position as an attribute. There are no error codes: a detail that finds nothing answers a
sentence in one element (`<Law>일치하는 법령이 없습니다. 법령명을 확인하여 주십시오.</Law>`), a key that fails the
user check `<Response>사용자 정보 검증에 실패하였습니다…</Response>`, and bad requests and faults an HTML page.

Everything platform-specific is read from the operation's spec: the root and item element names from its 200
response schema (the object alternative, and its array of the row schema), the not-found sentence from the
alternative whose one property has a `const`, attributes from the row schema's `xml: {attribute: true}` (an attribute
the world leaves empty is the item's position in the whole answer, as the real `id` is). In JSON a sub-list of a
document (`x-kopa.nested`) is laid out as the DRF converts its XML: a wrapped list as `{"조문": {"조문단위": [...]}}`,
one item as an object rather than a list, no items as no key. `x-kopa.codes` other than the success code are
kopa-gen's internal names for the sentences (docs/platforms.md)."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
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
    add_fields,
    add_row,
    as_int,
    dumps,
    is_attribute,
    list_tags,
    loads,
    parse_xml,
    row_of,
    rows_of,
    xml_bytes,
)
from kopa_gen.language.kopa import Category, ResultCode
from kopa_gen.language.platform import Operation, Platform
from kopa_gen.language.source import resolve

AUTH_ROOT = "Response"
"""The element of the user-check failure sentence."""
SECTION = {"1": "lawNm", "2": "bdyText"}
"""`section` of a search answer: what `search` (1 name, 2 body text) asked for."""
HTML_TYPE = "text/html;charset=UTF-8"
_MESSAGE = re.compile(r'<p class="msg">(.*?)</p>', re.S)


@dataclass(frozen=True)
class Layout:
    """The element names of one operation's answers, read from its 200 response schema."""

    root: str
    item: str | None
    """The element of one search item (None for a detail document)."""
    not_found: tuple[str, str] | None
    """(element, sentence) of a detail that finds nothing."""


def layout(platform: Platform, op: Operation) -> Layout:
    """The root and item names and the not-found sentence of an operation (see the module docstring)."""
    responses = platform.doc["paths"][op.path][op.method]["responses"]
    content: JSON = responses["200"].get("content") or {}
    media: JSON = next(iter(content.values())) if content else {}
    schema = _deref(platform, media.get("schema", {}))
    root: str | None = None
    item: str | None = None
    not_found: tuple[str, str] | None = None
    for alt in (_deref(platform, a) for a in schema.get("anyOf") or schema.get("oneOf") or [schema]):
        props = alt.get("properties") or {}
        if len(props) != 1:
            continue
        name, sub = next(iter(props.items()))
        sub = _deref(platform, sub)
        if "const" in sub and not_found is None:
            not_found = (name, str(sub["const"]))
        elif sub.get("type") == "object" and root is None:
            root = name
            for key, field in (sub.get("properties") or {}).items():
                field = _deref(platform, field)
                if field.get("type") == "array" and (field.get("items") or {}).get("$ref") == op.kopa.row:
                    item = key
    if root is None or (op.kopa.shape == "list" and item is None):
        raise ValueError(
            f"{platform.id} {op.path}: the drf family reads the root element (the one object property of the 200 "
            f"response schema) and, for a search, its array of {op.kopa.row}; describe them there"
        )
    return Layout(root, item, not_found)


def _deref(platform: Platform, schema: Any) -> JSON:
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        schema = resolve(platform.doc, schema["$ref"])
    return dict(schema) if isinstance(schema, Mapping) else {}


def error_page(message: str) -> bytes:
    """The HTML page the DRF answers a bad request or a fault with."""
    return (
        '<!DOCTYPE html><html lang="ko"><head><meta charset="UTF-8"><title>국가법령정보센터 | 오류</title></head>'
        f'<body><div class="error"><h2>요청을 처리할 수 없습니다</h2><p class="msg">{html.escape(message)}</p>'
        "</div></body></html>"
    ).encode()


def to_json(row: Mapping[str, Any], props: Mapping[str, Any]) -> JSON:
    """A row or document as the DRF's JSON lays it out (sub-lists as its XML conversion does)."""
    out: JSON = {}
    for key, value in row.items():
        schema = props.get(key) or {}
        if not isinstance(value, list):
            out[key] = value
            continue
        if not value:
            continue
        wrapper, item = list_tags(key, schema)
        item_props = (schema.get("items") or {}).get("properties") or {}
        items = [to_json(v, item_props) for v in value]
        one: Any = items[0] if len(items) == 1 else items
        out[key] = {item: one} if wrapper is not None else one
    return out


def from_json(data: Mapping[str, Any], props: Mapping[str, Any]) -> JSON:
    """The inverse of `to_json`: sub-lists back as lists (absent: empty), values as text."""
    out: JSON = {}
    for key, value in data.items():
        schema = props.get(key) or {}
        if schema.get("type") != "array":
            out[key] = "" if value is None else str(value)
    for key, schema in props.items():
        if not (isinstance(schema, Mapping) and schema.get("type") == "array"):
            continue
        wrapper, item = list_tags(key, schema)
        raw = data.get(key)
        if wrapper is not None:
            raw = raw.get(item) if isinstance(raw, Mapping) else None
        items = [raw] if isinstance(raw, Mapping) else raw if isinstance(raw, list) else []
        item_props = (schema.get("items") or {}).get("properties") or {}
        out[key] = [from_json(v, item_props) for v in items if isinstance(v, Mapping)]
    return out


def numbered(rows: list[JSON], props: Mapping[str, Any], first: int) -> list[JSON]:
    """Rows with every empty attribute set to the row's position in the whole answer (from `first`)."""
    attrs = [name for name, schema in props.items() if is_attribute(schema)]
    out = []
    for i, row in enumerate(rows):
        row = dict(row)
        for name in attrs:
            if row.get(name) in (None, ""):
                row[name] = str(first + i)
        out.append(row)
    return out


@register_family("drf")
class DrfFamily:
    echoes = True

    def positional(self, op: Operation) -> list[str]:
        """Attributes the world leaves empty are numbered with the row's position (see `numbered`)."""
        return [name for name, schema in op.row_props.items() if is_attribute(schema)]

    scaffold = """\
server: https://www.__ID__.example.kr/DRF
path: /__ROW__Search.do
key: {name: OC, description: 신청 계정 (이메일 아이디)}
params:
  - {name: type, in: query, description: "출력 형태 (XML 기본, JSON)", schema: {type: string, enum: [XML, JSON]}}
  - {name: display, in: query, description: "결과 개수 (기본 20, 최대 100)", schema: {type: integer, minimum: 1, maximum: 100, default: 20}}
  - {name: page, in: query, description: 결과 페이지, schema: {type: integer, minimum: 1, default: 1}}
response:
  anyOf:
    - type: object
      required: [__ROW__Search]
      properties:
        __ROW__Search:
          type: object
          properties:
            totalCnt: {type: string}
            page: {type: string}
            item: {type: array, items: {$ref: "#/components/schemas/__ROW__"}}
    - {type: object, required: [Response], properties: {Response: {type: string}}}
x-kopa:
  envelope: drf
  auth: {scheme: OC, env: __ENV__, key_pattern: "^[A-Za-z0-9._-]{2,64}$"}
  format: {param: type, json: JSON, xml: XML}
  paging: {page: page, size: display, default_size: 20, max_size: 100}
  codes:
    - {code: "00", message: success, category: ok}
    - {code: NO_DATA, message: 일치하는 자료가 없습니다., category: no_data}
    - {code: AUTH, message: 사용자 정보 검증에 실패하였습니다., category: auth}
    - {code: BAD_PARAM, message: 요청하신 파라미터를 확인하여 주십시오., category: bad_param}
    - {code: SERVER, message: 일시적으로 서비스를 이용할 수 없습니다., category: server}
  answers: {ok: "00", no_data: NO_DATA, bad_key: AUTH, missing_param: BAD_PARAM, invalid_param: BAD_PARAM,
            bad_value: BAD_PARAM, page_size: BAD_PARAM, quota: SERVER, rate: SERVER, server: SERVER}
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
        if code.category not in (Category.OK, Category.NO_DATA, Category.AUTH):
            return Reply(200, error_page(code.message), HTML_TYPE)
        lay = layout(platform, op)
        if code.category == Category.AUTH:
            return self._sentence(platform, AUTH_ROOT, code.message, wire)
        if op.kopa.shape == "record":
            if record is None:
                tag, sentence = lay.not_found or ("Law", code.message)
                return self._sentence(platform, tag, sentence, wire)
            if wire == "json":
                return Reply(200, dumps({lay.root: to_json(record, op.row_props)}, op), fmt.json_content_type)
            doc = ET.Element(lay.root)
            add_fields(doc, record, op.row_props)
            return Reply(200, xml_bytes(doc), fmt.xml_content_type)
        assert lay.item is not None
        rows = page.rows if page is not None else []
        at = page.page if page is not None else 1
        size = page.size if page is not None else len(rows)
        head = {k: SECTION.get(v, v) if k == "section" else v for k, v in echo.items() if k != "page"}
        head.update(
            totalCnt=str(page.total if page is not None else 0),
            page=str(at),
            numOfRows=str(len(rows)),
            resultCode=platform.kopa.answers.ok,
            resultMsg=platform.code(platform.kopa.answers.ok).message,
        )
        rows = numbered(rows, op.row_props, (at - 1) * size + 1)
        if wire == "json":
            body = {lay.root: {**head, lay.item: [to_json(r, op.row_props) for r in rows]}}
            return Reply(200, dumps(body, op), fmt.json_content_type)
        root = ET.Element(lay.root)
        for key, value in head.items():
            add(root, key, value)
        for row in rows:
            add_row(root, lay.item, row, op.row_props)
        return Reply(200, xml_bytes(root), fmt.xml_content_type)

    def _sentence(self, platform: Platform, tag: str, sentence: str, wire: Wire) -> Reply:
        fmt = platform.kopa.format  # an error sentence is the platform's, whatever the operation
        if wire == "json":
            return Reply(200, dumps({tag: sentence}), fmt.json_content_type)
        el = ET.Element(tag)
        el.text = sentence
        return Reply(200, xml_bytes(el), fmt.xml_content_type)

    def parse(self, platform: Platform, op: Operation, body: bytes, wire: Wire) -> Parsed:
        answers = platform.kopa.answers
        if b"<html" in body[:200].lower():
            found = _MESSAGE.search(body.decode("utf-8", "replace"))
            message = html.unescape(found.group(1)) if found else ""
            code = next((c.code for c in platform.kopa.codes if c.message == message), None)
            if code is None:
                raise EnvelopeError(f"an HTML page that is not the DRF's error page: {body[:120]!r}")
            return Parsed(code, message)
        lay = layout(platform, op)
        if wire == "json":
            data = loads(body)
            if not isinstance(data, dict) or len(data) != 1:
                raise EnvelopeError(f"not a DRF answer (one root key): {body[:120]!r}")
            tag, doc = next(iter(data.items()))
            if isinstance(doc, str):
                return self._said(platform, lay, tag, doc)
            if tag != lay.root or not isinstance(doc, dict):
                raise EnvelopeError(f"expected {lay.root}, got {tag}: {body[:120]!r}")
        else:
            root = parse_xml(body)
            tag = root.tag
            if len(root) == 0 and tag != lay.root:
                return self._said(platform, lay, tag, root.text or "")
            if tag != lay.root:
                raise EnvelopeError(f"expected <{lay.root}>, got <{tag}>: {body[:120]!r}")
        ok = platform.code(answers.ok)
        if op.kopa.shape == "record":
            record = from_json(doc, op.row_props) if wire == "json" else row_of(root, op.row_props)
            return Parsed(ok.code, ok.message, record=record)
        if wire == "json":
            head = {k: str(v) for k, v in doc.items() if k != lay.item}
            raw = doc.get(lay.item)
            items = [raw] if isinstance(raw, dict) else raw if isinstance(raw, list) else []
            rows = [from_json(r, op.row_props) for r in items if isinstance(r, dict)]
        else:
            head = {c.tag: c.text or "" for c in root if c.tag != lay.item}
            rows = rows_of(root.findall(str(lay.item)), op.row_props)
        echoed = [e.field for e in platform.echo(op)]
        total = as_int(head.get("totalCnt"))
        # a search that finds nothing is an ordinary answer (totalCnt 0); the client sees it as no data
        said = platform.code(answers.no_data) if total == 0 else ok
        return Parsed(
            said.code if total == 0 else head.get("resultCode") or ok.code,
            said.message if total == 0 else head.get("resultMsg") or ok.message,
            rows=rows,
            total=total,
            page=as_int(head.get("page")),  # numOfRows counts this page's rows, not the page size asked for
            echo={name: head[name] for name in echoed if name in head},
        )

    def _said(self, platform: Platform, lay: Layout, tag: str, sentence: str) -> Parsed:
        """A sentence answer: not found (the operation's own sentence) or a failed user check."""
        answers = platform.kopa.answers
        if lay.not_found is not None and tag == lay.not_found[0]:
            return Parsed(answers.no_data, sentence)
        if tag == AUTH_ROOT:
            return Parsed(answers.bad_key, sentence)
        raise EnvelopeError(f"an unknown DRF sentence <{tag}>: {sentence[:120]!r}")
