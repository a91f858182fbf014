"""The platforms' sample arguments (`x-kopa.examples`), called through a Session over the sandbox world: every
required argument has examples, every tool finds data with them, and every example value finds data somewhere.
EDGE relies on all three when it starts probe chains and fills unbound arguments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT

PLATFORMS = ("dart", "fsc", "neis", "region")
TOOLS: list[tuple[str, dict[str, Any]]] = [
    (pid, tool)
    for pid in PLATFORMS
    for tool in json.loads((ROOT / "generated" / "servers" / pid / "tools.json").read_text(encoding="utf-8"))[
        "tools"
    ]
]
Examples = dict[str, list[str | int]]


def paging(project: Project, pid: str) -> set[str]:
    """Paging arguments, which examples never give: the platform's own, and those of bulk-file tools."""
    spec = project.platform(pid).kopa.paging
    return {"page", "page_size", *((spec.page, spec.size) if spec else ())}


def candidates(tool: dict[str, Any], examples: Examples, skip: set[str]) -> list[dict[str, Any]]:
    """Calls made of example values: the i-th value of every required argument (lists that name one entity
    together, such as a company's corp_code and corp_name, are in the same order). A tool without required
    arguments gets the values of its first argument that has examples, as EDGE starts a probe chain there."""
    required: list[str] = tool["inputSchema"].get("required", [])
    if required:
        count = max(len(examples[name]) for name in required)
        return [
            {name: examples[name][min(i, len(examples[name]) - 1)] for name in required} for i in range(count)
        ]
    first = next((a for a in tool["inputSchema"]["properties"] if a not in skip and a in examples), None)
    return [{first: value} for value in examples[first]] if first else [{}]


def found(structured: dict[str, Any] | None) -> int:
    if structured is None:
        return 0
    if "record" in structured:
        return 1 if structured["record"] else 0
    return int(structured["total_count"])


@pytest.mark.parametrize(("pid", "tool"), TOOLS, ids=[tool["name"] for _, tool in TOOLS])
def test_required_arguments_have_examples(project: Project, pid: str, tool: dict[str, Any]) -> None:
    missing = set(tool["inputSchema"].get("required", [])) - set(project.platform(pid).kopa.examples)
    assert not missing, f"add x-kopa.examples for {sorted(missing)} to specs/platforms/{pid}/openapi.yaml"


@pytest.mark.anyio
@pytest.mark.parametrize(("pid", "tool"), TOOLS, ids=[tool["name"] for _, tool in TOOLS])
async def test_example_call_finds_data(
    project: Project, world: BuiltWorld, pid: str, tool: dict[str, Any]
) -> None:
    """The first values make a valid call; it finds data, or a later candidate does (a timetable service needs a
    school of its own level, a DS005 list a company that filed such a decision)."""
    examples = project.platform(pid).kopa.examples
    calls = candidates(tool, examples, paging(project, pid))
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
    """Each value, added to the first values of a tool's required arguments, finds data in some tool taking it."""
    examples = project.platform(pid).kopa.examples
    tools = [tool for p, tool in TOOLS if p == pid]
    misses: list[str] = []
    async with Session.open(project, [pid]) as session:
        for name, values in examples.items():
            takers = [t for t in tools if name in t["inputSchema"]["properties"]]
            for value in values:
                for tool in takers:
                    args = {r: examples[r][0] for r in tool["inputSchema"].get("required", [])}
                    outcome = await session.call(tool["name"], {**args, name: value})
                    assert not outcome.is_error, f"{tool['name']}({args}, {name}={value!r}): {outcome.text}"
                    if found(outcome.structured):
                        break
                else:
                    misses.append(f"{name}={value!r}")
    assert not misses, f"{pid}: no tool finds data for {misses}"
