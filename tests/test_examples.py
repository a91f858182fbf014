"""The platforms' sample arguments (`x-kopa.examples`, the platform's with an operation's own over them), called
through a Session over the sandbox world: every required argument has examples, every tool finds data with them,
and every example value finds data somewhere. EDGE relies on all three when it starts probe chains and fills
unbound arguments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT, repository_project
from tests.goldens import candidates, paging, start_of

PLATFORMS = [
    p.id
    for p in repository_project().platforms
    if p.kopa.examples or any(op.kopa.examples for op in p.operations)
]
TOOLS: list[tuple[str, dict[str, Any]]] = [
    (pid, tool)
    for pid in PLATFORMS
    for tool in json.loads((ROOT / "generated" / "servers" / pid / "tools.json").read_text(encoding="utf-8"))[
        "tools"
    ]
]


def found(structured: dict[str, Any] | None) -> int:
    if structured is None:
        return 0
    if "record" in structured:
        return 1 if structured["record"] else 0
    return int(structured["total_count"])


@pytest.mark.parametrize(("pid", "tool"), TOOLS, ids=[tool["name"] for _, tool in TOOLS])
def test_required_arguments_have_examples(project: Project, pid: str, tool: dict[str, Any]) -> None:
    missing = set(tool["inputSchema"].get("required", [])) - set(project.platform(pid).examples(tool["name"]))
    assert not missing, f"add x-kopa.examples for {sorted(missing)} to specs/platforms/{pid}/openapi.yaml"


@pytest.mark.anyio
@pytest.mark.parametrize(("pid", "tool"), TOOLS, ids=[tool["name"] for _, tool in TOOLS])
async def test_example_call_finds_data(
    project: Project, world: BuiltWorld, pid: str, tool: dict[str, Any]
) -> None:
    """The first values make a valid call; it finds data, or a later candidate does (a timetable service needs a
    school of its own level, a DS005 list a company that filed such a decision)."""
    examples = project.platform(pid).examples(tool["name"])
    calls = candidates(tool, examples, paging(project, pid), start_of(project, pid, tool))
    async with Session.open(project, [pid]) as session:
        first = await session.call(tool["name"], calls[0])
        assert not first.is_error, f"{tool['name']}({calls[0]}): {first.text}"
        if found(first.structured):
            return
        for args in calls[1:]:
            outcome = await session.call(tool["name"], args)
            assert not outcome.is_error, f"{tool['name']}({args}): {outcome.text}"
            if found(outcome.structured):
                return
    pytest.fail(f"{tool['name']} finds no data with any of {calls}")


@pytest.mark.anyio
@pytest.mark.parametrize("pid", PLATFORMS)
async def test_every_example_value_finds_data(project: Project, world: BuiltWorld, pid: str) -> None:
    """Each value, added to the first values of a tool's required arguments, finds data in some tool taking it (a
    tool may refuse it alone, as OpenDART's list.json refuses a bgn_de three years back without a corp_code); an
    operation's own value, in that operation."""
    platform = project.platform(pid)
    tools = [tool for p, tool in TOOLS if p == pid]
    own = {t["name"]: platform.operation(t["name"]).kopa.examples for t in tools}
    values = [
        (
            name,
            value,
            [t for t in tools if name in t["inputSchema"]["properties"] and name not in own[t["name"]]],
        )
        for name, vs in platform.kopa.examples.items()
        for value in vs
    ]
    values += [(name, value, [t]) for t in tools for name, vs in own[t["name"]].items() for value in vs]
    misses: list[str] = []
    async with Session.open(project, [pid]) as session:
        for name, value, takers in values:
            refused: list[str] = []
            for tool in takers:
                examples = platform.examples(tool["name"])
                args = {r: examples[r][0] for r in tool["inputSchema"].get("required", [])}
                args = {**start_of(project, pid, tool), **args}
                outcome = await session.call(tool["name"], {**args, name: value})
                if outcome.is_error:
                    refused.append(f"{tool['name']}({args}, {name}={value!r}): {outcome.text}")
                elif found(outcome.structured):
                    break
            else:
                misses.append(f"{name}={value!r}" + "".join(f"\n  refused by {r}" for r in refused))
    assert not misses, f"{pid}: no tool finds data for {misses}"
