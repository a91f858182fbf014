"""Platform-specific behaviour of the real specs in the sandbox: key modes, live-mode wiring, page limits."""

from __future__ import annotations

import json

import httpx
import pytest

from kopa_gen.client.errors import PlatformError
from kopa_gen.client.live import MissingKeyError, live_client
from kopa_gen.compose import SANDBOX_HOST, sandbox_client
from kopa_gen.language.kopa import Category
from kopa_gen.project import Project
from kopa_gen.sandbox.config import SandboxConfig, sandbox_key
from kopa_gen.sandbox.emulator import Sandbox


async def get(sandbox: Sandbox, path: str, **query: str) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=sandbox.app), base_url=SANDBOX_HOST
    ) as http:
        return await http.get(path, params=query)


@pytest.mark.anyio
async def test_neis_without_key_serves_five_sample_rows(sandbox: Sandbox) -> None:
    reply = await get(sandbox, "/neis/hub/schoolInfo", Type="json", pSize="100", ATPT_OFCDC_SC_CODE="J10")
    rows = reply.json()["schoolInfo"][1]["row"]
    assert len(rows) == 5
    wrong = await get(sandbox, "/neis/hub/schoolInfo", KEY="0" * 32, Type="json")
    assert wrong.json() == {
        "RESULT": {
            "CODE": "ERROR-290",
            "MESSAGE": "인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오.",
        }
    }


@pytest.mark.anyio
async def test_dart_parameter_errors_and_paging(project: Project, sandbox: Sandbox) -> None:
    key = sandbox_key(project.platform("dart"))
    missing = await get(sandbox, "/dart/api/company.json", crtfc_key=key)
    assert missing.json()["status"] == "100"
    unknown = await get(sandbox, "/dart/api/company.json", crtfc_key=key, corp_code="99999999")
    assert unknown.json() == {"status": "013", "message": "조회된 데이타가 없습니다."}
    page = await get(
        sandbox,
        "/dart/api/list.json",
        crtfc_key=key,
        corp_code="00126380",
        bgn_de="20230101",
        page_no="2",
        page_count="5",
    )
    body = page.json()
    assert (body["page_no"], body["page_count"], len(body["list"])) == (2, 5, 5)
    assert body["total_page"] == -(-body["total_count"] // 5)
    too_big = await get(sandbox, "/dart/api/list.json", crtfc_key=key, page_count="101")
    assert too_big.json()["status"] == "100"


@pytest.mark.anyio
async def test_quota_code_is_the_platforms_own(project: Project, world: object) -> None:
    from kopa_gen.sandbox.local import open_sandbox

    sandbox = open_sandbox(project, SandboxConfig(daily_quota={"dart": 2}))
    async with sandbox_client(sandbox, "dart") as client:
        for _ in range(2):
            await client.call("dart_company", {"corp_code": "00126380"})
        with pytest.raises(PlatformError) as info:
            await client.call("dart_company", {"corp_code": "00126380"})
    assert info.value.code == "020" and info.value.category is Category.QUOTA


def test_live_mode_uses_the_real_server_and_the_key_from_the_environment(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    dart = project.platform("dart")
    monkeypatch.delenv("DART_API_KEY", raising=False)
    with pytest.raises(MissingKeyError, match=r"\$DART_API_KEY"):
        live_client(dart)
    monkeypatch.setenv("DART_API_KEY", "ab" * 20)
    client = live_client(dart)
    request = client.request(dart.operation("dart_company"), {"corp_code": "00126380"}, "json")
    assert (
        str(request.url)
        == f"https://opendart.fss.or.kr/api/company.json?crtfc_key={'ab' * 20}&corp_code=00126380"
    )
    assert "ab" * 20 not in repr(client)
    monkeypatch.delenv("NEIS_API_KEY", raising=False)
    neis = live_client(project.platform("neis"))  # NEIS serves samples without a key
    request = neis.request(project.platform("neis").operation("neis_search_schools"), {}, "json")
    assert str(request.url) == "https://open.neis.go.kr/hub/schoolInfo?Type=json"


def test_generated_tool_descriptions_are_korean_and_name_the_chain(project: Project) -> None:
    from tests.conftest import ROOT

    doc = json.loads((ROOT / "generated" / "servers" / "dart" / "tools.json").read_text(encoding="utf-8"))
    company = next(t for t in doc["tools"] if t["name"] == "dart_company")
    assert "기업개황" in company["description"] and "dart_corp_code" in company["description"]
