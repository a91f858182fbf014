"""Golden tool calls: the hand-written ones of tests/calls.yaml (anchored, with a minimum row count), else calls
made of the platform's `x-kopa.examples`, so a new spec-only platform is exercised with no test edit."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from kopa_gen.project import Project
from tests.conftest import ROOT

Examples = dict[str, list[str | int]]
CALLS = ROOT / "tests" / "calls.yaml"  # a project without hand-written calls uses its x-kopa.examples only
WRITTEN: dict[str, dict[str, dict[str, Any]]] = (
    yaml.safe_load(CALLS.read_text(encoding="utf-8")) if CALLS.exists() else {}
)


def paging(project: Project, pid: str) -> set[str]:
    """Paging arguments, which examples never give: the platform's own, and those of bulk-file tools."""
    spec = project.platform(pid).kopa.paging
    return {"page", "page_size", *((spec.page, spec.size) if spec else ())}


def candidates(
    tool: dict[str, Any], examples: Examples, skip: set[str], start: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """Calls made of example values: the i-th value of every required argument (lists that name one entity
    together, such as a company's corp_code and corp_name, are in the same order). A tool without required
    arguments gets the values of its first argument that has examples, as EDGE starts a probe chain there.
    Each call adds the operation's `x-kopa.start` arguments, as EDGE's first calls do."""
    return [{**(start or {}), **call} for call in _candidates(tool, examples, skip)]


def start_of(project: Project, pid: str, tool: dict[str, Any]) -> dict[str, str]:
    """The operation's `x-kopa.start` arguments."""
    return dict(project.platform(pid).operation(tool["name"]).kopa.start)


def _candidates(tool: dict[str, Any], examples: Examples, skip: set[str]) -> list[dict[str, Any]]:
    required: list[str] = tool["inputSchema"].get("required", [])
    if required:
        missing = [name for name in required if name not in examples]
        assert not missing, (
            f"{tool['name']}: no x-kopa.examples for required {', '.join(missing)} (or write its call in "
            "tests/calls.yaml)"
        )
        count = max(len(examples[name]) for name in required)
        return [
            {name: examples[name][min(i, len(examples[name]) - 1)] for name in required} for i in range(count)
        ]
    first = next((a for a in tool["inputSchema"]["properties"] if a not in skip and a in examples), None)
    return [{first: value} for value in examples[first]] if first else [{}]


def tools_of(pid: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads(
        (ROOT / "generated" / "servers" / pid / "tools.json").read_text(encoding="utf-8")
    )["tools"]
    return tools


def golden_calls(project: Project, pid: str) -> dict[str, dict[str, Any]]:
    """One call per tool of a platform: tests/calls.yaml's in their order (a write before the read of it), then
    the first call made of its examples for every other tool."""
    out: dict[str, dict[str, Any]] = dict(WRITTEN.get(pid, {}))
    platform = project.platform(pid)
    for tool in tools_of(pid):
        if tool["name"] not in out:
            examples = platform.examples(tool["name"])
            out[tool["name"]] = {
                "args": candidates(tool, examples, paging(project, pid), start_of(project, pid, tool))[0],
                "min_total": 0,
            }
    return out
