"""Each envelope family renders what the real platform sends and parses it back, in JSON and XML."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from kopa_gen.envelopes import Page, family
from kopa_gen.envelopes.base import coerce
from kopa_gen.envelopes.gateway import parse_gateway, render_gateway
from kopa_gen.language.platform import Platform, load_platform
from kopa_gen.project import envelope_families
from tests.conftest import ROOT, repository_project


@functools.cache
def platform(pid: str) -> Platform:
    loaded, diags = load_platform(
        ROOT / "specs" / "platforms" / pid / "openapi.yaml", ROOT, envelope_families()
    )
    assert loaded is not None, [d.render() for d in diags]
    return loaded


PIDS = [p.id for p in repository_project().platforms if not p.kopa.local]


def sample_rows(p: Platform, tool: str, n: int) -> list[dict[str, object]]:
    op = p.operation(tool)
    props = op.row_schema["properties"]
    return [
        coerce(props, {k: f"{k}-{i}" if props[k].get("type", "string") == "string" else i for k in props})
        for i in range(n)
    ]


# each platform's first paged list operation (every envelope family frames its paging facts)
LIST_TOOL = {
    p.id: next(op.tool for op in p.operations if op.kopa.shape == "list" and p.paged(op))
    for p in map(platform, PIDS)
}


@pytest.mark.parametrize("pid", PIDS)
@pytest.mark.parametrize("wire", ["json", "xml"])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_ok_roundtrip(pid: str, wire: str, n: int) -> None:
    p = platform(pid)
    op = p.operation(LIST_TOOL[pid])
    family_ = family(p.kopa.envelope)
    rows = sample_rows(p, op.tool, n)
    ok = p.code(p.kopa.answers.ok if n else p.kopa.answers.no_data)
    reply = family_.render(p, op, ok, wire, Page(rows, total=n * 10, page=2, size=n))  # type: ignore[arg-type]
    parsed = family_.parse(p, op, reply.body, wire)  # type: ignore[arg-type]
    assert parsed.code == ok.code and parsed.message == ok.message
    props = op.row_schema["properties"]
    assert [coerce(props, r) for r in parsed.rows] == (rows if ok.category.value == "ok" else [])
    if n and ok.category.value == "ok":
        assert parsed.total == n * 10


def test_datagokr_item_shapes() -> None:
    """data.go.kr JSON: array for 2+ rows, bare object for one row, empty string for none; [] where the operation
    says so (FSC stock prices)."""
    p = platform("fsc")
    family_ = family("datagokr")
    outline = p.operation("fsc_get_corp_outline")
    prices = p.operation("fsc_get_stock_prices")
    ok = p.code("00")

    def items(op_tool: str, n: int) -> object:
        op = p.operation(op_tool)
        reply = family_.render(p, op, ok, "json", Page(sample_rows(p, op_tool, n), n, 1, 10))
        return json.loads(reply.body)["response"]["body"]["items"]

    assert items(outline.tool, 0) == ""
    assert isinstance(items(outline.tool, 1)["item"], dict)  # type: ignore[index]
    assert isinstance(items(outline.tool, 2)["item"], list)  # type: ignore[index]
    assert items(prices.tool, 0) == {"item": []}


def test_hub_no_data_is_bare_result() -> None:
    p = platform("neis")
    op = p.operation("neis_get_meals")
    reply = family("hub").render(p, op, p.code("INFO-200"), "json", Page([], 0, 1, 100))
    assert json.loads(reply.body) == {
        "RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}
    }
    xml = family("hub").render(p, op, p.code("INFO-200"), "xml", Page([], 0, 1, 100))
    assert xml.body.decode().endswith(
        "<RESULT><CODE>INFO-200</CODE><MESSAGE>해당하는 데이터가 없습니다.</MESSAGE></RESULT>"
    )


def test_stanregin_quirks() -> None:
    p = platform("region")
    op = p.operation("region_list_legal_districts")
    reply = family("stanregin").render(
        p, op, p.code("INFO-0"), "json", Page(sample_rows(p, op.tool, 1), 1, 1, 10)
    )
    assert reply.content_type.startswith("text/html")
    body = json.loads(reply.body)
    head = body["StanReginCd"][0]["head"]
    assert head[0] == {"totalCount": 1}
    assert head[1] == {"numOfRows": "10", "pageNo": "1", "type": "JSON"}
    assert head[2] == {"RESULT": {"resultCode": "INFO-0", "resultMsg": "NOMAL SERVICE"}}


def test_dart_envelope_shapes() -> None:
    p = platform("dart")
    op = p.operation("dart_list_disclosures")
    reply = family("dart").render(p, op, p.code("000"), "json", Page(sample_rows(p, op.tool, 2), 25, 2, 10))
    body = json.loads(reply.body)
    assert (body["status"], body["page_no"], body["page_count"], body["total_count"], body["total_page"]) == (
        "000",
        2,
        10,
        25,
        3,
    )
    record_op = p.operation("dart_company")
    rec = family("dart").render(p, record_op, p.code("000"), "json", record={"corp_code": "00126380"})
    assert json.loads(rec.body) == {"status": "000", "message": "정상", "corp_code": "00126380"}
    err = family("dart").render(p, op, p.code("013"), "xml")
    assert err.body.decode().endswith(
        "<result><status>013</status><message>조회된 데이타가 없습니다.</message></result>"
    )


def test_gateway_error_is_xml_and_parses() -> None:
    p = platform("fsc")
    reply = render_gateway(p.code("30"))
    assert reply.content_type.startswith("text/xml")
    assert parse_gateway(reply.body) == ("30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR")
    assert parse_gateway(b'{"response": {}}') is None


def test_write_only_columns_never_leave_the_sandbox() -> None:
    p = platform("dart")
    op = p.operation("dart_list_disclosures")
    props = op.row_schema["properties"]
    hidden = [k for k, v in props.items() if v.get("writeOnly")]
    assert hidden, "list.json has filter-only columns (pblntf_ty)"
    row = coerce(props, {k: "x" for k in props})
    assert not set(hidden) & set(row)


def test_value_typing_follows_row_schema(tmp_path: Path) -> None:
    props = {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "number"}}
    assert coerce(props, {"a": 5, "b": "7", "c": "1.5"}) == {"a": "5", "b": 7, "c": 1.5}
    assert coerce(props, {"a": None, "b": None, "c": ""}) == {"a": "", "b": None, "c": None}
