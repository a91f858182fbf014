"""한국도로공사 고속도로 공공데이터 (data.ex.co.kr) in the sandbox: the flat `{code, message, count, numOfRows,
pageNo, pageSize, <rows>}` envelope (pageSize is the number of pages; the rows key is `list` or the operation's
own, as the row schema's `xml.name` says), the same rows in JSON and XML, the real bad-key answer, paging past the
end, the sandbox key of the 10-digit shape, and chains: a rest area's address resolves through the legal-district
service to the district it stands in, and a route's traffic is the sum of its tollgates'."""

from __future__ import annotations

import math
import re
import sqlite3
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kopa_gen.client.client import Result
from kopa_gen.compose import SANDBOX_HOST, sandbox_client
from kopa_gen.envelopes.expressway import rows_key
from kopa_gen.language.platform import Operation, Platform
from kopa_gen.project import Project
from kopa_gen.runtime.paths import evaluate, select
from kopa_gen.sandbox.config import sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.world.build import BuiltWorld
from kopa_gen.world.lazy import open_world

PID = "expressway"


@pytest.fixture
def db(world: BuiltWorld) -> Iterator[sqlite3.Connection]:
    conn = open_world(world.path)
    yield conn
    conn.close()


@pytest.fixture
def platform(project: Project) -> Platform:
    return project.platform(PID)


def operation(platform: Platform, path: str) -> Operation:
    return next(op for op in platform.operations if op.path == path)


async def get(sandbox: Sandbox, platform: Platform, path: str, **query: Any) -> httpx.Response:
    """One raw request to the sandbox at the real path, as any client of data.ex.co.kr sends it."""
    query.setdefault("key", sandbox_key(platform))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=sandbox.app), base_url=SANDBOX_HOST
    ) as http:
        return await http.get(f"/{PID}{platform.base_path}{path}", params=query)


async def call(sandbox: Sandbox, pid: str, tool: str, args: dict[str, object]) -> Result:
    async with sandbox_client(sandbox, pid) as client:
        return await client.call(tool, args)


def test_the_sandbox_key_has_the_real_shape_and_is_derived(platform: Platform) -> None:
    assert platform.kopa.auth.sandbox_key is None  # derived from the platform id, never written in the spec
    assert re.fullmatch(r"[0-9]{10}", sandbox_key(platform))


@pytest.mark.anyio
async def test_travel_times_json_envelope_and_xml_parity(
    sandbox: Sandbox, platform: Platform, db: sqlite3.Connection
) -> None:
    total = db.execute(
        "SELECT count(*) FROM ex_unit_trtm WHERE iStartUnitCode = '101' AND iEndUnitCode = '103'"
    ).fetchone()[0]
    assert total >= 20
    args = {"iStartUnitCode": "101", "iEndUnitCode": "103", "numOfRows": 7, "pageNo": 2}
    reply = await get(sandbox, platform, "/trtm/realUnitTrtm", type="json", **args)
    body = reply.json()
    assert list(body)[:6] == ["code", "message", "count", "numOfRows", "pageNo", "pageSize"]
    assert (body["code"], body["message"]) == ("SUCCESS", "인증키가 유효합니다.")
    assert (body["count"], body["numOfRows"], body["pageNo"]) == (total, 7, 2)
    assert body["pageSize"] == math.ceil(total / 7)  # the number of pages, not rows per page
    assert "list" not in body and len(body["realUnitTrtmVO"]) == 7
    first = body["realUnitTrtmVO"][0]
    assert (first["startUnitCode"], first["startUnitNm"]) == ("101 ", "서울")  # CHAR(4), as the real API
    assert (first["endUnitCode"], first["endUnitNm"]) == ("103 ", "수원신갈")
    assert "iStartUnitCode" not in first  # the filter column is never sent
    assert float(first["timeMin"]) <= float(first["timeAvg"]) <= float(first["timeMax"])

    xml = await get(sandbox, platform, "/trtm/realUnitTrtm", type="xml", **args)
    assert xml.headers["content-type"].startswith("application/xml")
    root = ET.fromstring(xml.content)
    assert root.tag == "data"
    assert {c.tag: c.text for c in root if c.tag != "realUnitTrtmVO"} == {
        k: str(v) for k, v in body.items() if k != "realUnitTrtmVO"
    }
    rows = [{c.tag: c.text or "" for c in el} for el in root.findall("realUnitTrtmVO")]
    assert rows == [{k: str(v) for k, v in row.items()} for row in body["realUnitTrtmVO"]]


@pytest.mark.anyio
async def test_rows_key_is_the_operations_own_where_the_spec_says(
    sandbox: Sandbox, platform: Platform
) -> None:
    keys = {op.path: rows_key(op) for op in platform.operations}
    assert keys["/trafficapi/trafficIc"] == "trafficIc" and keys["/locationinfo/locationinfoRest"] == "list"
    for path, key in keys.items():
        body = (await get(sandbox, platform, path, type="json")).json()
        assert body["code"] == "SUCCESS" and isinstance(body[key], list) and body[key], path
        assert body["pageSize"] == math.ceil(body["count"] / body["numOfRows"]), path
        assert [k for k in body if isinstance(body[k], list)] == [key], path


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["json", "xml"])
async def test_an_invalid_key_gets_the_real_error(sandbox: Sandbox, platform: Platform, wire: str) -> None:
    reply = await get(sandbox, platform, "/locationinfo/locationinfoRest", key="0000000000", type=wire)
    assert reply.status_code == 200
    if wire == "json":
        body = reply.json()
        assert body == {"code": "ERROR", "message": "인증키가 유효하지 않습니다."}
    else:
        root = ET.fromstring(reply.content)
        assert (root.tag, root.findtext("code"), root.findtext("message")) == (
            "data",
            "ERROR",
            "인증키가 유효하지 않습니다.",
        )
        assert root.find("list") is None


@pytest.mark.anyio
async def test_paging_past_the_end_and_over_every_page(sandbox: Sandbox, db: sqlite3.Connection) -> None:
    total = db.execute("SELECT count(*) FROM ex_rest_areas").fetchone()[0]
    assert 150 <= total <= 260
    seen: list[str] = []
    page = 1
    while True:
        result = await call(sandbox, PID, "expressway_list_rest_areas", {"numOfRows": 99, "pageNo": page})
        assert result.total == total
        if not result.rows:
            break
        seen.extend(r["serviceAreaCode"] for r in result.rows)
        page += 1
    assert page == math.ceil(total / 99) + 1  # the first page past the end is empty, and still says the total
    assert len(seen) == len(set(seen)) == total
    assert seen[0] == "A00001"
    first = await call(sandbox, PID, "expressway_list_rest_areas", {"serviceAreaCode": "A00001"})
    assert first.rows[0]["unitName"] == "서울만남(부산)휴게소" and first.rows[0]["stdRestCd"] == "000001"


@pytest.mark.anyio
async def test_rest_area_address_resolves_through_the_legal_district_service(
    sandbox: Sandbox, db: sqlite3.Connection
) -> None:
    picked = db.execute(
        "SELECT serviceAreaCode, region_cd FROM ex_rest_areas ORDER BY serviceAreaCode LIMIT 5 OFFSET 40"
    ).fetchall()
    for code, region_cd in [("A00001", "1165010900"), *picked]:
        area = await call(sandbox, PID, "expressway_list_rest_areas", {"serviceAreaCode": code})
        std = area.rows[0]["stdRestCd"]
        info = await call(sandbox, PID, "expressway_list_rest_area_addresses", {"svarCd": std})
        address = info.rows[0]["svarAddr"]
        assert info.rows[0]["svarNm"] == area.rows[0]["unitName"]
        district = address.rsplit(" ", 1)[0]  # the lot number is the last word
        found = await call(sandbox, "region", "region_list_legal_districts", {"locatadd_nm": district})
        names = {d["region_cd"]: d["locatadd_nm"] for d in found.rows}
        assert names.get(region_cd) == district, (code, address)
        foods = await call(sandbox, PID, "expressway_list_rest_area_foods", {"serviceAreaCode": code})
        assert 1 <= foods.total <= 4
        for food in foods.rows:
            assert food["serviceAreaCode2"] == std and food["serviceAreaName"] == area.rows[0]["unitName"]
            assert re.fullmatch(r"￦[0-9]{1,2},[0-9]{3}", food["salePrice"]), food["salePrice"]


@pytest.mark.anyio
async def test_route_traffic_is_the_sum_of_its_tollgates(sandbox: Sandbox, db: sqlite3.Connection) -> None:
    day = db.execute("SELECT max(sumDate) FROM ex_traffic_ic").fetchone()[0]
    units = await call(sandbox, PID, "expressway_list_tollgates", {"routeNo": "0150", "numOfRows": 99})
    assert 20 <= units.total <= 40 and {u["routeName"] for u in units.rows} == {"서해안선"}
    entering = 0
    for unit in units.rows:
        traffic = await call(
            sandbox,
            PID,
            "expressway_list_tollgate_traffic",
            {"unitCode": unit["unitCode"], "sumDate": day, "inoutType": "0", "numOfRows": 99},
        )
        assert traffic.total == 24 and {t["unitCode"] for t in traffic.rows} == {unit["unitCode"] + " "}
        entering += sum(t["trafficAmout"] for t in traffic.rows)
    route = await call(
        sandbox, PID, "expressway_list_route_traffic", {"routeNo": "0150", "sumDate": day, "numOfRows": 99}
    )
    assert route.total == 24 and sum(r["trafficAmout"] for r in route.rows) == entering > 0
    every = await call(sandbox, PID, "expressway_list_total_traffic", {"sumDate": day, "numOfRows": 99})
    assert every.total == 24 and sum(r["trafficAmout"] for r in every.rows) > entering


def test_the_world_has_the_declared_sizes(db: sqlite3.Connection) -> None:
    units, names = db.execute("SELECT count(*), count(DISTINCT unitName) FROM ex_units").fetchone()
    assert 350 <= units <= 999 and names == units
    stray = db.execute(
        """SELECT count(*) FROM ex_units u LEFT JOIN regions r ON r.region_cd = u.region_cd AND r.abolished = 0
           WHERE r.region_cd IS NULL"""
    ).fetchone()[0]
    assert stray == 0
    assert db.execute("SELECT count(*) FROM ex_traffic_ic").fetchone()[0] > 20_000
    known = dict(db.execute("SELECT unitCode, unitName FROM ex_units WHERE unitCode IN ('101', '103')"))
    assert known == {"101": "서울", "103": "수원신갈"}


@pytest.mark.anyio
async def test_won_prices_compare_as_numbers_in_the_path_language(
    sandbox: Sandbox, db: sqlite3.Connection
) -> None:
    """Rest-area dishes are priced as '￦13,000': `@max`/`@min` and `max` read them as numbers, where text order
    would put '￦9,500' above '￦13,000'."""
    route = db.execute(
        "SELECT routeCode FROM ex_rest_bestfoods GROUP BY routeCode ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()[0]
    foods = await call(sandbox, PID, "expressway_list_rest_area_foods", {"routeCode": route, "numOfRows": 99})
    rows = foods.rows
    assert len(rows) == foods.total > 1
    won = {
        r["batchMenu"] + "@" + r["serviceAreaName"]: int(r["salePrice"][1:].replace(",", "")) for r in rows
    }
    dearest = max(won.values())
    texts = [r["salePrice"] for r in rows]
    assert max(texts) != f"￦{dearest:,}"  # the sample is one where text order is wrong
    result = {"rows": rows}
    assert evaluate(result, "rows[*].salePrice | max") == dearest
    assert evaluate(result, "rows[*].salePrice | min") == min(won.values())
    top = select(result, "rows[salePrice=@max].batchMenu").values
    assert sorted(top) == sorted(
        r["batchMenu"] for r in rows if won[r["batchMenu"] + "@" + r["serviceAreaName"]] == dearest
    )
