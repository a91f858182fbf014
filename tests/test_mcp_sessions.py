"""`kopa-gen serve` gives each MCP session its own sandbox, and is reachable off loopback only when told so, with a
token. Through the official SDK client and real transports: concurrent streamable-HTTP clients of one server
never see each other's workspace (each writes, lists, reads and tries to delete the others' files), a stdio
session keeps its own files from call to call, and a server bound beyond loopback refuses requests without the
token, with a foreign Host or with a foreign Origin."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from kopa_gen.cli import main
from kopa_gen.mcp.remote import exposure
from kopa_gen.mcp.server import platforms_server
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT

PLATFORM = "workspace"
CLIENTS = 6  # two are the pair; the others make the interleaving busier


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "KOPA_GEN_ROOT": str(ROOT), **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server(world: BuiltWorld) -> Iterator[int]:
    port = free_port()
    cmd = [sys.executable, "-m", "kopa_gen", "serve", PLATFORM, "--transport", "http", "--port", str(port)]
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


def rows(result: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (result.structured_content or {}).get("rows") or []
    return found


async def one_client(url: str, me: int, others: int, started: asyncio.Barrier) -> dict[str, Any]:
    """Write two files, wait until every client has, then look: list, read, and try the others' files."""
    async with Client(url) as client:
        for name in (f"mine-{me}.txt", "shared-name.txt"):
            written = await client.call_tool(
                "workspace_write_file", {"path": name, "content": f"client {me}"}
            )
            assert not written.is_error, written
        await started.wait()  # every client has written before anyone looks
        listed = await client.call_tool("workspace_list_files", {})
        read = await client.call_tool("workspace_read_file", {"path": "shared-name.txt"})
        foreign = [
            await client.call_tool(tool, {"path": f"mine-{other}.txt"})
            for other in range(others)
            if other != me
            for tool in ("workspace_read_file", "workspace_delete_file")
        ]
        await started.wait()  # every client has tried the others' files
        after = await client.call_tool("workspace_list_files", {})
        return {
            "listed": sorted(r["path"] for r in rows(listed)),
            "read": (read.structured_content or {}).get("record", {}).get("content"),
            "foreign": [
                f.is_error or (f.structured_content or {}).get("record") is not None for f in foreign
            ],
            "foreign_found": [(f.structured_content or {}).get("record") for f in foreign],
            "after": sorted(r["path"] for r in rows(after)),
        }


@pytest.mark.anyio
async def test_concurrent_http_clients_never_see_each_others_files(http_server: int) -> None:
    url = f"http://127.0.0.1:{http_server}/mcp"
    started = asyncio.Barrier(CLIENTS)
    seen = await asyncio.gather(*(one_client(url, me, CLIENTS, started) for me in range(CLIENTS)))
    for me, view in enumerate(seen):
        mine = sorted([f"mine-{me}.txt", "shared-name.txt"])
        assert view["listed"] == mine, (me, view)
        assert view["read"] == f"client {me}", "the same path holds each client's own content"
        assert view["foreign_found"] == [None] * (2 * (CLIENTS - 1)), (me, view["foreign_found"])
        assert view["after"] == mine, "no other client could delete this one's files"


@pytest.mark.anyio
async def test_a_stdio_session_keeps_its_files_and_another_session_starts_empty(world: BuiltWorld) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kopa_gen", "serve", PLATFORM], env=env()
    )
    async with Client(params) as first:
        await first.call_tool("workspace_write_file", {"path": "kept.txt", "content": "from call 1"})
        listed = await first.call_tool("workspace_list_files", {})
        assert [r["path"] for r in rows(listed)] == ["kept.txt"]
    async with Client(params) as second:
        listed = await second.call_tool("workspace_list_files", {})
        assert rows(listed) == []


@pytest.fixture
def exposed_server(project: Project, world: BuiltWorld) -> Iterator[tuple[str, str]]:
    """What `serve --host 0.0.0.0 --allow-remote --token-env ... --allowed-host kopa.test --allowed-origin
    https://agent.kopa.test` builds, listening on loopback only for the test (the checks read headers)."""
    from kopa_gen.compose import platform_client
    from kopa_gen.sandbox.local import open_sandbox

    token = "t0ken-" + "x" * 26
    port = free_port()
    server = platforms_server(
        ROOT, [PLATFORM], lambda: {PLATFORM: platform_client(project, PLATFORM, False, open_sandbox(project))}
    )
    checks = exposure("0.0.0.0", port, token, ["kopa.test"], ["https://agent.kopa.test"])
    config = uvicorn.Config(checks.app(server), host="127.0.0.1", port=port, log_level="critical")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/mcp", token
    running.should_exit = True
    thread.join(10)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


def test_off_loopback_a_request_needs_the_token_a_known_host_and_origin(
    exposed_server: tuple[str, str],
) -> None:
    url, token = exposed_server
    port = url.split(":")[2].split("/")[0]
    base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def status(**headers: str) -> int:
        response = httpx.post(url, content=json.dumps(INITIALIZE), headers={**base, **headers}, timeout=30)
        return response.status_code

    good = {"Authorization": f"Bearer {token}", "Host": f"kopa.test:{port}"}
    assert status(**good) == 200
    assert status(Host=f"kopa.test:{port}") == 401, "no token"
    assert status(**{**good, "Authorization": "Bearer " + "y" * len(token)}) == 401, "another token"
    assert status(**{**good, "Host": f"evil.test:{port}"}) == 421
    assert status(**{**good, "Origin": "https://evil.test"}) == 403
    assert status(**{**good, "Origin": "https://agent.kopa.test"}) == 200


@pytest.mark.anyio
async def test_an_sdk_client_with_the_token_uses_the_tools(exposed_server: tuple[str, str]) -> None:
    url, token = exposed_server
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as c,
    ):
        written = await c.call_tool("workspace_write_file", {"path": "a.txt", "content": "x"})
        assert not written.is_error


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--host", "0.0.0.0"], "is not a loopback address: anyone who can reach it could call"),
        (["--host", "0.0.0.0", "--live"], "on your own API keys (--live)"),
        (["--host", "10.1.2.3", "--allow-remote"], "--allow-remote needs --token-env VAR"),
        (
            ["--host", "10.1.2.3", "--allow-remote", "--token-env", "KOPA_TEST_UNSET"],
            "$KOPA_TEST_UNSET is unset",
        ),
        (["--host", "0.0.0.0", "--allow-remote", "--token-env", "KOPA_TEST_TOKEN"], "--allowed-host NAME"),
        (["--allowed-origin", "agent.kopa.test"], "scheme://host[:port]"),
        (["--transport", "stdio", "--allow-remote"], "apply to --transport http"),
    ],
)
def test_exposure_the_user_did_not_ask_for_is_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOPA_TEST_TOKEN", "z" * 40)
    monkeypatch.delenv("KOPA_TEST_UNSET", raising=False)
    transport = [] if "--transport" in argv else ["--transport", "http"]
    code = main(["--root", str(ROOT), "serve", "region", *transport, *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err
