"""국가법령정보센터 (law.go.kr DRF, platform `law`): the wire as the real clients see it (Korean elements, the `id`
attribute, string totals in JSON, nested 조문 → 항 → 호, `JO`, the sentences instead of error codes, HTML error pages),
searches with paging, sort and date ranges, one path serving every `target`, and the bills of the National Assembly
naming laws that this platform finds. Expected values come from the world database, never from the platform."""

from __future__ import annotations

import copy
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest

from kopa_gen.client.client import PlatformClient
from kopa_gen.client.errors import PlatformError
from kopa_gen.compose import SANDBOX_HOST, sandbox_client
from kopa_gen.language.diagnostics import SpecError
from kopa_gen.language.kopa import Category
from kopa_gen.project import load_project
from kopa_gen.sandbox.config import sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import BuiltWorld
from kopa_gen.world.lazy import open_world
from tests.conftest import repository_project
from tests.toyspec import spec_copy, write_project

PID = "law"
pytestmark = pytest.mark.skipif(
    PID not in {p.id for p in repository_project().platforms}, reason="no law platform in this project"
)
NO_LAW = "일치하는 법령이 없습니다. 법령명을 확인하여 주십시오."
AUTH = "사용자 정보 검증에 실패하였습니다"
BILL_SUFFIX = " 일부개정법률안"


def db(world: BuiltWorld) -> sqlite3.Connection:
    return open_world(world.path)


async def get(sandbox: Sandbox, path: str, key: str | None = None, **params: str) -> httpx.Response:
    """One raw request, as any HTTP client of the real service sends it."""
    platform = sandbox.platforms[PID]
    base = SANDBOX_HOST + sandbox.prefix(platform)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=sandbox.app), base_url=base) as http:
        return await http.get(path, params={"OC": key or sandbox_key(platform), **params})


def items(root: ET.Element, tag: str) -> list[dict[str, Any]]:
    """Search items of an XML answer: their child texts and attributes."""
    return [{**el.attrib, **{c.tag: c.text or "" for c in el}} for el in root.findall(tag)]


@pytest.mark.anyio
async def test_search_xml_and_json_mirror_each_other(sandbox: Sandbox, world: BuiltWorld) -> None:
    args = {"target": "law", "query": "소득세법", "display": "100"}
    xml = await get(sandbox, "/lawSearch.do", type="XML", **args)
    assert xml.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(xml.content)
    assert root.tag == "LawSearch"
    head = [c.tag for c in root if c.tag != "law"]
    assert head[:5] == ["target", "키워드", "section", "totalCnt", "page"]
    assert (root.findtext("target"), root.findtext("키워드"), root.findtext("section")) == (
        "law",
        "소득세법",
        "lawNm",
    )
    expected = (
        db(world)
        .execute("SELECT count(*) FROM law_names WHERE instr(법령명한글, '소득세법') > 0")
        .fetchone()[0]
    )
    assert expected >= 2 and root.findtext("totalCnt") == str(expected)
    rows = items(root, "law")
    assert [r["id"] for r in rows] == [str(i) for i in range(1, expected + 1)]  # <law id="1">
    assert all("소득세법" in r["법령명한글"] for r in rows)

    data = (await get(sandbox, "/lawSearch.do", type="JSON", **args)).json()
    body = data["LawSearch"]
    assert body["totalCnt"] == str(expected) and body["page"] == "1"  # strings, as the DRF sends them
    assert body["law"] == rows


@pytest.mark.anyio
async def test_paging_sort_and_date_range(sandbox: Sandbox, world: BuiltWorld) -> None:
    conn = db(world)
    names = [n for (n,) in conn.execute("SELECT 법령명한글 FROM law_names WHERE instr(법령명한글, '법') > 0")]
    async with sandbox_client(sandbox, PID) as law:
        second = await law.call("law_search_laws", {"query": "법", "display": 5, "page": 2, "sort": "ldes"})
        assert second.total == len(names)
        assert [r["법령명한글"] for r in second.rows] == sorted(names, reverse=True)[5:10]
        assert [r["id"] for r in second.rows] == ["6", "7", "8", "9", "10"]  # positions in the whole answer

        low, high = "20250101", "20251231"
        inside = conn.execute(
            "SELECT count(*) FROM law_versions WHERE 시행일자 BETWEEN ? AND ?", (low, high)
        ).fetchone()[0]
        assert inside > 0
        ranged = await law.call("law_search_effective_laws", {"efYd": f"{low}~{high}", "display": 100})
        assert ranged.total == inside
        assert all(low <= r["시행일자"] <= high for r in ranged.rows)
        newest = await law.call(
            "law_search_effective_laws", {"query": "소득세법", "sort": "efdes", "display": 100}
        )
        dates = [r["시행일자"] for r in newest.rows]
        assert dates == sorted(dates, reverse=True) and len(set(r["현행연혁코드"] for r in newest.rows)) >= 2

        with pytest.raises(PlatformError) as too_many:  # display is at most 100
            await law.call("law_search_laws", {"query": "법", "display": 101})
        assert too_many.value.category == Category.BAD_PARAM


@pytest.mark.anyio
async def test_law_document_nests_articles_paragraphs_and_items(sandbox: Sandbox, world: BuiltWorld) -> None:
    conn = db(world)
    law_id = "001565"  # 소득세법's real 법령ID
    articles = conn.execute(
        "SELECT 조문번호 FROM law_articles WHERE 법령ID = ? ORDER BY 조문번호", (law_id,)
    ).fetchall()
    root = ET.fromstring((await get(sandbox, "/lawService.do", target="law", type="XML", ID=law_id)).content)
    assert root.tag == "법령"
    assert root.findtext("기본정보/법령명_한글") == "소득세법" and root.findtext("기본정보/법령ID") == law_id
    units = root.findall("조문/조문단위")
    assert [u.findtext("조문번호") for u in units] == [str(n) for (n,) in articles]
    for unit in units:
        no = int(unit.findtext("조문번호") or 0)
        paragraphs = conn.execute(
            "SELECT 항순번 FROM law_paragraphs WHERE 법령ID = ? AND 조문번호 = ? ORDER BY 항순번",
            (law_id, no),
        ).fetchall()
        assert len(unit.findall("항")) == len(paragraphs)
        for element, (seq,) in zip(unit.findall("항"), paragraphs, strict=True):
            count = conn.execute(
                "SELECT count(*) FROM law_items WHERE 법령ID = ? AND 조문번호 = ? AND 항순번 = ?",
                (law_id, no, seq),
            ).fetchone()[0]
            assert len(element.findall("호")) == count
    # filter-only (writeOnly) columns stay off the wire
    assert root.find("조문/조문단위/JO") is None and root.find("법령ID") is None

    # JO selects one article; in JSON 조문단위 is then one object, not a list
    one = (await get(sandbox, "/lawService.do", target="law", type="JSON", ID=law_id, JO="000300")).json()
    unit = one["법령"]["조문"]["조문단위"]
    assert isinstance(unit, dict) and unit["조문번호"] == "3"
    assert isinstance(one["법령"]["기본정보"], dict)
    async with sandbox_client(sandbox, PID, wire="xml") as as_xml, sandbox_client(sandbox, PID) as as_json:
        a = await as_xml.call("law_get_law", {"MST": await _mst(as_json, "소득세법"), "JO": "000300"})
        b = await as_json.call("law_get_law", {"ID": law_id, "JO": "000300"})
    assert a.record == b.record and a.record is not None and len(a.record["조문"]) == 1


async def _mst(law: Any, name: str) -> str:
    found = await law.call("law_search_laws", {"query": name})
    return str(next(r["법령일련번호"] for r in found.rows if r["법령명한글"] == name))


@pytest.mark.anyio
async def test_errors_are_sentences_and_pages(sandbox: Sandbox) -> None:
    missing = await get(sandbox, "/lawService.do", target="law", type="XML", ID="999999")
    assert missing.status_code == 200 and ET.fromstring(missing.content).tag == "Law"
    assert ET.fromstring(missing.content).text == NO_LAW
    assert (await get(sandbox, "/lawService.do", target="law", type="JSON", ID="999999")).json() == {
        "Law": NO_LAW
    }

    for kind in ("XML", "JSON"):
        refused = await get(sandbox, "/lawSearch.do", key="nobody", target="law", type=kind, query="민법")
        text = ET.fromstring(refused.content).text if kind == "XML" else refused.json()["Response"]
        assert refused.status_code == 200 and text is not None
        assert text.startswith(AUTH) and "IP주소 및 도메인주소를 등록해 주세요" in text

    for params in ({"target": "law", "type": "HTML"}, {"target": "nosuchtarget", "type": "XML"}):
        page = await get(sandbox, "/lawSearch.do", query="민법", **params)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert page.text.startswith("<!DOCTYPE html>")

    async with sandbox_client(sandbox, PID) as law:
        nothing = await law.call("law_get_law", {"ID": "999999"})
        assert nothing.record is None and nothing.message == NO_LAW
        empty = await law.call("law_search_laws", {"query": "없는법령이름"})
        assert empty.total == 0 and empty.rows == []
    platform = sandbox.platforms[PID]
    stranger = PlatformClient(
        platform,
        key="nobody",
        base_url=SANDBOX_HOST + sandbox.prefix(platform),
        transport=httpx.ASGITransport(app=sandbox.app),
    )
    async with stranger:
        with pytest.raises(PlatformError) as refused_call:
            await stranger.call("law_search_laws", {"query": "민법"})
    assert refused_call.value.category == Category.AUTH and AUTH in refused_call.value.message


def test_one_path_serves_every_target() -> None:
    platform = repository_project().platform(PID)
    routes = {op.route for op in platform.operations}
    assert routes == {"/lawSearch.do", "/lawService.do"}
    targets = [(op.route, op.fixed_query["target"]) for op in platform.operations]
    assert len(set(targets)) == len(targets) == len(platform.operations)
    op = platform.operation("law_search_precedents")
    request = PlatformClient(platform, key="tester").request(op, {"query": "위반"}, "xml")
    assert request.url.path == "/DRF/lawSearch.do"
    assert dict(request.url.params) == {"OC": "tester", "target": "prec", "query": "위반", "type": "XML"}
    # live mode looks like a browser, as the real service requires since 2026
    assert request.headers["User-Agent"].startswith("Mozilla/") and request.headers["Referer"]


@pytest.mark.anyio
async def test_every_bill_names_a_law_the_platform_finds(sandbox: Sandbox, world: BuiltWorld) -> None:
    bills = [n for (n,) in db(world).execute("SELECT DISTINCT BILL_NAME FROM assembly_bills ORDER BY 1")]
    assert len(bills) > 10 and all(b.endswith(BILL_SUFFIX) for b in bills)
    async with sandbox_client(sandbox, PID) as law:
        for bill in bills:
            name = bill.removesuffix(BILL_SUFFIX)
            found = await law.call("law_search_laws", {"query": name, "display": 100})
            assert [r for r in found.rows if r["법령명한글"] == name and r["법령구분명"] == "법률"], bill


@pytest.mark.anyio
async def test_chain_from_a_bill_to_its_laws_article(sandbox: Sandbox, world: BuiltWorld) -> None:
    """An agent's chain: a bill of the 22nd assembly -> the law it amends -> that law's 제1조 -> a precedent."""
    async with sandbox_client(sandbox, "assembly") as assembly, sandbox_client(sandbox, PID) as law:
        bills = await assembly.call("assembly_list_member_bills", {"AGE": "22", "pSize": 5})
        name = str(bills.rows[0]["BILL_NAME"]).removesuffix(BILL_SUFFIX)
        found = await law.call("law_search_laws", {"query": name})
        law_id = next(r["법령ID"] for r in found.rows if r["법령명한글"] == name)
        document = await law.call("law_get_law", {"ID": law_id, "JO": "000100"})
        assert document.record is not None
        (article,) = document.record["조문"]
        expected = (
            db(world)
            .execute("SELECT 조문내용 FROM law_articles WHERE 법령ID = ? AND 조문번호 = 1", (law_id,))
            .fetchone()[0]
        )
        assert article["조문제목"] == "목적" and article["조문내용"] == expected and f"「{name}」" in expected

        cases = await law.call("law_search_precedents", {"query": "위반", "display": 100})
        case = cases.rows[0]
        detail = await law.call("law_get_precedent", {"ID": case["판례일련번호"]})
        assert detail.record is not None and detail.record["사건번호"] == case["사건번호"]
        cited = str(case["사건명"]).removesuffix("위반")
        assert f"「{cited}」" in detail.record["참조조문"]


def test_ordinances_belong_to_real_local_governments(world: BuiltWorld) -> None:
    conn = db(world)
    total, governments = conn.execute(
        "SELECT count(*), count(DISTINCT 지자체코드) FROM law_ordinances"
    ).fetchone()
    assert 20_000 <= total <= 40_000 and governments > 200
    strays = conn.execute(
        "SELECT count(*) FROM law_ordinances o LEFT JOIN regions r ON r.region_cd = o.지자체코드 "
        "WHERE r.region_cd IS NULL OR r.abolished = 1 OR instr(o.자치법규명, r.name) != 1"
    ).fetchone()[0]
    assert strays == 0


@pytest.mark.anyio
async def test_ordinances_of_one_government(sandbox: Sandbox, world: BuiltWorld) -> None:
    code, name = (
        db(world)
        .execute("SELECT region_cd, name FROM regions WHERE name = '서울특별시 종로구' AND abolished = 0")
        .fetchone()
    )
    expected = (
        db(world).execute("SELECT count(*) FROM law_ordinances WHERE 지자체코드 = ?", (code,)).fetchone()[0]
    )
    async with sandbox_client(sandbox, PID, wire="xml") as law:
        found = await law.call("law_search_ordinances", {"org": code[:5], "display": 100})
        assert found.total == expected and all(r["지자체기관명"] == name for r in found.rows)
        one = await law.call("law_get_ordinance", {"MST": found.rows[0]["자치법규일련번호"]})
    assert one.record is not None
    assert one.record["자치법규기본정보"][0]["자치법규명"] == found.rows[0]["자치법규명"]


def _two_kinds(second: str) -> dict[str, Any]:
    """The toy platform with its one operation served twice on /fruits, told apart by a fixed `kind`."""
    spec = spec_copy()
    op = spec["paths"].pop("/fruits")["get"]
    spec["paths"]["/fruits?kind=all"] = {"get": op}
    other = copy.deepcopy(op)
    other["operationId"] = "getCheapFruits"
    other["x-kopa"]["tool"] = "toy_list_cheap_fruits"
    other["x-kopa"]["source"]["filters"].append({"param": "name", "column": "name", "match": "prefix"})
    other["x-kopa"]["source"]["sort"] = {"param": "name", "orders": {"x": [{"column": "price"}]}}
    spec["paths"][second] = {"get": other}
    return spec


@pytest.mark.anyio
async def test_path_keys_fixing_a_query_value_share_one_path(tmp_path: Path) -> None:
    """The spec-language mechanism the DRF needs, on a toy platform: `/fruits?kind=all` and `/fruits?kind=cheap`
    are two operations and tools on one real path; the client sends the fixed value, the sandbox dispatches on it,
    a value no operation fixes gets the platform's bad-request answer, and two keys fixing the same values are one
    request, refused at load."""
    write_project(tmp_path, _two_kinds("/fruits?kind=cheap"))
    project = load_project(tmp_path)
    platform = project.platform("toy")
    assert {op.route for op in platform.operations} == {"/fruits"}
    sandbox = open_sandbox(project)
    async with sandbox_client(sandbox, "toy") as toy:
        every = await toy.call("toy_list_fruits", {"name": "사과"})
        cheap = await toy.call("toy_list_cheap_fruits", {"name": "사과"})
    assert every.total == 2 and cheap.total == 1  # 사과, 청사과 / only 사과 (the prefix filter of the second)
    base = SANDBOX_HOST + sandbox.prefix(platform)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=sandbox.app), base_url=base) as http:
        key = sandbox_key(platform)
        answer = await http.get("/fruits", params={"serviceKey": key, "kind": "rotten", "type": "json"})
    assert answer.json()["response"]["header"]["resultCode"] == platform.kopa.answers.invalid_param

    write_project(tmp_path, _two_kinds("/fruits?kind=all&"))
    with pytest.raises(SpecError) as same:
        load_project(tmp_path)
    assert "/fruits?kind=all& is the same request as /fruits?kind=all" in str(same.value)


@pytest.mark.anyio
async def test_effective_law_versions(sandbox: Sandbox, world: BuiltWorld) -> None:
    """target=eflaw: every 시행일 version of a law is its own document, chosen by MST and efYd."""
    versions = (
        db(world)
        .execute(
            "SELECT 법령일련번호, 시행일자, 공포번호 FROM law_versions WHERE 법령ID = '001565' ORDER BY 시행일자"
        )
        .fetchall()
    )
    assert len(versions) >= 2
    async with sandbox_client(sandbox, PID, wire="xml") as law:
        listed = await law.call("law_search_effective_laws", {"query": "소득세법", "display": 100})
        assert {r["법령일련번호"] for r in listed.rows if r["법령ID"] == "001565"} == {v[0] for v in versions}
        for mst, effective, number in versions:
            found = await law.call("law_get_effective_law", {"MST": mst, "efYd": effective, "JO": "000100"})
            assert found.record is not None
            (basic,) = found.record["기본정보"]
            assert (basic["시행일자"], basic["공포번호"]) == (effective, str(number))
        wrong = await law.call("law_get_effective_law", {"MST": versions[0][0], "efYd": "19000101"})
    assert wrong.record is None and wrong.message == NO_LAW


@pytest.mark.anyio
async def test_catalog_searches_answer_in_the_probed_elements(sandbox: Sandbox, world: BuiltWorld) -> None:
    """The searches of the law catalog answer in the root and item elements their target's answers were seen in
    (a ministry's 법령해석: `<CgmExpc>…<cgmExpc id="1">`), repeat the target and the query, page, and find by name;
    a row naming a law (영문 법령) carries that law's facts as the world holds them."""
    platform = repository_project().platform(PID)
    moel = platform.operation("law_search_moel_interpretations")
    target = moel.fixed_query["target"]
    page = await get(sandbox, "/lawSearch.do", target=target, type="XML", display="3", page="2")
    root = ET.fromstring(page.content)
    assert root.tag == "CgmExpc" and root.findtext("target") == target and root.findtext("page") == "2"
    rows = root.findall("cgmExpc")
    assert [r.get("id") for r in rows] == ["4", "5", "6"]  # the position in the whole answer
    assert {r.findtext("해석기관명") for r in rows} == {"고용노동부"}
    as_json = (await get(sandbox, "/lawSearch.do", target=target, type="JSON", display="3", page="2")).json()
    assert [r["안건명"] for r in as_json["CgmExpc"]["cgmExpc"]] == [r.findtext("안건명") for r in rows]
    law_name = rows[0].findtext("안건명").split("」")[0].removeprefix("「")
    found = (
        await get(sandbox, "/lawSearch.do", target=target, type="JSON", query=law_name, display="100")
    ).json()
    assert found["CgmExpc"]["키워드"] == law_name and int(found["CgmExpc"]["totalCnt"]) >= 1
    assert all(law_name in r["안건명"] for r in found["CgmExpc"]["cgmExpc"])
    english = ET.fromstring(
        (await get(sandbox, "/lawSearch.do", target="elaw", type="XML", display="5")).content
    )
    assert english.tag == "LawSearch"
    with db(world) as con:
        for row in english.findall("law"):
            law = con.execute(
                "SELECT 법령명한글, 법령일련번호, 소관부처명 FROM law_current_rows WHERE 법령ID = ?",
                (row.findtext("법령ID"),),
            ).fetchone()
            assert law == (
                row.findtext("법령명한글"),
                row.findtext("법령일련번호"),
                row.findtext("소관부처명"),
            )
