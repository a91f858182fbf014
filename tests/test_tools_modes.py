"""How the tools meet the model (`--tools-mode`): the task's list, every tool, or search mode (each platform's entry
tools beside `search_tools` and `call_tool`), in a Session, in `kopa-gen eval` and over a real MCP transport."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.language.diagnostics import SpecError
from kopa_gen.mcp.search import CALL_TOOL, SEARCH_TOOL, ToolIndex, tokens
from kopa_gen.project import Project, load_project
from kopa_gen.runtime.session import Session, frozen_tools
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT
from tests.toyspec import spec_copy, write_project


def listing(project: Project, pid: str) -> list[dict[str, Any]]:
    return list(frozen_tools(project.root / "generated" / "servers" / pid / "tools.json"))


def hidden_tool(project: Project, pid: str) -> dict[str, Any]:
    """A tool of `pid` that is not one of its entry tools and takes no required argument."""
    entry = set(project.platform(pid).kopa.entry)
    return next(
        t for t in listing(project, pid) if t["name"] not in entry and not t["inputSchema"].get("required")
    )


def test_korean_compounds_are_found_by_their_parts() -> None:
    """법정동코드 is written without spaces in one place and with them in another: both meet on bigrams."""
    assert {"법정", "정동", "동코", "코드"} <= set(tokens("법정동코드"))
    assert "corp" in tokens("dart_corp_code") and "code" in tokens("corp_code")
    index = ToolIndex.of(
        [
            {"name": "a_list_codes", "title": "법정동 코드 목록", "description": "", "inputSchema": {}},
            {"name": "b_list_meals", "title": "급식 식단", "description": "학교 급식", "inputSchema": {}},
        ]
    )
    assert [t["name"] for t, _ in index.search("법정동코드 알려줘")] == ["a_list_codes"]
    assert index.search("날씨") == []  # nothing shares a term: no result rather than a random one


def test_every_tool_is_found_by_its_own_title(project: Project) -> None:
    """Over every tool of every platform, a search with a tool's Korean title ranks it in the top 10."""
    every = [t for p in project.platforms for t in listing(project, p.id)]
    index = ToolIndex.of(every)
    lost = [t["name"] for t in every if t["name"] not in {h["name"] for h, _ in index.search(t["title"], 10)}]
    assert not lost, lost


@pytest.mark.anyio
async def test_search_mode_lists_entry_tools_and_reaches_the_rest_through_call_tool(
    project: Project, world: BuiltWorld
) -> None:
    pids = [p.id for p in project.platforms if p.kopa.entry and not p.kopa.local][:3]
    async with Session.open(project, pids, max_calls=3, mode="search") as session:
        names = [t["name"] for t in session.tools()]
        entry = [tool for pid in pids for tool in project.platform(pid).kopa.entry]
        assert sorted(names) == sorted([*entry, SEARCH_TOOL, CALL_TOOL])
        target = hidden_tool(project, pids[0])
        refused = await session.call(target["name"], {})
        assert refused.is_error and SEARCH_TOOL in refused.text and CALL_TOOL in refused.text
        found = await session.call(SEARCH_TOOL, {"query": target["title"]})
        assert not found.is_error and found.structured is not None
        assert target["name"] in [t["name"] for t in found.structured["tools"]]
        assert all("inputSchema" in t for t in found.structured["tools"])
        bad = await session.call(SEARCH_TOOL, {"query": "", "limit": 100})
        assert bad.is_error and "query" in bad.text
        called = await session.call(CALL_TOOL, {"name": target["name"], "arguments": {}})
        assert not called.is_error, called.text
        assert session.calls[-1].tool == target["name"]  # logged as the tool it called: ACTION sees it
        assert [c.tool for c in session.calls].count(SEARCH_TOOL) == 2
        assert session.started == 3  # the refused direct call, the malformed search, the call: not the search
        over = await session.call(SEARCH_TOOL, {"query": target["title"]})
        assert not over.is_error  # a search costs no call of the budget, now used up
        spent = await session.call(CALL_TOOL, {"name": target["name"]})
        assert spent.is_error and "budget" in spent.text


@pytest.mark.anyio
async def test_all_mode_lists_every_tool_and_task_mode_the_tasks_own(project: Project) -> None:
    pid = next(p.id for p in project.platforms if not p.kopa.local)
    one = listing(project, pid)[0]["name"]
    async with Session.open(project, [pid], tools=[one], mode="all") as session:
        assert [t["name"] for t in session.tools()] == [t["name"] for t in listing(project, pid)]
    async with Session.open(project, [pid], tools=[one], mode="task") as session:
        assert [t["name"] for t in session.tools()] == [one]


@pytest.mark.anyio
async def test_oracle_passes_in_search_mode_and_the_run_says_which_mode_ran(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    """The oracle reaches hidden tools through call_tool; a run folder records the mode, and resuming it in
    another mode is refused, naming the flag."""
    first = project.tasks[0][1].id
    config = EvalConfig(policy="oracle", out=tmp_path, tasks=[first], rollouts=1, tools_mode="search")
    records = await run_eval(project, config)
    assert [r["reward"] for r in records] == [True]
    calls = records[0]["calls"]
    gold = {c.tool for step in project.task(first).gold for c in step.calls}
    assert gold <= {c["tool"] for c in calls}
    assert json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))["tools_mode"] == "search"
    with pytest.raises(Exception, match="--tools-mode"):
        await run_eval(project, EvalConfig(policy="oracle", out=tmp_path, tasks=[first], rollouts=1))


def test_an_entry_tool_the_platform_lacks_is_refused_at_its_line(tmp_path: Path) -> None:
    spec = spec_copy()
    spec["x-kopa"]["entry"] = ["toy_no_such_tool"]
    write_project(tmp_path, spec)
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    lines = [d.render() for d in info.value.diagnostics]
    assert any("x-kopa.entry[0]" in line and "toy_no_such_tool" in line for line in lines), lines


@pytest.mark.anyio
async def test_search_mode_over_stdio(project: Project, world: BuiltWorld) -> None:
    """`kopa-gen serve --tools-mode search` through the official client on a real stdio transport."""
    pids = [p.id for p in project.platforms if p.kopa.entry and not p.kopa.local][:2]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kopa_gen", "serve", *pids, "--tools-mode", "search"],
        env={**os.environ, "KOPA_GEN_ROOT": str(ROOT)},
    )
    target = hidden_tool(project, pids[-1])
    async with Client(params) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        entry = [tool for pid in pids for tool in project.platform(pid).kopa.entry]
        assert sorted(listed) == sorted([*entry, SEARCH_TOOL, CALL_TOOL])
        found = await client.call_tool(SEARCH_TOOL, {"query": target["title"], "limit": 5})
        assert found.structured_content is not None
        assert target["name"] in [t["name"] for t in found.structured_content["tools"]]
        called = await client.call_tool(CALL_TOOL, {"name": target["name"], "arguments": {}})
        assert not called.is_error, called.content
        assert called.structured_content is not None and called.structured_content["code"]
        unknown = await client.call_tool(CALL_TOOL, {"name": "nope_tool"})
        assert unknown.is_error


@pytest.mark.anyio
async def test_the_listing_leaves_out_output_schemas_unless_asked_and_they_still_validate(
    project: Project, sandbox: Any
) -> None:
    """The default listing is the frozen tools less their output schemas (measured: the bytes it saves); with
    output_schemas it is tools.json exactly, and a real result validates against the trimmed schema."""
    import jsonschema

    from kopa_gen.compose import sandbox_client
    from kopa_gen.mcp.generated import generated_module
    from kopa_gen.mcp.server import build_server

    full = compact = 0
    for p in project.platforms:
        tools = listing(project, p.id)
        full += len(json.dumps(tools, ensure_ascii=False))
        compact += len(
            json.dumps(
                [{k: v for k, v in t.items() if k != "outputSchema"} for t in tools], ensure_ascii=False
            )
        )
    assert compact < 0.5 * full, (compact, full)
    pid = "region" if "region" in {p.id for p in project.platforms} else project.platforms[0].id
    module = generated_module(pid)
    async with sandbox_client(sandbox, pid) as http:
        box = module.create_toolbox(http)
        for schemas in (False, True):
            server = build_server("t", "t", [module.CATALOG], [box], output_schemas=schemas)
            async with Client(server, mode="legacy") as client:
                wire = [
                    t.model_dump(by_alias=True, exclude_none=True, mode="json")
                    for t in (await client.list_tools()).tools
                ]
                frozen = listing(project, pid)
                assert wire == (
                    frozen
                    if schemas
                    else [{k: v for k, v in t.items() if k != "outputSchema"} for t in frozen]
                )
        tool = frozen[0]
        outcome = await box.call(tool["name"], {})
        assert not outcome.is_error, outcome.text
        jsonschema.validate(outcome.structured, tool["outputSchema"])


TOY_TASK: dict[str, Any] = {
    "id": "fin-001",
    "domain": "finance",
    "query": "사과가 들어간 과일 가운데 가장 비싼 과일의 가격은?",
    "system": {"today": "2026-11-29", "keys": ["toy"]},
    "max_calls": 4,
    "reward": ["RESPONSE"],
    "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {"name": "사과"}}]}],
    "answer": {"kind": "number", "value": 1500, "unit": "원"},
    "answer_from": {"from": "fruit", "path": "max(rows[*].price)"},
}


def crowded(tmp_path: Path, modes: list[str]) -> tuple[Project, list[str]]:
    """The toy platform with ten twins of its fruit list that a search for its title ranks first (the same
    words, names that sort before it), and the toy task declaring `modes`; built: (project, build errors)."""
    import copy

    import yaml

    from kopa_gen.compile.build import build
    from kopa_gen.compile.fixtures import compile_fixtures
    from kopa_gen.world.build import ensure_world

    spec = spec_copy()
    op = spec["paths"]["/fruits"]["get"]
    for k in range(10):
        twin = copy.deepcopy(op)
        twin["operationId"], twin["x-kopa"]["tool"] = f"getFruits{k}", f"toy_list_a{k}"
        spec["paths"][f"/fruits{k}"] = {"get": twin}
    write_project(tmp_path, spec)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True)
    task = {**TOY_TASK, "tools_modes": modes}
    (folder / "fin-001.yaml").write_text(yaml.safe_dump(task, allow_unicode=True, sort_keys=False), "utf-8")
    project = load_project(tmp_path)
    build(project)
    ensure_world(project.world)
    _, diags = compile_fixtures(project)
    return project, [d.render() for d in diags.errors]


def test_a_task_declared_for_search_mode_needs_each_gold_tool_found(tmp_path: Path) -> None:
    """The build holds `tools_modes: [task, search]` to a search for each gold tool's title finding it; a task
    that leaves search out builds, and a run in search mode says it ran outside the task's modes."""
    _, errors = crowded(tmp_path / "both", ["task", "search"])
    assert len(errors) == 1, errors
    assert "gold[0].calls[0].tool" in errors[0]
    assert "does not find toy_list_fruits among the top 10 of 11 tools" in errors[0]
    assert "leave search out of the task's tools_modes" in errors[0]
    project, errors = crowded(tmp_path / "task", ["task"])
    assert errors == []
    out = tmp_path / "run"
    lines: list[str] = []
    config = EvalConfig(policy="oracle", out=out, rollouts=1, tools_mode="search")
    records = asyncio.run(run_eval(project, config, warn=lines.append))
    assert [r["reward"] for r in records] == [True]  # reached through call_tool all the same
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert manifest["unvalidated"] == ["fin-001"]
    assert any("not validated in search mode" in line and "fin-001" in line for line in lines), lines
    from kopa_gen.evaluate.rundir import describe, read_manifest

    read = read_manifest(out)
    assert read is not None and "1 tasks not validated in it: fin-001" in describe(read)
    task_mode = EvalConfig(policy="oracle", out=tmp_path / "run-task", rollouts=1)
    asyncio.run(run_eval(project, task_mode))
    assert json.loads((tmp_path / "run-task" / "run.json").read_text(encoding="utf-8"))["unvalidated"] == []
