"""When the environment fails, the policy is not blamed. With a damaged world file in the cache an eval records its
episodes as failed-infrastructure (not `error`, not scored), stops with one line after a few in a row, and the
same command, once the world is sound, runs them again; `kopa-gen call` and the MCP server answer with a tool
error naming the failure instead of a traceback or "Internal server error"."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from mcp import Client

from kopa_gen.cache import cache_dir
from kopa_gen.cli import main
from kopa_gen.compose import platform_client
from kopa_gen.evaluate.report import results
from kopa_gen.evaluate.rundir import read_episodes
from kopa_gen.evaluate.runner import EvalConfig, InfrastructureStop, run_eval
from kopa_gen.mcp.server import platforms_server
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld, world_hash
from tests.conftest import ROOT

TASKS = ["fin-001", "fin-003"]


DAMAGES = {
    "not a database": "the sandbox's world cannot be opened (DatabaseError: file is not a database)",
    "no tables": "(sandbox error: OperationalError: no such table",
}


def damage(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> str:
    """A cache whose world file for the project's seed is damaged: garbage that does not open (a disk that
    failed mid-copy), or a database without the world's tables, which every query fails on. Returns what the
    failure must say."""
    cache = tmp_path / kind.replace(" ", "-")
    cache.mkdir()
    checked = cache_dir() / "valid-specs"  # the specs were validated once already: not again (a minute)
    if checked.is_dir():
        (cache / "valid-specs").symlink_to(checked, target_is_directory=True)
    seed = project.world.seed
    path = cache / f"world-{seed}-{world_hash(project.world, seed)}.sqlite"
    if kind == "not a database":
        path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 50_000)
    else:
        sqlite3.connect(path).execute("CREATE TABLE unrelated (x)").connection.commit()
    monkeypatch.setenv("KOPA_GEN_CACHE", str(cache))
    return DAMAGES[kind]


@pytest.mark.parametrize("kind", sorted(DAMAGES))
def test_an_eval_over_a_damaged_world_is_infrastructure_stops_and_resumes(
    project: Project, world: BuiltWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    damaged_world = damage(project, tmp_path, monkeypatch, kind)
    out = tmp_path / "run"
    config = EvalConfig(
        policy="oracle",
        out=out,
        rollouts=1,
        tasks=TASKS,
        seeds=[0, 1, 2],
        concurrency=1,
        stop_after_infrastructure=3,
    )
    with pytest.raises(InfrastructureStop) as stopped:
        asyncio.run(run_eval(project, config))
    message = str(stopped.value)
    assert "\n" not in message and message.startswith(
        "stopped: 3 episodes in a row failed for infrastructure"
    )
    assert "run the same command again" in message
    written = read_episodes(out / "episodes.jsonl").records
    assert len(written) == 3
    assert {r["stop_reason"] for r in written} == {"infrastructure"}
    assert all(damaged_world in r["error"] for r in written), [r["error"] for r in written]
    assert results(written) == [], "failed-infrastructure episodes are not scored"

    monkeypatch.delenv("KOPA_GEN_CACHE")  # the world is sound again
    records = asyncio.run(run_eval(project, config))
    assert len(records) == 6 and all(r["stop_reason"] == "answered" and r["reward"] for r in records)
    assert len(results(records)) == 6


def test_call_and_mcp_answer_a_tool_error(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    platform = project.platform("region")
    tool = next(op.tool for op in platform.operations if op.kopa.shape == "list")
    arguments = {"locatadd_nm": "서울특별시"}

    async def through_mcp() -> str:
        server = platforms_server(
            ROOT, [platform.id], lambda: {platform.id: platform_client(project, platform.id, False)}
        )
        async with Client(server) as client:
            result = await client.call_tool(tool, arguments)
        assert result.is_error
        return str(result.content[0].text)  # type: ignore[union-attr]

    for kind in sorted(DAMAGES):
        said = damage(project, tmp_path, monkeypatch, kind)
        text = asyncio.run(through_mcp())
        assert said in text and "Internal server error" not in text, text

    # the command line, once (a project load each time): one line, exit 1, no traceback
    code = main(["--root", str(ROOT), "call", platform.id, tool, json.dumps(arguments, ensure_ascii=False)])
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.out + captured.err
    line = captured.out.strip()
    assert line.startswith(f"{tool} failed") and said in line and "\n" not in line, line
