"""The generated servers through the official MCP client: in-process (both protocol eras), over stdio and over
streamable HTTP on loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from mcp import Client, StdioServerParameters

from kopa_gen.compose import sandbox_client
from kopa_gen.mcp.generated import generated_module
from kopa_gen.project import Project
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT

QUERY = {"locatadd_nm": "서울특별시 송파구", "numOfRows": 3, "pageNo": 2}


def env() -> dict[str, str]:
    return {**os.environ, "KOPA_GEN_ROOT": str(ROOT)}


def frozen_tools(pid: str) -> list[dict[str, object]]:
    doc = json.loads((ROOT / "generated" / "servers" / pid / "tools.json").read_text(encoding="utf-8"))
    tools: list[dict[str, object]] = doc["tools"]
    return tools


def check_listing(listed: list[object], pid: str) -> None:
    """The listing is tools.json as frozen, less the output schemas (served with --output-schemas)."""
    wire = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed]  # type: ignore[attr-defined]
    assert wire == [{k: v for k, v in t.items() if k != "outputSchema"} for t in frozen_tools(pid)]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_in_process_every_platform(project: Project, sandbox: Sandbox, mode: str) -> None:
    for platform in project.platforms:
        async with sandbox_client(sandbox, platform.id) as http:
            server = generated_module(platform.id).create_server(http)
            async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
                listed = await client.list_tools()
                check_listing(listed.tools, platform.id)
                unknown = await client.call_tool(f"{platform.id}_nope", {})
                assert unknown.is_error and "unknown tool" in unknown.content[0].text  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_tool_errors_name_the_argument(project: Project, sandbox: Sandbox) -> None:
    async with sandbox_client(sandbox, "region") as http:
        server = generated_module("region").create_server(http)
        async with Client(server, mode="legacy") as client:
            ok = await client.call_tool("region_list_legal_districts", QUERY)
            assert not ok.is_error and ok.structured_content is not None
            assert ok.structured_content["total_count"] == 14 and ok.structured_content["page"] == 2
            bad = await client.call_tool("region_list_legal_districts", {"numOfRows": 5000, "colour": "red"})
            assert bad.is_error
            assert bad.content[0].text == (  # type: ignore[union-attr]
                "invalid arguments for region_list_legal_districts: numOfRows: Input should be less than or equal "
                "to 1000; colour: unknown argument"
            )


@pytest.mark.anyio
async def test_stdio_transport(world: BuiltWorld) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kopa_gen", "serve", "region"], env=env()
    )
    async with Client(params) as client:
        listed = await client.list_tools()
        check_listing(listed.tools, "region")
        result = await client.call_tool("region_list_legal_districts", QUERY)
        assert result.structured_content is not None
        assert [r["locallow_nm"] for r in result.structured_content["rows"]] == ["풍납동", "송파동", "석촌동"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server(world: BuiltWorld) -> Iterator[int]:
    port = free_port()
    cmd = [sys.executable, "-m", "kopa_gen", "serve", "region", "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server exited")
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.anyio
async def test_streamable_http_transport(http_server: int) -> None:
    async with Client(f"http://127.0.0.1:{http_server}/mcp") as client:
        listed = await client.list_tools()
        check_listing(listed.tools, "region")
        result = await client.call_tool("region_list_legal_districts", QUERY)
        assert result.structured_content is not None and result.structured_content["total_count"] == 14
