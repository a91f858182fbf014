"""Generic emulator mechanics on a tiny inline platform: keys, gateway errors, parameters, paging, quota, rate,
seeded faults. Real HTTP semantics through httpx's ASGI transport."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kopa_gen.client.client import RetryPolicy
from kopa_gen.client.errors import PlatformError
from kopa_gen.compose import sandbox_client
from kopa_gen.language.kopa import Category
from kopa_gen.project import Project, load_project
from kopa_gen.sandbox.config import Faults, SandboxConfig, sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.local import open_sandbox
from tests.toyspec import write_project


@pytest.fixture
def toy(tmp_path: Path) -> Project:
    return load_project(write_project(tmp_path))


def raw(sandbox: Sandbox, query: dict[str, str]) -> httpx.Response:
    transport = httpx.ASGITransport(app=sandbox.app)

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as http:
            return await http.get("/toy/toy/fruits", params=query)

    import asyncio

    return asyncio.run(go())


def key(project: Project) -> str:
    return sandbox_key(project.platforms[0])


def test_xml_is_the_default_and_json_needs_the_switch(toy: Project) -> None:
    sb = open_sandbox(toy)
    xml = raw(sb, {"serviceKey": key(toy)})
    assert xml.headers["content-type"].startswith("text/xml")
    assert xml.text.startswith(
        '<?xml version="1.0" encoding="UTF-8"?><response><header><resultCode>00</resultCode>'
    )
    js = raw(sb, {"serviceKey": key(toy), "type": "json"})
    assert js.json()["response"]["body"]["totalCount"] == 3
    assert js.json()["response"]["body"]["items"]["item"][0] == {"code": "F01", "name": "사과", "price": 1200}


def test_wrong_key_gets_gateway_xml_even_for_json(toy: Project) -> None:
    sb = open_sandbox(toy)
    for query in ({"type": "json"}, {"serviceKey": "0" * 32, "type": "json"}):
        reply = raw(sb, query)
        assert reply.status_code == 200
        assert reply.text.endswith(
            "<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg><returnAuthMsg>"
            "SERVICE_KEY_IS_NOT_REGISTERED_ERROR</returnAuthMsg><returnReasonCode>30</returnReasonCode>"
            "</cmmMsgHeader></OpenAPI_ServiceResponse>"
        )
    assert (
        raw(sb, {"ServiceKey": key(toy), "type": "json"}).json()["response"]["header"]["resultCode"] == "00"
    )


def test_parameters_are_checked_like_the_platform(toy: Project) -> None:
    sb = open_sandbox(toy)
    k = key(toy)
    too_big = raw(sb, {"serviceKey": k, "type": "json", "numOfRows": "3"}).json()
    assert too_big["response"]["header"] == {
        "resultCode": "10",
        "resultMsg": "INVALID_REQUEST_PARAMETER_ERROR",
    }
    not_int = raw(sb, {"serviceKey": k, "type": "json", "pageNo": "x"}).json()
    assert not_int["response"]["header"]["resultCode"] == "10"
    unknown = raw(
        sb, {"serviceKey": k, "type": "json", "colour": "red"}
    ).json()  # ignored, as real services do
    assert unknown["response"]["body"]["totalCount"] == 3
    past_end = raw(sb, {"serviceKey": k, "type": "json", "pageNo": "9"}).json()
    assert past_end["response"]["body"]["totalCount"] == 3 and past_end["response"]["body"]["items"] == ""


def test_rate_and_quota(toy: Project, tmp_path: Path) -> None:
    now = [100.0]
    world = open_sandbox(toy).store
    sb = Sandbox(toy.platforms, world, SandboxConfig(daily_quota={"toy": 6}), clock=lambda: now[0])
    k = key(toy)
    codes = [raw(sb, {"serviceKey": k}).text.count("<resultCode>00</resultCode>") for _ in range(6)]
    assert codes == [1, 1, 1, 1, 1, 0], "the sixth call in one second exceeds per_second=5"
    assert "<returnReasonCode>23</returnReasonCode>" in raw(sb, {"serviceKey": k}).text
    now[0] += 1
    assert "<resultCode>00</resultCode>" in raw(sb, {"serviceKey": k}).text
    assert "<returnReasonCode>22</returnReasonCode>" in raw(sb, {"serviceKey": k}).text, (
        "rejected calls do not count; the seventh accepted call exceeds the quota of 6"
    )


def test_faults_are_seeded_and_off_by_default(toy: Project) -> None:
    world = open_sandbox(toy).store
    config = SandboxConfig(
        seed=3, limits=False, faults=Faults(rate=0.5, kinds={"http_500": 1, "http_503": 1, "provider": 1})
    )
    runs = []
    for _ in range(2):
        sb = Sandbox(toy.platforms, world, config)
        runs.append([raw(sb, {"serviceKey": key(toy)}).status_code for _ in range(20)])
    assert runs[0] == runs[1]
    assert {500, 503} <= set(runs[0]) and 200 in runs[0]
    quiet = Sandbox(toy.platforms, world, SandboxConfig(limits=False))
    assert {raw(quiet, {"serviceKey": key(toy)}).status_code for _ in range(20)} == {200}


@pytest.mark.anyio
async def test_client_retries_environmental_failures_only(toy: Project) -> None:
    world = open_sandbox(toy).store
    sb = Sandbox(
        toy.platforms,
        world,
        SandboxConfig(seed=1, limits=False, faults=Faults(rate=0.6, kinds={"http_502": 1})),
    )
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    client = sandbox_client(sb, "toy", retry=RetryPolicy(attempts=8, backoff_s=0.1))
    client._sleep = sleep
    result = await client.call("toy_list_fruits", {"name": "배"})
    assert result.rows == [{"code": "F02", "name": "배", "price": 2500}]
    assert slept and slept == [0.1 * 2**i for i in range(len(slept))]
    bad = sandbox_client(Sandbox(toy.platforms, world, SandboxConfig(limits=False)), "toy")
    bad._key = "f" * 32
    slept.clear()
    bad._sleep = sleep
    with pytest.raises(PlatformError) as info:
        await bad.call("toy_list_fruits", {})
    assert info.value.code == "30" and info.value.category is Category.AUTH and slept == []


@pytest.mark.anyio
async def test_timeouts_become_environmental_errors(toy: Project) -> None:
    world = open_sandbox(toy).store
    faults = Faults(rate=1.0, kinds={"timeout": 1}, timeout_s=5)
    sb = Sandbox(toy.platforms, world, SandboxConfig(limits=False, faults=faults))
    client = sandbox_client(sb, "toy", retry=RetryPolicy(attempts=1), timeout_s=0.05)
    with pytest.raises(PlatformError) as info:
        await client.call("toy_list_fruits", {})
    assert info.value.code == "timeout" and info.value.environmental


@pytest.mark.anyio
async def test_key_is_redacted_from_errors(toy: Project) -> None:
    platform = toy.platforms[0]
    from kopa_gen.client.client import PlatformClient

    secret = "a1b2c3d4" * 4
    client = PlatformClient(
        platform, key=secret, base_url="http://127.0.0.1:9", retry=RetryPolicy(attempts=1)
    )
    with pytest.raises(PlatformError) as info:
        await client.call("toy_list_fruits", {})
    assert secret not in str(info.value) and secret not in repr(client)


@pytest.mark.anyio
async def test_encoded_datagokr_key_is_sent_encoded_once(toy: Project) -> None:
    from urllib.parse import quote

    platform = toy.platforms[0]
    decoded = "ab+c/d=="
    encoded = quote(decoded, safe="")
    world = open_sandbox(toy).store
    sb = Sandbox(toy.platforms, world, SandboxConfig(keys={"toy": [decoded]}))
    for given in (decoded, encoded):
        client = sandbox_client(sb, "toy")
        client._key = given if "%" not in given else decoded  # what the constructor does with an Encoding key
        request = client.request(platform.operation("toy_list_fruits"), {}, "json")
        assert "serviceKey=ab%2Bc%2Fd%3D%3D" in str(request.url)
        assert (await client.call("toy_list_fruits", {})).total == 3


def test_a_platforms_routes_are_made_at_its_first_request(tmp_path: Path) -> None:
    """Opening a sandbox compiles no path pattern (1,700 operations took 0.3 s at every serve's first call): each
    platform's routes are made when a request first reaches it, and only that platform's."""
    from starlette.routing import Mount

    from kopa_gen.sandbox.emulator import _PlatformRoutes

    root = write_project(tmp_path)
    first = root / "specs" / "platforms" / "toy" / "openapi.yaml"
    second = root / "specs" / "platforms" / "toy2" / "openapi.yaml"
    second.parent.mkdir(parents=True)
    second.write_text(
        first.read_text(encoding="utf-8")
        .replace("tool: toy_", "tool: toy2_")
        .replace("platform: toy\n", "platform: toy2\n"),
        encoding="utf-8",
    )
    project = load_project(root)
    sb = open_sandbox(project)
    mounts = {m.path: m.app for m in sb.app.router.routes if isinstance(m, Mount)}
    assert set(mounts) == {"/toy", "/toy2"}
    assert all(isinstance(app, _PlatformRoutes) and app._router is None for app in mounts.values())
    assert raw(sb, {"serviceKey": sandbox_key(project.platform("toy"))}).status_code == 200
    made = {path: app._router is not None for path, app in mounts.items() if isinstance(app, _PlatformRoutes)}
    assert made == {"/toy": True, "/toy2": False}
