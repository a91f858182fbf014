"""`kopa-gen sandbox serve` on loopback, used by a client written against the real APIs' documentation (stdlib
urllib, real paths and parameter names): only the base URL changes."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator

import pytest

from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT, repository_project


@pytest.fixture(scope="module")
def served(world: BuiltWorld) -> Iterator[tuple[str, dict[str, str]]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "KOPA_GEN_ROOT": str(ROOT)}
    cmd = [sys.executable, "-m", "kopa_gen", "sandbox", "serve", "--port", str(port), "--no-limits"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    keys: dict[str, str] = {}
    try:
        assert proc.stdout is not None
        while len(keys) < len(repository_project().platforms):  # one line per platform
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(proc.stderr.read() if proc.stderr else "sandbox exited")
            found = re.match(r"(\w+)\s.*key \w+=(\S+)$", line.strip())
            if found:
                keys[found.group(1)] = found.group(2)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", keys
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def get(url: str, **params: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url + "?" + urllib.parse.urlencode(params), timeout=30) as response:
        return response.headers["Content-Type"], response.read()


def test_dart_corp_code_zip_and_key_check(served: tuple[str, dict[str, str]]) -> None:
    base, keys = served
    kind, body = get(f"{base}/dart/api/corpCode.xml", crtfc_key=keys["dart"])
    assert kind == "application/zip" and body[:2] == b"PK"
    url = f"{base}/dart/api/corpCode.xml?" + urllib.parse.urlencode({"crtfc_key": keys["dart"]})
    with urllib.request.urlopen(url, timeout=30) as response:  # the header a popular client needs
        assert response.headers["Content-Disposition"] == "attachment; filename=CORPCODE.zip"
    xml = zipfile.ZipFile(io.BytesIO(body)).read("CORPCODE.xml").decode()
    assert "<list><corp_code>00126380</corp_code><corp_name>삼성전자</corp_name>" in xml
    assert xml.count("<list>") >= 100_000
    _, error = get(f"{base}/dart/api/company.json", crtfc_key="0" * 40, corp_code="00126380")
    assert json.loads(error) == {"status": "010", "message": "등록되지 않은 키입니다."}
    _, company = get(f"{base}/dart/api/company.json", crtfc_key=keys["dart"], corp_code="00126380")
    assert json.loads(company)["corp_name"] == "삼성전자(주)"
    _, xml_company = get(f"{base}/dart/api/company.xml", crtfc_key=keys["dart"], corp_code="00126380")
    assert b"<status>000</status>" in xml_company


def test_neis_hub(served: tuple[str, dict[str, str]]) -> None:
    base, keys = served
    _, body = get(
        f"{base}/neis/hub/schoolInfo", KEY=keys["neis"], Type="json", pSize="5", ATPT_OFCDC_SC_CODE="E10"
    )
    data = json.loads(body)
    head, rows = data["schoolInfo"][0]["head"], data["schoolInfo"][1]["row"]
    assert head[1]["RESULT"]["CODE"] == "INFO-000" and len(rows) == 5 and head[0]["list_total_count"] > 5
    _, too_big = get(f"{base}/neis/hub/schoolInfo", KEY=keys["neis"], Type="json", pSize="1001")
    assert json.loads(too_big)["RESULT"]["CODE"] == "ERROR-336"
    _, xml = get(f"{base}/neis/hub/schoolInfo", KEY=keys["neis"], pSize="1", ATPT_OFCDC_SC_CODE="E10")
    assert xml.startswith(b'<?xml version="1.0" encoding="UTF-8"?><schoolInfo><head><list_total_count>')


def test_fsc_and_region_on_datagokr(served: tuple[str, dict[str, str]]) -> None:
    base, keys = served
    _, body = get(
        f"{base}/fsc/1160100/GetStockSecuritiesInfoService_V2/getStockPriceInfo_V2",
        serviceKey=keys["fsc"],
        resultType="json",
        likeSrtnCd="005930",
        numOfRows="1",
    )
    item = json.loads(body)["response"]["body"]["items"]["item"]
    assert isinstance(item, dict) and item["srtnCd"] == "005930" and item["isinCd"] == "KR7005930003"
    kind, body = get(
        f"{base}/region/1741000/StanReginCd/getStanReginCdList",
        ServiceKey=keys["region"],
        type="json",
        locatadd_nm="서울특별시 송파구 잠실동",
    )
    assert kind.startswith("text/html")
    assert json.loads(body)["StanReginCd"][1]["row"][0]["region_cd"] == "1171010100"
    _, bad = get(f"{base}/region/1741000/StanReginCd/getStanReginCdList", ServiceKey="nope", type="json")
    assert b"<returnReasonCode>30</returnReasonCode>" in bad
    # a path no service has: the gateway's XML envelope (code 12), not a bare 404
    kind, missing = get(f"{base}/fsc/1160100/service/NoSuchService/getNothing", serviceKey=keys["fsc"])
    assert kind.startswith("text/xml")
    assert b"<returnReasonCode>12</returnReasonCode>" in missing and b"NO_OPENAPI_SERVICE_ERROR" in missing


def test_fsc_v1_stock_prices_as_a_generated_client_asks_for_them(served: tuple[str, dict[str, str]]) -> None:
    """data-go-kr-client 4.16.0's get_stock_price_info calls the V1 path (`service/`, no `_V2`): serviceKey first,
    then the arguments it was given, then always pageNo=1&numOfRows=1000 (the request's shape as read from the
    package, not its code). With resultType=json the body parses as JSON; without it the API answers XML, as the
    real one does by default."""
    base, keys = served
    url = f"{base}/fsc/1160100/service/GetStockSecuritiesInfoService/getStockPriceInfo"
    query = [("serviceKey", keys["fsc"]), ("resultType", "json"), ("likeSrtnCd", "005930")]
    query += [("pageNo", "1"), ("numOfRows", "1000")]
    with urllib.request.urlopen(url + "?" + urllib.parse.urlencode(query), timeout=30) as response:
        body = json.loads(response.read())
    assert body["response"]["header"]["resultCode"] == "00"
    items = body["response"]["body"]["items"]["item"]
    assert items and all(item["srtnCd"] == "005930" for item in items)
    assert int(body["response"]["body"]["totalCount"]) == len(items) <= 1000
    kind, xml = get(url, serviceKey=keys["fsc"], likeSrtnCd="005930", pageNo="1", numOfRows="1")
    assert kind.startswith("text/xml") and b"<srtnCd>005930</srtnCd>" in xml


def test_mois_conditions_on_the_wire(served: tuple[str, dict[str, str]]) -> None:
    """행정안전부's 인허가 datasets select rows with `cond[COLUMN::OP]` parameters, percent-encoded on the wire as any
    client's URL encoder writes them (data-go-kr-client sends serviceKey, returnType, the conditions, then
    pageNo=1&numOfRows=1000): EQ keeps the rows of one local government, whose code 지역코드조회 lists; LIKE keeps
    the names containing the value. The dataset is the first of the spec's taking a local government's code."""
    base, keys = served
    platform = repository_project().platform("mois")
    op = next(
        o
        for o in platform.operations
        if any(p.name == "cond[OPN_ATMY_GRP_CD::EQ]" for p in o.params)
        and not any(p.required for p in o.params)
        and any(p.name == "cond[BPLC_NM::LIKE]" for p in o.params)
    )
    url = f"{base}/mois/1741000{op.route}"

    def items(*conds: tuple[str, str]) -> list[dict[str, str]]:
        query = [
            ("serviceKey", keys["mois"]),
            ("returnType", "json"),
            *conds,
            ("pageNo", "1"),
            ("numOfRows", "1000"),
        ]
        with urllib.request.urlopen(url + "?" + urllib.parse.urlencode(query), timeout=30) as response:
            body = json.loads(response.read())["response"]
        assert body["header"]["resultCode"] == "00"
        found = body["body"]["items"]
        rows = [] if found == "" else found["item"]
        return [rows] if isinstance(rows, dict) else rows

    first = items()[0]
    _, areas = get(
        f"{base}/mois/1741000/codeInquiryService/getAreaCodeInquiryList",
        serviceKey=keys["mois"],
        returnType="json",
        numOfRows="1000",
    )
    codes = {a["gugunCd"] for a in json.loads(areas)["response"]["body"]["items"]["item"]}
    assert first["OPN_ATMY_GRP_CD"] in codes
    same = items(("cond[OPN_ATMY_GRP_CD::EQ]", first["OPN_ATMY_GRP_CD"]))
    assert same and all(r["OPN_ATMY_GRP_CD"] == first["OPN_ATMY_GRP_CD"] for r in same)
    part = first["BPLC_NM"][-3:]
    named = items(("cond[BPLC_NM::LIKE]", part))
    assert first in named and all(part in r["BPLC_NM"] for r in named)
    assert "%5B" in urllib.parse.urlencode([("cond[BPLC_NM::LIKE]", part)])  # the brackets went out encoded


def test_molit_codes_chain_to_the_legal_districts_on_the_wire(served: tuple[str, dict[str, str]]) -> None:
    """국토교통부 (1613000) beyond TAGO: 지역코드조회 (dataType=JSON, the platform's switch) lists a 시도's 읍면동 with
    their codes; a 교통카드 statistics dataset selected by one of those 시도 codes answers rows of that 시도 whose
    시군구 names are the lookup's; a 건축HUB dataset (`_type=json`, its own switch) answers sigunguCd + bjdongCd pairs
    that are current 법정동 codes of the region platform. The datasets are the spec's first of each kind."""
    base, keys = served
    platform = repository_project().platform("molit")

    def items(route: str, **query: str) -> list[dict[str, str]]:
        kind, raw = get(f"{base}/molit/1613000{route}", serviceKey=keys["molit"], numOfRows="1000", **query)
        assert kind.startswith("application/json"), (route, raw[:200])
        body = json.loads(raw)["response"]
        assert body["header"]["resultCode"] == "00"
        found = body["body"]["items"]
        rows = [] if found == "" else found["item"]
        return [rows] if isinstance(rows, dict) else rows

    seoul = items("/RegionalCode/getRegionalCode", dataType="JSON", ctpv_cd="11")
    assert seoul and {r["ctpv_nm"] for r in seoul} == {"서울특별시"}
    assert all(r["emd_cd"].startswith(r["sgg_cd"]) and r["sgg_cd"].startswith("11") for r in seoul)
    names = {r["sgg_cd"]: r["sgg_nm"] for r in seoul}
    stats = next(
        o
        for o in platform.operations
        if o.param("ctpv_cd") is not None
        and "sgg_nm" in o.row_props
        and platform.format(o).param == "dataType"
        and not any(p.required and p.name != "ctpv_cd" for p in o.params)
    )
    rows = items(stats.route, dataType="JSON", ctpv_cd="11")
    assert rows and all(r["ctpv_cd"] == "11" and names[r["sgg_cd"]] == r["sgg_nm"] for r in rows), stats.tool
    building = next(
        o
        for o in platform.operations
        if {"sigunguCd", "bjdongCd"} <= set(o.row_props) and o.param("sigunguCd")
    )
    assert platform.format(building).param == "_type"
    given = {name: str(values[0]) for name, values in platform.examples(building.tool).items()}
    (row, *_) = items(building.route, _type="json", **given)
    code = row["sigunguCd"] + row["bjdongCd"]
    district = next(
        r
        for r in items("/RegionalCode/getRegionalCode", dataType="JSON", ctpv_cd=code[:2])
        if r["emd_cd"] == code
    )
    _, found = get(
        f"{base}/region/1741000/StanReginCd/getStanReginCdList",
        ServiceKey=keys["region"],
        type="json",
        numOfRows="1000",
        locatadd_nm=f"{district['sgg_nm']} {district['emd_nm']}",
    )
    assert code in {r["region_cd"] for r in json.loads(found)["StanReginCd"][1]["row"]}


@pytest.mark.anyio
async def test_neispy_third_party_client_works_by_changing_only_its_base_url(
    served: tuple[str, dict[str, str]],
) -> None:
    """neispy 5.0.2 (PyPI), unmodified: its class-level base URL is the one thing pointed at the sandbox."""
    from neispy import Neispy
    from neispy.error import DataNotFound, ExceptionsMapping

    base, keys = served

    class LocalNeispy(Neispy):
        BASE = f"{base}/neis/hub"

    async with LocalNeispy(KEY=keys["neis"]) as neis:
        schools = await neis.schoolInfo(SCHUL_NM="인천고등학교")
        (school,) = schools.schoolInfo[1].row
        assert (school.ATPT_OFCDC_SC_CODE, school.SD_SCHUL_CODE) == ("E10", "7310057")
        meals = await neis.mealServiceDietInfo(
            ATPT_OFCDC_SC_CODE="E10",
            SD_SCHUL_CODE="7310057",
            MLSV_FROM_YMD="20261101",
            MLSV_TO_YMD="20261128",
        )
        assert meals.mealServiceDietInfo[0].head[0].list_total_count >= 15
        schedule = await neis.SchoolSchedule(
            ATPT_OFCDC_SC_CODE="E10", SD_SCHUL_CODE="7310057", AA_YMD="20261009"
        )
        assert schedule.SchoolSchedule[1].row[0].EVENT_NM == "한글날"
        # Not acaInsTiInfo: neispy 5.0.2's academy row lacks FA_TELNO, which the live service sends (many real
        # clients read it), so neispy fails on that service live as well.
        with pytest.raises(DataNotFound):
            await neis.schoolInfo(SCHUL_NM="존재하지않는학교이름")
    async with LocalNeispy(KEY="0" * 32) as wrong:
        with pytest.raises(ExceptionsMapping["ERROR-290"]):
            await wrong.schoolInfo(SCHUL_NM="인천고등학교")
