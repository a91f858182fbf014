"""`kopa-gen tools [PLATFORM] [TOOL]`: every generated tool with its Korean summary; one tool's arguments, paging
and an example call that works as printed."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from typing import Any

from kopa_gen.mcp.describe import example_arguments, frozen_tools, generated_platforms
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT


def kopa(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kopa_gen", "--root", str(ROOT), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "KOPA_GEN_ROOT": str(ROOT)},
        timeout=120,
        check=False,
    )


def test_the_listing_has_every_tool_with_its_summary() -> None:
    listed = kopa("tools")
    assert listed.returncode == 0 and not listed.stderr
    lines = listed.stdout.splitlines()
    for pid in generated_platforms(ROOT):
        tools = frozen_tools(ROOT, pid)
        assert f"{pid} ({len(tools)} tools)" in lines
        for tool in tools:
            assert any(line.split() == [tool["name"], *tool["title"].split()] for line in lines), tool["name"]


def a_tool_with_a_required_example(project: Project) -> tuple[str, dict[str, Any]]:
    """A (platform, tool) whose required arguments all have examples in the spec."""
    for platform in project.platforms:
        for tool in frozen_tools(ROOT, platform.id):
            required = tool["inputSchema"].get("required", [])
            if required and all(platform.examples(tool["name"]).get(r) for r in required):
                return platform.id, tool
    raise AssertionError("no tool has examples for its required arguments")


def test_one_tool_shows_arguments_paging_and_an_example_that_works(
    project: Project, world: BuiltWorld
) -> None:
    pid, tool = a_tool_with_a_required_example(project)
    shown = kopa("tools", pid, tool["name"])
    assert shown.returncode == 0 and not shown.stderr
    text = shown.stdout
    assert text.splitlines()[0] == f"{tool['name']}: {tool['title']}"
    for name, prop in tool["inputSchema"]["properties"].items():
        need = "required" if name in tool["inputSchema"].get("required", []) else "optional"
        line = next(line for line in text.splitlines() if line.split()[:1] == [name])
        assert line.split()[1].startswith(prop["type"]) and line.endswith(need), line
        assert prop["description"] in text
    assert "\npaging: " in text
    example = text.rstrip().splitlines()[-1].strip()
    args = example_arguments(tool, project.platform(pid).examples(tool["name"]))
    assert example == f"kopa-gen call {pid} {tool['name']} '{json.dumps(args, ensure_ascii=False)}'"
    ran = kopa(*shlex.split(example)[1:])
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_paged_tool_says_how_it_pages(project: Project) -> None:
    for platform in project.platforms:
        for op in platform.operations:
            paging = project.page_params(op.tool)
            if paging is None:
                continue
            text = kopa("tools", platform.id, op.tool).stdout
            page, size = paging
            assert f"paging: {page} is the page number (from 1), {size} the rows per page" in text
            return
    raise AssertionError("no tool pages")


def test_an_unknown_platform_or_tool_is_one_line() -> None:
    known = ", ".join(generated_platforms(ROOT))
    nope = kopa("tools", "nope")
    assert nope.returncode == 2
    assert nope.stderr == f"kopa-gen tools: error: unknown platform 'nope'; known platforms: {known}\n"
    pid = generated_platforms(ROOT)[0]
    missing = kopa("tools", pid, "nope")
    assert missing.returncode == 2 and missing.stderr.startswith(
        f"kopa-gen tools: error: {pid} has no tool 'nope'"
    )
    assert missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_provenance_counts_every_tool_by_its_level(project: Project) -> None:
    """`kopa-gen tools --provenance`: one row per real platform whose levels add up to its tools, an `all` row,
    and with a platform each tool's level: an operation's own `provenance` wins over its platform's."""
    shown = kopa("tools", "--provenance")
    assert shown.returncode == 0 and not shown.stderr
    rows = {line.split()[0]: line.split()[1:] for line in shown.stdout.splitlines() if line[:1].isalpha()}
    real = [p for p in project.platforms if not p.kopa.local]
    for platform in real:
        tools, *levels = (int(n.replace(",", "")) for n in rows[platform.id])
        assert tools == len(platform.operations) == sum(levels), platform.id
    assert int(rows["all"][0].replace(",", "")) == sum(len(p.operations) for p in real)
    own = [(p, op) for p in real for op in p.operations if op.kopa.provenance is not None]
    platform, op = own[0] if own else (real[0], real[0].operations[0])
    listed = kopa("tools", platform.id, "--provenance")
    line = next(line for line in listed.stdout.splitlines() if line.split()[:1] == [op.tool])
    expected = op.kopa.provenance or platform.kopa.provenance
    assert expected is not None and line.split()[1] == expected.verified, line
    assert expected.source.split()[0] in line


def test_provenance_of_an_unknown_platform_names_the_known_ones() -> None:
    shown = kopa("tools", "nope", "--provenance")
    assert shown.returncode == 2 and not shown.stdout
    (line,) = shown.stderr.splitlines()
    assert line.startswith("kopa-gen tools: error: unknown platform 'nope'; known platforms: ")
    assert line.split("known platforms: ")[1].split(", ") == generated_platforms(ROOT)
