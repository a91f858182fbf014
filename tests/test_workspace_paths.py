"""Workspace paths name one file each and never leave the workspace; an argument too long to send is a tool error
that names it and is logged; concurrent writes to one file over MCP HTTP leave one of the written contents."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from kopa_gen.client.client import MAX_URL_CHARS
from kopa_gen.compose import sandbox_client
from kopa_gen.mcp.generated import generated_module
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.paths import WorkspacePathError, normalize_path
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("given", "stored"),
    [("reports/../x", "x"), ("./a//b.txt", "a/b.txt"), ("a/./b/../c.txt", "a/c.txt"), ("x", "x")],
)
def test_a_path_is_normalised(given: str, stored: str) -> None:
    assert normalize_path("path", given) == stored


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("../../etc/passwd", "path: '../../etc/passwd' leads outside the workspace (above its root)"),
        ("a/../../b", "path: 'a/../../b' leads outside the workspace (above its root)"),
        ("..", "path: '..' leads outside the workspace (above its root)"),
        ("/etc/passwd", "path: '/etc/passwd' starts with '/'; paths are relative to the workspace root"),
        ("a/..", "path: 'a/..' names the workspace root, not a file"),
    ],
)
def test_a_path_outside_is_refused(given: str, message: str) -> None:
    with pytest.raises(WorkspacePathError) as err:
        normalize_path("path", given)
    assert str(err.value) == message


def test_a_prefix_keeps_its_folder_slash() -> None:
    assert normalize_path("prefix", "a/../reports/", prefix=True) == "reports/"
    assert normalize_path("prefix", "./", prefix=True) == ""


@pytest.mark.anyio
async def test_the_workspace_stores_one_name_per_file(project: Project, world: BuiltWorld) -> None:
    async with Session.open(project, ["workspace"]) as session:
        wrote = await session.call("workspace_write_file", {"path": "reports/../x", "content": "첫째"})
        assert not wrote.is_error and wrote.structured is not None
        assert wrote.structured["record"]["path"] == "x"
        again = await session.call("workspace_write_file", {"path": "./x", "content": "둘째"})
        assert not again.is_error
        listed = await session.call("workspace_list_files", {})
        assert listed.structured is not None
        assert [r["path"] for r in listed.structured["rows"]] == ["x"]
        read = await session.call("workspace_read_file", {"path": "a/../x"})
        assert read.structured is not None and read.structured["record"]["content"] == "둘째"
        escape = await session.call("workspace_write_file", {"path": "../../etc/passwd", "content": "x"})
        assert escape.is_error and escape.category == "bad_param"
        assert escape.text.endswith("path: '../../etc/passwd' leads outside the workspace (above its root)")
        outside = await session.call("workspace_list_files", {"prefix": "../"})
        assert outside.is_error and "prefix: '../' leads outside the workspace" in outside.text
        assert [c.is_error for c in session.calls] == [False, False, False, False, True, True]


LONG = "가" * 7300  # 65,700 characters once percent-encoded: past httpx's own URL limit


@pytest.mark.anyio
async def test_an_argument_too_long_to_send_is_a_logged_tool_error(
    project: Project, world: BuiltWorld
) -> None:
    pid, tool, arg = free_text_argument(project)
    async with Session.open(project, [pid]) as session:
        outcome = await session.call(tool, {arg: LONG})
    assert outcome.is_error and outcome.error_code == "bad_arguments" and outcome.category == "bad_param"
    assert outcome.text.startswith(
        f"invalid arguments for {tool}: {arg}: too long to send (7,300 characters, "
    )
    assert f"a request URL holds at most {MAX_URL_CHARS:,}" in outcome.text
    logged = session.calls[0]
    assert logged.tool == tool and logged.is_error and logged.text == outcome.text


@pytest.mark.anyio
async def test_the_workspace_content_limit_fits_in_a_url(project: Project, world: BuiltWorld) -> None:
    """The spec's maxLength for file content is what a request URL can carry, in Hangul."""
    async with Session.open(project, ["workspace"]) as session:
        fits = await session.call("workspace_write_file", {"path": "fits.txt", "content": "가" * 800})
        over = await session.call("workspace_write_file", {"path": "over.txt", "content": "가" * 801})
    assert not fits.is_error, fits.text
    assert over.is_error and "at most 800 characters" in over.text


def free_text_argument(project: Project) -> tuple[str, str, str]:
    """A string argument with no length, pattern, enum or format limit, of a read tool the sandbox serves."""
    for platform in project.platforms:
        for op in platform.operations:
            if op.kopa.effect != "read" or op.kopa.shape == "file":
                continue
            for param in op.params:
                limits = {"maxLength", "pattern", "enum", "format"} & set(param.schema)
                if param.schema.get("type", "string") == "string" and not limits:
                    return platform.id, op.tool, param.name
    raise AssertionError("no free-text argument in any platform")


@pytest.mark.anyio
async def test_an_argument_too_long_over_mcp_is_a_tool_error_not_a_protocol_error(
    project: Project, sandbox: Sandbox
) -> None:
    pid, tool, arg = free_text_argument(project)
    async with sandbox_client(sandbox, pid) as http:
        server = generated_module(pid).create_server(http)
        async with Client(server) as client:
            result = await client.call_tool(tool, {arg: LONG})
    assert result.is_error
    assert f"{arg}: too long to send" in result.content[0].text  # type: ignore[union-attr]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def workspace_server(world: BuiltWorld) -> Iterator[int]:
    port = free_port()
    cmd = [sys.executable, "-m", "kopa_gen", "serve", "workspace", "--transport", "http", "--port", str(port)]
    env = {**os.environ, "KOPA_GEN_ROOT": str(ROOT)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.anyio
async def test_concurrent_writes_to_one_file_leave_one_written_content(workspace_server: int) -> None:
    # One MCP client (one session: one sandbox, see tests/test_mcp_sessions.py) sends 16 writes to one file at once.
    url = f"http://127.0.0.1:{workspace_server}/mcp"
    contents = [f"작성자 {i}: " + "내용" * (20 + 17 * i) for i in range(16)]
    echoed: list[Any] = []
    async with Client(url) as client:

        async def write(content: str) -> None:
            result = await client.call_tool(
                "workspace_write_file", {"path": "reports/../same.txt", "content": content}
            )
            assert not result.is_error and result.structured_content is not None
            echoed.append(result.structured_content["record"])

        async with anyio.create_task_group() as group:
            for content in contents:
                group.start_soon(write, content)
        read = await client.call_tool("workspace_read_file", {"path": "same.txt"})
        listed = await client.call_tool("workspace_list_files", {})
    assert read.structured_content is not None and listed.structured_content is not None
    final = read.structured_content["record"]
    assert final is not None, read.structured_content
    assert final["content"] in contents and final["size"] == len(final["content"])
    assert len(echoed) == 16 and all(
        r["content"] in contents and r["size"] == len(r["content"]) for r in echoed
    )
    assert [r["path"] for r in listed.structured_content["rows"]] == ["same.txt"]
