"""Nested records (`x-kopa.nested`) and request echo (`x-kopa.echo`) on a small law service written for this file
(a law with its articles, each article with its paragraphs, every name Korean): rows and records with sub-lists
come back through the real client equal in JSON and XML, the JSON conforms to the spec under openapi-core, the
envelope repeats the request, the generated MCP tools type the sub-lists, and broken declarations fail at load
with their line and what to write."""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kopa_gen.client.client import Result
from kopa_gen.client.validation import SpecValidator
from kopa_gen.compile.build import build
from kopa_gen.compose import sandbox_client
from kopa_gen.envelopes import Wire
from kopa_gen.project import Project, load_project
from kopa_gen.sandbox.config import sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.local import open_sandbox
from tests.test_broken_specs import SPEC, problems
from tests.toyspec import write_project

SCHEMAS = "#/components/schemas/"

WORLD: dict[str, Any] = {
    "tables": [
        {
            "name": "law",
            "description": "Laws.",
            "generator": "static",
            "columns": [{"name": "법령ID"}, {"name": "법령명"}, {"name": "시행일자", "type": "integer"}],
            "anchors": [
                {"법령ID": "L1", "법령명": "자동차관리법", "시행일자": 20240101},
                {"법령ID": "L2", "법령명": "도로교통법", "시행일자": 20230701},
                {"법령ID": "L3", "법령명": "자동차손해배상 보장법", "시행일자": 20220101},
            ],
        },
        {
            "name": "law_article",
            "description": "Articles (written out of order: the declared order must sort them).",
            "generator": "static",
            "columns": [{"name": "법령ID"}, {"name": "조문번호", "type": "integer"}, {"name": "조문제목"}],
            "anchors": [
                {"법령ID": "L1", "조문번호": 2, "조문제목": "정의"},
                {"법령ID": "L2", "조문번호": 1, "조문제목": "목적"},
                {"법령ID": "L1", "조문번호": 1, "조문제목": "목적"},
            ],
        },
        {
            "name": "law_paragraph",
            "description": "Paragraphs of articles.",
            "generator": "static",
            "columns": [
                {"name": "법령ID"},
                {"name": "조문번호", "type": "integer"},
                {"name": "항번호"},
                {"name": "항내용"},
            ],
            "anchors": [
                {
                    "법령ID": "L1",
                    "조문번호": 1,
                    "항번호": "②",
                    "항내용": "자동차의 정의는 대통령령으로 정한다.",
                },
                {"법령ID": "L1", "조문번호": 1, "항번호": "①", "항내용": "이 법은 자동차를 관리한다."},
                {"법령ID": "L2", "조문번호": 1, "항번호": "①", "항내용": "이 법은 도로 교통을 다룬다."},
            ],
        },
    ],
}

# What the service must answer, written by hand from the anchors above.
L1: dict[str, Any] = {
    "법령ID": "L1",
    "법령명": "자동차관리법",
    "시행일자": 20240101,
    "조문": [
        {
            "조문번호": 1,
            "조문제목": "목적",
            "항": [
                {"항번호": "①", "항내용": "이 법은 자동차를 관리한다."},
                {"항번호": "②", "항내용": "자동차의 정의는 대통령령으로 정한다."},
            ],
        },
        {"조문번호": 2, "조문제목": "정의", "항": []},
    ],
}
L2: dict[str, Any] = {
    "법령ID": "L2",
    "법령명": "도로교통법",
    "시행일자": 20230701,
    "조문": [
        {"조문번호": 1, "조문제목": "목적", "항": [{"항번호": "①", "항내용": "이 법은 도로 교통을 다룬다."}]}
    ],
}
L3: dict[str, Any] = {"법령ID": "L3", "법령명": "자동차손해배상 보장법", "시행일자": 20220101, "조문": []}

ARTICLES = {
    "field": "조문",
    "table": "law_article",
    "key": {"법령ID": "법령ID"},
    "order": [{"column": "조문번호"}],
    "nested": [
        {
            "field": "항",
            "table": "law_paragraph",
            "key": {"법령ID": "법령ID", "조문번호": "조문번호"},
            "order": [{"column": "항번호"}],
        }
    ],
}

ROW_SCHEMAS: dict[str, Any] = {
    "Law": {
        "type": "object",
        "required": ["법령ID", "법령명", "시행일자", "조문"],
        "additionalProperties": False,
        "properties": {
            "법령ID": {"type": "string", "description": "법령 ID"},
            "법령명": {"type": "string", "description": "법령명"},
            "시행일자": {"type": "integer", "description": "시행일자"},
            "조문": {"type": "array", "xml": {"wrapped": True}, "items": {"$ref": SCHEMAS + "Article"}},
        },
    },
    "Article": {
        "type": "object",
        "xml": {"name": "조문단위"},
        "required": ["조문번호", "조문제목", "항"],
        "additionalProperties": False,
        "properties": {
            "법령ID": {"type": "string", "writeOnly": True, "description": "links the paragraphs"},
            "조문번호": {"type": "integer", "description": "조문번호"},
            "조문제목": {"type": "string", "description": "조문제목"},
            "항": {"type": "array", "items": {"$ref": SCHEMAS + "Paragraph"}},
        },
    },
    "Paragraph": {
        "type": "object",
        "required": ["항번호", "항내용"],
        "additionalProperties": False,
        "properties": {
            "항번호": {"type": "string", "description": "항번호"},
            "항내용": {"type": "string", "description": "항내용"},
        },
    },
}

FORMAT_PARAM = {"name": "type", "in": "query", "schema": {"type": "string", "enum": ["xml", "json"]}}
PAGING_PARAMS = [
    {"name": "pageNo", "in": "query", "schema": {"type": "integer", "minimum": 1}},
    {"name": "numOfRows", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 2}},
]


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def datagokr_responses() -> dict[str, Any]:
    """The data.go.kr envelope, strict enough that a wrongly typed nested field fails validation."""
    law = {"$ref": SCHEMAS + "Law"}
    ok = {
        "type": "object",
        "required": ["response"],
        "properties": {
            "response": {
                "type": "object",
                "required": ["header", "body"],
                "properties": {
                    "header": {"type": "object", "properties": {"resultCode": {"const": "00"}}},
                    "body": {
                        "type": "object",
                        "required": ["items", "numOfRows", "pageNo", "totalCount", "키워드", "page"],
                        "additionalProperties": False,
                        "properties": {
                            "items": {
                                "oneOf": [
                                    {
                                        "type": "object",
                                        "required": ["item"],
                                        "properties": {"item": {"type": "array", "items": law}},
                                    },
                                    {"type": "object", "required": ["item"], "properties": {"item": law}},
                                    {"type": "string", "const": ""},
                                ]
                            },
                            "numOfRows": {"type": "integer"},
                            "pageNo": {"type": "integer"},
                            "totalCount": {"type": "integer"},
                            "키워드": {"type": "string"},
                            "page": {"type": "string"},
                        },
                    },
                },
            }
        },
    }
    error = {
        "type": "object",
        "required": ["response"],
        "properties": {
            "response": {
                "type": "object",
                "properties": {"header": {"properties": {"resultCode": {"not": {"const": "00"}}}}},
            }
        },
    }
    return _json({"anyOf": [ok, error]})


def flat_responses(shape: str) -> dict[str, Any]:
    """The flat `{status, message, ...}` envelope: a record's fields at the top, or `list`."""
    law = ROW_SCHEMAS["Law"]
    if shape == "record":
        ok: dict[str, Any] = {
            "type": "object",
            "required": ["status", "message", "target", *law["required"]],
            "additionalProperties": False,
            "properties": {
                "status": {"const": "000"},
                "message": {"type": "string"},
                "target": {"type": "string"},
                **law["properties"],
            },
        }
    else:
        ok = {
            "type": "object",
            "required": ["status", "message", "키워드", "page", "list"],
            "properties": {
                "status": {"const": "000"},
                "키워드": {"type": "string"},
                "page": {"type": "string"},
                "list": {"type": "array", "items": {"$ref": SCHEMAS + "Law"}},
            },
        }
    error = {"type": "object", "required": ["status"], "properties": {"status": {"not": {"const": "000"}}}}
    return _json({"anyOf": [ok, error]})


def law_spec(envelope: str = "datagokr") -> dict[str, Any]:
    """The law service in the data.go.kr family (a list) or the flat one (a list and a record)."""
    list_op = {
        "operationId": "getLaws",
        "summary": "법령 목록",
        "parameters": [
            {"name": "query", "in": "query", "description": "법령명 일부", "schema": {"type": "string"}},
            *PAGING_PARAMS,
            FORMAT_PARAM,
        ],
        "responses": datagokr_responses() if envelope == "datagokr" else flat_responses("list"),
        "x-kopa": {
            "tool": "toy_list_laws",
            "effect": "read",
            "shape": "list",
            "row": SCHEMAS + "Law",
            "source": {
                "table": "law",
                "filters": [{"param": "query", "column": "법령명", "match": "contains"}],
                "order": [{"column": "법령ID"}],
            },
            "nested": [copy.deepcopy(ARTICLES)],
            "echo": [
                {"field": "키워드", "param": "query"},
                {"field": "page", "param": "pageNo", "default": "1"},
            ],
        },
    }
    paths: dict[str, Any] = {"/laws": {"get": list_op}}
    if envelope == "flat":
        paths["/law"] = {
            "get": {
                "operationId": "getLaw",
                "summary": "법령 본문",
                "parameters": [
                    {"name": "ID", "in": "query", "required": True, "schema": {"type": "string"}},
                    {"name": "target", "in": "query", "schema": {"type": "string", "enum": ["law"]}},
                    FORMAT_PARAM,
                ],
                "responses": flat_responses("record"),
                "x-kopa": {
                    "tool": "toy_get_law",
                    "effect": "read",
                    "shape": "record",
                    "row": SCHEMAS + "Law",
                    "source": {
                        "table": "law",
                        "filters": [{"param": "ID", "column": "법령ID", "match": "eq"}],
                    },
                    "nested": [copy.deepcopy(ARTICLES)],
                    "echo": [{"field": "target", "param": "target", "default": "law"}],
                },
            }
        }
    if envelope == "datagokr":
        codes = [
            {"code": "00", "message": "NORMAL SERVICE.", "category": "ok"},
            {"code": "10", "message": "INVALID_REQUEST_PARAMETER_ERROR", "category": "bad_param"},
            {"code": "22", "message": "LIMITED", "category": "quota", "gateway": True},
            {"code": "23", "message": "RATE", "category": "rate", "gateway": True},
            {
                "code": "30",
                "message": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
                "category": "auth",
                "gateway": True,
            },
            {"code": "99", "message": "UNKNOWN_ERROR", "category": "server"},
        ]
        answers = dict(ok="00", no_data="00", bad_key="30", missing_param="10", invalid_param="10")
        answers.update(page_size="10", quota="22", rate="23", server="99")
    else:
        codes = [
            {"code": "000", "message": "정상", "category": "ok"},
            {"code": "010", "message": "등록되지 않은 키", "category": "auth"},
            {"code": "013", "message": "조회된 데이터가 없습니다.", "category": "no_data"},
            {"code": "020", "message": "요청 제한 초과", "category": "quota"},
            {"code": "100", "message": "부적절한 값", "category": "bad_param"},
            {"code": "900", "message": "정의되지 않은 오류", "category": "server"},
        ]
        answers = dict(ok="000", no_data="013", bad_key="010", missing_param="100", invalid_param="100")
        answers.update(page_size="100", quota="020", rate="020", server="900")
    return {
        "openapi": "3.1.0",
        "info": {"title": "법령", "version": "1"},
        "servers": [{"url": "https://apis.example.kr/law"}],
        "security": [{"key": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "serviceKey"}},
            "schemas": copy.deepcopy(ROW_SCHEMAS),
        },
        "x-kopa": {
            "platform": "toy",
            "domain": "finance",
            "envelope": envelope,
            **({"gateway": "datagokr"} if envelope == "datagokr" else {}),
            "auth": {"scheme": "key", "env": "TOY_KEY", "key_pattern": "^[0-9a-f]{32}$"},
            "format": {"param": "type", "json": "json", "xml": "xml"},
            "paging": {"page": "pageNo", "size": "numOfRows", "default_size": 2, "max_size": 2},
            "codes": codes,
            "answers": answers,
        },
    }


def law_project(root: Path, envelope: str = "datagokr") -> Project:
    return load_project(write_project(root, law_spec(envelope), WORLD))


async def call_both_wires(project: Project, tool: str, args: dict[str, Any]) -> list[Result]:
    """The client's result of one call in JSON and in XML, every JSON exchange validated by openapi-core."""
    sandbox = open_sandbox(project)
    results = []
    wires: tuple[Wire, ...] = ("json", "xml")
    for wire in wires:
        validator = SpecValidator(project.platforms[0])
        async with sandbox_client(sandbox, "toy", wire=wire) as client:
            client.on_exchange = validator
            results.append(await client.call(tool, args))
        assert validator.requests_checked == 1
        assert validator.responses_checked == (1 if wire == "json" else 0)
    return results


@pytest.mark.anyio
async def test_a_list_with_nested_rows_round_trips_in_json_and_xml(tmp_path: Path) -> None:
    project = law_project(tmp_path)
    as_json, as_xml = await call_both_wires(project, "toy_list_laws", {"query": "자동차"})
    assert as_json.rows == [L1, L3]
    assert as_json.total == 2
    assert as_json.echo == {"키워드": "자동차", "page": "1"}
    assert as_xml == as_json
    # one row: data.go.kr sends `item` as a bare object, its sub-lists still lists
    one_json, one_xml = await call_both_wires(project, "toy_list_laws", {"query": "도로", "pageNo": 1})
    assert one_json.rows == one_xml.rows == [L2]
    assert one_json.echo == one_xml.echo == {"키워드": "도로", "page": "1"}


@pytest.mark.anyio
async def test_an_echo_declared_for_the_whole_platform(tmp_path: Path) -> None:
    spec = law_spec()
    spec["x-kopa"]["echo"] = spec["paths"]["/laws"]["get"]["x-kopa"].pop("echo")
    spec["paths"]["/laws"]["get"]["x-kopa"]["echo"] = [{"field": "page", "param": "pageNo", "default": "0"}]
    project = load_project(write_project(tmp_path, spec, WORLD))
    as_json, as_xml = await call_both_wires(project, "toy_list_laws", {"query": "자동차"})
    assert as_json.echo == as_xml.echo == {"키워드": "자동차", "page": "0"}


@pytest.mark.anyio
async def test_a_nested_record_round_trips_in_json_and_xml(tmp_path: Path) -> None:
    project = law_project(tmp_path, "flat")
    as_json, as_xml = await call_both_wires(project, "toy_get_law", {"ID": "L1"})
    assert as_json.record == as_xml.record == L1
    assert as_json.echo == as_xml.echo == {"target": "law"}
    empty_json, empty_xml = await call_both_wires(project, "toy_get_law", {"ID": "L3"})
    assert empty_json.record == empty_xml.record == L3
    listed_json, listed_xml = await call_both_wires(project, "toy_list_laws", {"query": "법", "pageNo": 2})
    assert listed_json.rows == listed_xml.rows == [L3]
    assert listed_json.echo == listed_xml.echo == {"키워드": "법", "page": "2"}


def get(sandbox: Sandbox, project: Project, path: str, query: dict[str, str]) -> bytes:
    transport = httpx.ASGITransport(app=sandbox.app)
    params = {"serviceKey": sandbox_key(project.platforms[0]), **query}

    async def go() -> bytes:
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as http:
            response = await http.get(sandbox.prefix(project.platforms[0]) + path, params=params)
            return response.content

    import asyncio

    return asyncio.run(go())


def test_the_wire_layout_of_sub_lists_and_echo(tmp_path: Path) -> None:
    """XML: a wrapped sub-list is one element named by the property holding elements named by the item schema's
    xml.name; an unwrapped one repeats the property name; writeOnly link columns stay off the wire. The echo
    follows totalCount in data.go.kr's body."""
    project = law_project(tmp_path)
    sandbox = open_sandbox(project)
    xml = get(sandbox, project, "/laws", {"query": "도로", "type": "xml"}).decode()
    assert (
        "<item><법령ID>L2</법령ID><법령명>도로교통법</법령명><시행일자>20230701</시행일자><조문><조문단위>"
        "<조문번호>1</조문번호><조문제목>목적</조문제목><항><항번호>①</항번호><항내용>이 법은 도로 교통을 다룬다."
        "</항내용></항></조문단위></조문></item>"
    ) in xml
    assert "<totalCount>1</totalCount><키워드>도로</키워드><page>1</page></body>" in xml
    body = json.loads(get(sandbox, project, "/laws", {"query": "도로", "type": "json"}))["response"]["body"]
    assert body["items"]["item"] == L2
    assert (body["키워드"], body["page"]) == ("도로", "1")


def test_one_query_per_level_not_per_parent(tmp_path: Path) -> None:
    project = law_project(tmp_path)
    sandbox = open_sandbox(project)
    statements: list[str] = []
    sandbox.store.db.set_trace_callback(statements.append)
    try:
        get(sandbox, project, "/laws", {"query": "법", "type": "json", "numOfRows": "2"})
    finally:
        sandbox.store.db.set_trace_callback(None)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert sum('FROM "law_article"' in s for s in reads) == 1
    assert sum('FROM "law_paragraph"' in s for s in reads) == 1


@pytest.mark.anyio
async def test_openapi_core_checks_nested_items(tmp_path: Path) -> None:
    """The validation above is not vacuous: a nested field of the wrong type breaks the spec."""
    from openapi_core.validation.response.exceptions import InvalidData

    project = law_project(tmp_path)
    validator = SpecValidator(project.platforms[0])
    async with sandbox_client(open_sandbox(project), "toy") as client:
        request = client.request(project.platforms[0].operation("toy_list_laws"), {"query": "도로"}, "json")
    broken = copy.deepcopy(L2)
    broken["조문"][0]["조문번호"] = "1"
    body = {
        "response": {
            "header": {"resultCode": "00", "resultMsg": "NORMAL SERVICE."},
            "body": {
                "items": {"item": broken},
                "numOfRows": 2,
                "pageNo": 1,
                "totalCount": 1,
                "키워드": "도로",
                "page": "1",
            },
        }
    }
    content = json.dumps(body, ensure_ascii=False).encode()
    with pytest.raises(InvalidData):
        validator(request, httpx.Response(200, headers={"content-type": "application/json"}, content=content))


@pytest.mark.anyio
async def test_generated_tools_type_korean_sub_lists(tmp_path: Path) -> None:
    """The compiled MCP tools: pydantic models for the items (Korean field names, writeOnly links left out), an
    output schema that names them, and structured results equal to the wire's."""
    project = law_project(tmp_path, "flat")
    build(project)
    folder = tmp_path / "generated" / "servers" / "toy"
    tools = {t["name"]: t for t in json.loads((folder / "tools.json").read_text(encoding="utf-8"))["tools"]}
    defs = tools["toy_get_law"]["outputSchema"]["$defs"]
    assert set(defs["Law"]["properties"]) == {"법령ID", "법령명", "시행일자", "조문"}
    assert set(defs["Article"]["properties"]) == {"조문번호", "조문제목", "항"}
    assert set(defs["Paragraph"]["properties"]) == {"항번호", "항내용"}
    spec = importlib.util.spec_from_file_location(
        "lawgen", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    sys.modules["lawgen"] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(sys.modules["lawgen"])
        server_module = importlib.import_module("lawgen.server")
        async with sandbox_client(open_sandbox(project), "toy", wire="xml") as client:
            box = server_module.create_toolbox(client)
            record = await box.call("toy_get_law", {"ID": "L1"})
            assert record.structured == {"code": "000", "message": "정상", "record": L1}
            rows = await box.call("toy_list_laws", {"query": "도로"})
            assert rows.structured is not None and rows.structured["rows"] == [L2]
    finally:
        for name in [k for k in sys.modules if k.startswith("lawgen")]:
            del sys.modules[name]


def line_with(spec: dict[str, Any], text: str) -> int:
    """The 1-based line holding `text` in the spec as write_project writes it."""
    dumped = yaml.safe_dump(spec, allow_unicode=True, sort_keys=False)
    (line,) = [i for i, s in enumerate(dumped.splitlines(), 1) if text in s]
    return line


def broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    spec = law_spec()
    change(spec)
    return spec


def nested_of(spec: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = spec["paths"]["/laws"]["get"]["x-kopa"]["nested"][0]
    return entry


AT = "paths./laws.get.x-kopa"


def test_a_sub_list_the_row_schema_lacks(tmp_path: Path) -> None:
    spec = broken(lambda s: nested_of(s).update(field="조문들"))
    assert problems(tmp_path, spec, WORLD) == [
        f"{SPEC}:{line_with(spec, 'row: ')}: {AT}.row: error: property '조문' of row schema "
        "#/components/schemas/Law is an array, which no x-kopa.nested entry fills; add `nested: [{field: 조문, "
        "table: <world table>, key: {<child column>: <parent property>}}]` or give it a scalar type",
        f"{SPEC}:{line_with(spec, 'field: 조문들')}: {AT}.nested[0].field: error: '조문들' is not a property of "
        "row schema #/components/schemas/Law; add it as `조문들: {type: array, items: {type: object, properties: "
        "...}}` or name one of its array properties",
    ]


def test_a_sub_list_that_is_not_an_array_of_objects(tmp_path: Path) -> None:
    spec = broken(lambda s: nested_of(s).update(field="법령명"))
    del spec["components"]["schemas"]["Law"]["properties"]["조문"]
    assert problems(tmp_path, spec, WORLD) == [
        f"{SPEC}:{line_with(spec, 'field: 법령명')}: {AT}.nested[0].field: error: property '법령명' of row schema "
        "#/components/schemas/Law is not an array of objects; give it `type: array` and `items:` an object schema "
        "with properties (or a $ref to one)",
    ]


def test_a_key_naming_no_parent_property(tmp_path: Path) -> None:
    spec = broken(lambda s: nested_of(s)["nested"][0]["key"].update(조문번호="조번호"))
    assert problems(tmp_path, spec, WORLD) == [
        f"{SPEC}:{line_with(spec, '조문번호: 조번호')}: {AT}.nested[0].nested[0].key.조문번호: error: parent "
        "property '조번호' is not a scalar property of the items of 조문; link to one of its properties (mark it "
        "writeOnly to keep it off the wire)",
    ]


def test_a_sub_list_reading_what_the_world_lacks(tmp_path: Path) -> None:
    def change(spec: dict[str, Any]) -> None:
        nested_of(spec)["key"] = {"법령코드": "법령ID"}
        nested_of(spec)["order"] = [{"column": "조번호"}]
        nested_of(spec)["nested"][0]["table"] = "law_paragraphs"

    spec = broken(change)
    spec["components"]["schemas"]["Paragraph"]["properties"]["항제목"] = {"type": "string"}
    columns = "법령ID, 조문번호, 조문제목"
    assert problems(tmp_path, spec, WORLD) == [
        f"{SPEC}:{line_with(spec, '법령코드: 법령ID')}: {AT}.nested[0].key.법령코드: error: key column '법령코드' is "
        f"not a column of 'law_article' (columns: {columns})",
        f"{SPEC}:{line_with(spec, 'column: 조번호')}: {AT}.nested[0].order[0].column: error: order column '조번호' "
        f"is not a column of 'law_article' (columns: {columns})",
        f"{SPEC}:{line_with(spec, 'table: law_paragraphs')}: {AT}.nested[0].nested[0].table: error: world has no "
        "table or view 'law_paragraphs'; define it under specs/world/",
    ]
    spec["paths"]["/laws"]["get"]["x-kopa"]["nested"] = [copy.deepcopy(ARTICLES)]
    assert problems(tmp_path / "columns", spec, WORLD) == [
        f"{SPEC}:{line_with(spec, 'table: law_paragraph')}: {AT}.nested[0].nested[0].table: error: world view "
        "'law_paragraph' lacks columns 항제목 of the items of 항; add them to the view or remove them from the "
        "item schema",
    ]


def test_an_echo_of_a_parameter_the_operation_lacks(tmp_path: Path) -> None:
    spec = broken(
        lambda s: s["paths"]["/laws"]["get"]["x-kopa"]["echo"].append({"field": "법령", "param": "lawNm"})
    )
    spec["x-kopa"]["echo"] = [{"field": "target", "param": "target"}]
    assert problems(tmp_path, spec, WORLD) == [
        f"{SPEC}:{line_with(spec, 'param: lawNm')}: {AT}.echo[2].param: error: echo parameter 'lawNm' is not a "
        "parameter of this operation; repeat one of its parameters (or declare the echo on the operations that take "
        "it)",
        f"{SPEC}:{line_with(spec, 'param: target')}: x-kopa.echo[0].param: error: echo parameter 'target' is not a "
        "parameter of toy_list_laws; declare this echo on the operations that take it",
    ]


def test_an_echo_the_family_cannot_place(tmp_path: Path) -> None:
    def change(spec: dict[str, Any]) -> None:
        spec["x-kopa"]["envelope"] = "hub"
        del spec["x-kopa"]["gateway"]

    spec = broken(change)
    assert problems(tmp_path, spec, WORLD) == [
        f"{SPEC}:{line_with(spec, '- field: 키워드')}: {AT}.echo: error: envelope family 'hub' places no echoed "
        "fields (its real API repeats none); remove `echo` or teach the family where they go (kopa_gen/envelopes/)",
    ]
