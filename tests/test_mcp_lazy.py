"""Start-up does not grow with the tool count: listing imports no tool's models, a call imports only its own
tool's, and the toolboxes behind a served project are opened at the first call (on a generated toy project)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from kopa_gen.compile.build import build
from kopa_gen.compose import sandbox_client
from kopa_gen.mcp.generated import generated_module
from kopa_gen.mcp.server import build_server, platforms_server
from kopa_gen.mcp.toolbox import ToolBox
from kopa_gen.project import load_project
from kopa_gen.sandbox.local import open_sandbox
from tests.toyspec import spec_copy, write_project

FIRST, SECOND = "toy_list_fruits", "toy_list_fruits_by_name"


def two_tool_project(root: Path) -> Path:
    spec = spec_copy()
    second = copy.deepcopy(spec["paths"]["/fruits"])
    second["get"]["operationId"] = "getFruitsByName"
    second["get"]["x-kopa"]["tool"] = SECOND
    spec["paths"]["/fruits/byName"] = second
    write_project(root, spec)
    build(load_project(root))
    return root


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    return two_tool_project(tmp_path)


def tool_modules(package: str) -> set[str]:
    prefix = f"{package}.tools."
    return {name.removeprefix(prefix) for name in sys.modules if name.startswith(prefix)}


def frozen(root: Path) -> list[dict[str, Any]]:
    doc = json.loads((root / "generated" / "servers" / "toy" / "tools.json").read_text(encoding="utf-8"))
    tools: list[dict[str, Any]] = doc["tools"]
    return tools


@pytest.mark.anyio
async def test_listing_imports_no_tool_and_a_call_imports_only_its_own(toy: Path) -> None:
    module = generated_module("toy", root=toy)
    package = module.CATALOG.package
    assert tool_modules(package) == set()
    project = load_project(toy)
    async with sandbox_client(open_sandbox(project), "toy") as http:
        box = module.create_toolbox(http)
        async with Client(module.create_server(http), mode="legacy") as client:
            listed = await client.list_tools()
            wire = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
            assert wire == [{k: v for k, v in t.items() if k != "outputSchema"} for t in frozen(toy)]
            assert tool_modules(package) == set() and box.bindings.loaded == frozenset()
            result = await client.call_tool(FIRST, {"name": "사과"})
            assert not result.is_error and result.structured_content is not None
            assert result.structured_content["total_count"] == 2
            assert tool_modules(package) == {FIRST}
        assert SECOND in box.bindings and box.bindings.loaded == frozenset()  # membership imports nothing
        outcome = await box.call(SECOND, {"pageNo": 2})
        assert not outcome.is_error and box.bindings.loaded == frozenset({SECOND})
    assert tool_modules(package) == {FIRST, SECOND}


@pytest.mark.anyio
async def test_toolboxes_are_opened_at_the_first_call_only(toy: Path) -> None:
    project = load_project(toy)
    sandbox = open_sandbox(project)
    opened: list[int] = []

    def open_clients() -> dict[str, Any]:
        opened.append(1)
        return {"toy": sandbox_client(sandbox, "toy")}

    server = platforms_server(toy, ["toy"], open_clients)
    async with Client(server, mode="legacy") as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == [FIRST, SECOND]
        unknown = await client.call_tool("toy_nope", {})
        assert unknown.is_error and unknown.content[0].text == (  # type: ignore[union-attr]
            f"unknown tool 'toy_nope'; available tools: {FIRST}, {SECOND}"
        )
        assert opened == []
        for _ in range(2):
            result = await client.call_tool(FIRST, {"numOfRows": 1})
            assert not result.is_error
        assert opened == [1]


@pytest.mark.anyio
async def test_a_failed_opening_is_a_tool_error_and_is_tried_again(toy: Path) -> None:
    module = generated_module("toy", root=toy)
    attempts: list[int] = []
    sandbox = open_sandbox(load_project(toy))

    def toolboxes() -> list[ToolBox]:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("world not built")
        return [module.create_toolbox(sandbox_client(sandbox, "toy"))]

    server = build_server("kopa-toy", "toy", [module.CATALOG], toolboxes)
    async with Client(server, mode="legacy") as client:
        failed = await client.call_tool(FIRST, {})
        assert failed.is_error
        assert failed.content[0].text == "the server cannot open its platforms: world not built"  # type: ignore[union-attr]
        result = await client.call_tool(FIRST, {})
        assert not result.is_error and len(attempts) == 2


def test_serving_loads_no_project_before_the_first_call(toy: Path) -> None:
    """`kopa-gen serve` lists from the generated listings alone: a real start-up (a fresh interpreter, stdin at
    its end, so it serves nothing and exits) imports neither the project loader nor the task models; the first
    tool call loads them (a third of the start-up went there)."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kopa_gen", "--root", str(toy), "serve", "toy"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "kopa_gen.mcp.server" in imported and "mcp.server" in imported  # it did start a server
    assert not imported & {"kopa_gen.project", "kopa_gen.language.task", "kopa_gen.world.build"}
