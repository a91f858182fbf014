"""A short run of scripts/fuzz.py as a regression test: malformed tool calls for every tool of every platform, malformed
HTTP requests around every operation, and the fixed list of command-line mistakes. No crash, no traceback shown,
no HTTP 5xx, no key in any answer. (The script's full run, with its figures, is in the closing notes.)"""

from __future__ import annotations

import asyncio
import importlib.util
from types import ModuleType

import pytest

from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def fuzz() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kopa_fuzz", ROOT / "scripts" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bad(counts: dict[str, int], *names: str) -> dict[str, int]:
    return {name: counts[name] for name in names if counts[name]}


def test_malformed_tool_calls_are_tool_errors(fuzz: ModuleType, project: Project, world: BuiltWorld) -> None:
    counts = asyncio.run(fuzz.fuzz_tools(project, per_tool=8, seed=11))
    assert counts["tool error"] > counts["sent"] // 2, counts
    assert not bad(counts, "crash (exception escaped Session.call)", "traceback in result", "key leaked")


def test_malformed_http_requests_get_answers(fuzz: ModuleType, project: Project, world: BuiltWorld) -> None:
    counts = fuzz.fuzz_http(project, 400, seed=11)
    assert counts["HTTP 4xx"] + counts["HTTP 2xx"] == counts["sent"], counts
    assert not bad(counts, "HTTP 5xx", "closed without an answer", "traceback in body", "key leaked")


def test_command_line_mistakes_are_one_line(fuzz: ModuleType, world: BuiltWorld) -> None:
    counts = fuzz.fuzz_cli(0, seed=11)
    assert counts["exit 2"] == counts["sent"], counts
