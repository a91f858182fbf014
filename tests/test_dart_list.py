"""OpenDART list.json as the guide says it behaves, checked against the world's own rows (SQL on the world
database, not the emulator): no bgn_de is end_de's day only and no end_de is today; without corp_code the period
is at most 3 months (status 100 beyond); last_reprt_at=Y leaves out originals a correction superseded (rm 정);
sort (date, crp, rpt) and sort_mth (asc, desc) order the rows."""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx
import pytest

from kopa_gen.compose import SANDBOX_HOST
from kopa_gen.project import Project
from kopa_gen.sandbox.config import sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.world.build import BuiltWorld
from kopa_gen.world.lazy import open_world

SAMSUNG = "00126380"


def db(world: BuiltWorld) -> sqlite3.Connection:
    return open_world(world.path)


async def listing(project: Project, sandbox: Sandbox, **query: str) -> dict[str, Any]:
    """Every page of a list.json query (100 rows a page unless `page_count` says), rows concatenated."""
    query = {"crtfc_key": sandbox_key(project.platform("dart")), "page_count": "100", **query}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=sandbox.app), base_url=SANDBOX_HOST
    ) as http:
        first = (await http.get("/dart/api/list.json", params=query)).json()
        rows = list(first.get("list", []))
        last = int(first.get("total_page") or 1) if query["page_count"] == "100" else 1
        for page in range(2, last + 1):
            more = (await http.get("/dart/api/list.json", params={**query, "page_no": str(page)})).json()
            assert "list" in more, more
            rows += more["list"]
    return {**first, "list": rows} if "list" in first else first


@pytest.mark.anyio
async def test_no_bgn_de_is_end_de_day_only(project: Project, sandbox: Sandbox, world: BuiltWorld) -> None:
    with db(world) as con:
        day, expected = con.execute(
            "SELECT rcept_dt, COUNT(*) FROM dart_filings GROUP BY rcept_dt ORDER BY COUNT(*) DESC LIMIT 1"
        ).fetchone()
    body = await listing(project, sandbox, end_de=day)
    assert body["status"] == "000"
    assert body["total_count"] == expected > 1
    assert {r["rcept_dt"] for r in body["list"]} == {day}


@pytest.mark.anyio
async def test_no_dates_is_today(project: Project, sandbox: Sandbox, world: BuiltWorld) -> None:
    with db(world) as con:
        (today,) = con.execute("SELECT today_ymd FROM kopa_world").fetchone()
        (expected,) = con.execute(
            "SELECT COUNT(*) FROM dart_filings WHERE corp_code = ? AND rcept_dt = ?", (SAMSUNG, today)
        ).fetchone()
        (before,) = con.execute(
            "SELECT COUNT(*) FROM dart_filings WHERE corp_code = ? AND rcept_dt < ?", (SAMSUNG, today)
        ).fetchone()
    body = await listing(project, sandbox, corp_code=SAMSUNG)
    assert before > 0, "the company has filings before today, which a query without dates must not show"
    assert (body.get("total_count") or 0) == expected
    assert body["status"] == ("000" if expected else "013")


@pytest.mark.anyio
async def test_three_months_without_corp_code(project: Project, sandbox: Sandbox) -> None:
    inside = await listing(project, sandbox, bgn_de="20250101", end_de="20250401", page_count="1")
    assert inside["status"] == "000"
    beyond = await listing(project, sandbox, bgn_de="20250101", end_de="20250402", page_count="1")
    assert beyond["status"] == "100" and "list" not in beyond
    with_corp = await listing(project, sandbox, corp_code=SAMSUNG, bgn_de="20230101", end_de="20251231")
    assert with_corp["status"] == "000" and with_corp["total_count"] > 10
    open_end = await listing(project, sandbox, bgn_de="20230101", page_count="1")  # end_de is today
    assert open_end["status"] == "100"


@pytest.mark.anyio
async def test_last_report_only_leaves_out_superseded_originals(
    project: Project, sandbox: Sandbox, world: BuiltWorld
) -> None:
    with db(world) as con:
        corp, superseded = con.execute(
            "SELECT corp_code, COUNT(*) FROM dart_filings WHERE instr(rm, '정') > 0 "
            "GROUP BY corp_code ORDER BY COUNT(*) DESC, corp_code LIMIT 1"
        ).fetchone()
    every = await listing(project, sandbox, corp_code=corp, bgn_de="20230101")
    final = await listing(project, sandbox, corp_code=corp, bgn_de="20230101", last_reprt_at="Y")
    explicit_n = await listing(project, sandbox, corp_code=corp, bgn_de="20230101", last_reprt_at="N")
    assert explicit_n["total_count"] == every["total_count"]
    assert every["total_count"] - final["total_count"] == superseded > 0
    assert not any("정" in r["rm"] for r in final["list"])
    assert any(r["report_nm"].startswith("[기재정정]") for r in final["list"])


@pytest.mark.anyio
async def test_sort_and_direction(project: Project, sandbox: Sandbox) -> None:
    window = {"bgn_de": "20250303", "end_de": "20250304"}  # two days: 674 rows, 7 pages of 100

    def keys(body: dict[str, Any], field: str) -> list[tuple[str, str]]:
        return [(r[field], r["rcept_no"]) for r in body["list"]]

    default = await listing(project, sandbox, **window)
    assert default["total_count"] > 100
    assert keys(default, "rcept_dt") == sorted(keys(default, "rcept_dt"), reverse=True)
    for sort, field in (("date", "rcept_dt"), ("crp", "corp_name"), ("rpt", "report_nm")):
        desc = await listing(project, sandbox, sort=sort, **window)
        asc = await listing(project, sandbox, sort=sort, sort_mth="asc", **window)
        assert keys(desc, field) == sorted(keys(desc, field), reverse=True), sort
        assert keys(asc, field) == sorted(keys(asc, field)), sort
        assert sorted(keys(asc, field)) == sorted(keys(default, field)), "the same rows in another order"
