"""Cross-platform chains of the traffic and district domains, through the real client against the sandbox: a TAGO
city code leads to stops, the routes through a stop, its arrivals and the buses behind them, all consistent with
one another; bus stops stand in current legal districts; a company's head office (OpenDART `adres`) found by
도로명주소 keyword carries the company's legal district as `admCd`, which the legal-district service knows; and
paging over every stop of a city reaches the total it announces."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import httpx
import pytest

from kopa_gen.client.client import Result
from kopa_gen.compose import SANDBOX_HOST, sandbox_client
from kopa_gen.project import Project
from kopa_gen.sandbox.config import sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.world.build import BuiltWorld
from kopa_gen.world.lazy import open_world


@pytest.fixture
def db(world: BuiltWorld) -> Iterator[sqlite3.Connection]:
    conn = open_world(world.path)
    yield conn
    conn.close()


async def call(sandbox: Sandbox, platform: str, tool: str, args: dict[str, object]) -> Result:
    async with sandbox_client(sandbox, platform) as client:
        return await client.call(tool, args)


@pytest.mark.anyio
async def test_city_code_to_stops_to_routes_to_arrivals(sandbox: Sandbox) -> None:
    cities = await call(sandbox, "tago", "tago_list_city_codes", {})
    daejeon = next(c for c in cities.rows if "대전" in c["cityname"])
    code = daejeon["citycode"]
    assert isinstance(code, int)  # numeric fields are JSON numbers

    stops = await call(
        sandbox, "tago", "tago_list_stops", {"cityCode": code, "nodeNm": "사거리", "numOfRows": 50}
    )
    assert stops.total > 50 and all("사거리" in s["nodenm"] for s in stops.rows)
    stop, routes = None, None
    for candidate in stops.rows:
        through = await call(
            sandbox, "tago", "tago_list_stop_routes", {"cityCode": code, "nodeid": candidate["nodeid"]}
        )
        if through.total >= 2:
            stop, routes = candidate, through
            break
    assert stop is not None and routes is not None, "some 사거리 stop is served by two routes or more"

    arrivals = await call(
        sandbox,
        "tago",
        "tago_list_stop_arrivals",
        {"cityCode": code, "nodeId": stop["nodeid"], "numOfRows": 100},
    )
    assert arrivals.total >= 1
    through_ids = {r["routeid"] for r in routes.rows}
    for arrival in arrivals.rows:
        assert arrival["nodeid"] == stop["nodeid"] and arrival["nodenm"] == stop["nodenm"]
        assert arrival["routeid"] in through_ids
        assert isinstance(arrival["arrtime"], int) and arrival["arrprevstationcnt"] >= 1

    # The bus an arrival announces is on its route, arrprevstationcnt stops before this stop.
    arrival = arrivals.rows[0]
    route_id = arrival["routeid"]
    path = await call(
        sandbox, "tago", "tago_list_route_stops", {"cityCode": code, "routeId": route_id, "numOfRows": 1000}
    )
    assert 20 <= path.total <= 150 and [s["nodeord"] for s in path.rows] == list(range(1, path.total + 1))
    orders = [s["nodeord"] for s in path.rows if s["nodeid"] == stop["nodeid"]]
    buses = await call(
        sandbox,
        "tago",
        "tago_list_route_bus_locations",
        {"cityCode": code, "routeId": route_id, "numOfRows": 100},
    )
    assert any(o - b["nodeord"] == arrival["arrprevstationcnt"] for o in orders for b in buses.rows)
    for bus in buses.rows:
        on_path = path.rows[bus["nodeord"] - 1]
        assert (bus["nodeid"], bus["gpslati"]) == (on_path["nodeid"], on_path["gpslati"])

    info = await call(sandbox, "tago", "tago_get_route_info", {"cityCode": code, "routeId": route_id})
    assert info.rows[0]["startnodenm"] == path.rows[0]["nodenm"]


@pytest.mark.anyio
async def test_nearby_stops_are_within_about_500_m(sandbox: Sandbox) -> None:
    stops = await call(sandbox, "tago", "tago_list_stops", {"cityCode": 25, "nodeNo": 11793})
    here = stops.rows[0]
    near = await call(
        sandbox,
        "tago",
        "tago_list_nearby_stops",
        {"gpsLati": str(here["gpslati"]), "gpsLong": str(here["gpslong"]), "numOfRows": 100},
    )
    assert here["nodeid"] in {s["nodeid"] for s in near.rows} and 3 <= near.total <= 40
    for s in near.rows:
        assert abs(s["gpslati"] - here["gpslati"]) <= 0.0045 and abs(s["gpslong"] - here["gpslong"]) <= 0.0056


def test_bus_stops_stand_in_current_legal_districts_of_their_city(db: sqlite3.Connection) -> None:
    stray = db.execute(
        """SELECT count(*) FROM tago_stops s JOIN tago_cities c ON c.citycode = s.citycode
           LEFT JOIN regions r ON r.region_cd = s.region_cd AND r.abolished = 0 AND r.umd_cd != '000'
           WHERE r.region_cd IS NULL
              OR NOT (substr(s.region_cd, 1, length(c.region_a)) = c.region_a
                      OR (c.region_b != '' AND substr(s.region_cd, 1, length(c.region_b)) = c.region_b))"""
    ).fetchone()[0]
    assert stray == 0
    cities, stops = db.execute("SELECT count(DISTINCT citycode), count(*) FROM tago_stops").fetchone()
    assert cities == db.execute("SELECT count(*) FROM tago_cities").fetchone()[0] and stops > 10_000


@pytest.mark.anyio
async def test_company_head_office_resolves_through_juso_to_its_legal_district(
    sandbox: Sandbox, db: sqlite3.Connection
) -> None:
    picked = db.execute(
        "SELECT corp_code, region_cd FROM companies WHERE length(adres) <= 80 ORDER BY corp_code LIMIT 6 OFFSET 5000"
    ).fetchall()
    for corp_code, region_cd in [*picked, ("00164779", "4150025330")]:
        company = await call(sandbox, "dart", "dart_company", {"corp_code": corp_code})
        assert company.record is not None
        found = await call(sandbox, "juso", "juso_search_addresses", {"keyword": company.record["adres"]})
        assert found.total >= 1, company.record["adres"]
        address = found.rows[0]
        assert address["admCd"] == region_cd
        # admCd is a legal-district code the legal-district service serves, under the names juso gives.
        name = " ".join(
            p for p in (address["siNm"], address["sggNm"], address["emdNm"], address["liNm"]) if p
        )
        districts = await call(sandbox, "region", "region_list_legal_districts", {"locatadd_nm": name})
        assert region_cd in {d["region_cd"] for d in districts.rows}

    english = await call(sandbox, "juso", "juso_search_english_addresses", {"keyword": "경충대로 2091"})
    assert english.rows[0]["roadAddr"].startswith("2091 Gyeongchung-daero, Bubal-eup, Icheon-si")


@pytest.mark.anyio
async def test_paging_over_all_stops_of_a_city_reaches_the_total(
    sandbox: Sandbox, db: sqlite3.Connection
) -> None:
    seen: list[str] = []
    page, total = 1, None
    while total is None or len(seen) < total:
        result = await call(
            sandbox, "tago", "tago_list_stops", {"cityCode": 25, "pageNo": page, "numOfRows": 1000}
        )
        total = result.total
        assert result.rows, f"page {page} is empty before the total {total}"
        seen.extend(s["nodeid"] for s in result.rows)
        page += 1
    assert len(seen) == len(set(seen)) == total > 2000
    assert total == db.execute("SELECT count(*) FROM tago_stops WHERE citycode = 25").fetchone()[0]


@pytest.mark.anyio
async def test_juso_refuses_keywords_as_the_real_service(project: Project, sandbox: Sandbox) -> None:
    key = sandbox_key(project.platform("juso"))

    async def code(**query: str) -> str:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=sandbox.app), base_url=SANDBOX_HOST
        ) as http:
            reply = await http.get("/juso/addrlink/addrLinkApi.do", params={"resultType": "json", **query})
        common: dict[str, str] = reply.json()["results"]["common"]
        return common["errorCode"]

    assert await code(confmKey=key) == "E0005"
    assert await code(confmKey=key, keyword="삼") == "E0008"
    assert await code(confmKey="nope", keyword="삼성로") == "E0001"
    assert await code(confmKey=key, keyword="삼성로 129") == "0"
