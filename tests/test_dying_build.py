"""A world build killed halfway leaves nothing that blocks. An eval that held its run folder's lock while forked
builders filled a world is killed with SIGKILL: the builders die with it, the folder can be locked again at once,
and the partial world and the builders' scratch folder it left in the cache are swept by the next build. With
worker processes a run builds only the world its episodes use."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.evaluate import runner
from kopa_gen.evaluate.rundir import locked
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.processes import alive
from kopa_gen.project import Project
from kopa_gen.runtime.spread import Spread
from kopa_gen.world.build import BuiltWorld, sweep
from tests.conftest import ROOT

# A run folder locked, then a world whose two tables take minutes each, built on two forked processes.
EVAL_DURING_A_BUILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from kopa_gen.evaluate.rundir import locked
    from kopa_gen.project import load_project
    from kopa_gen.world.build import ensure_world
    from kopa_gen.world.registry import generator
    from tests.toyspec import WORLD_FILE, write_project

    @generator("test_slow")
    def slow(ctx, table):
        print("building", flush=True)
        time.sleep(600)
        yield ("x", 1)

    slow_tables = [
        {{"name": name, "description": "Slow.", "generator": "test_slow",
          "columns": [{{"name": "code"}}, {{"name": "price", "type": "integer"}}]}}
        for name in ("slow_a", "slow_b")
    ]
    world = {{**WORLD_FILE, "tables": [*WORLD_FILE["tables"], *slow_tables]}}
    project = load_project(write_project(Path({project!r}), world=world))
    with locked(Path({run!r})):
        ensure_world(project.world)
    """
)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="builders are forked on Linux")
def test_killing_an_eval_during_the_world_build_leaves_nothing_that_blocks(tmp_path: Path) -> None:
    cache, run = tmp_path / "cache", tmp_path / "run"
    script = tmp_path / "eval.py"
    script.write_text(EVAL_DURING_A_BUILD.format(root=str(ROOT), project=str(tmp_path / "p"), run=str(run)))
    env = {**os.environ, "KOPA_GEN_CACHE": str(cache), "KOPA_GEN_WORLD_WORKERS": "2"}
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "building", "a builder started a slow table"
        deadline = time.monotonic() + 30
        while len(builders := children(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(builders) >= 2, builders
        partial = sorted(p.name for p in cache.iterdir() if str(proc.pid) in p.name)
        assert any(name.endswith(f".tmp{proc.pid}") for name in partial), partial
        assert any(name.startswith(f"kopa-world-{proc.pid}-") for name in partial), partial
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(alive(b) and not _zombie(b) for b in builders) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [b for b in builders if alive(b) and not _zombie(b)], "every builder died with the eval"

    with locked(run):  # resume works at once: no builder holds the folder's lock
        pass
    removed = sweep(cache)
    assert sorted(p.name for p in removed) == partial
    assert not [p for p in cache.iterdir() if str(proc.pid) in p.name]


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def test_a_live_builds_partial_files_are_kept(tmp_path: Path) -> None:
    mine = tmp_path / f"world-0-abc.tmp{os.getpid()}"
    mine.write_bytes(b"partial")
    (tmp_path / f"kopa-world-{os.getpid()}-x").mkdir()
    assert sweep(tmp_path) == []
    assert mine.exists()


def test_the_files_of_a_world_no_longer_cached_are_removed(tmp_path: Path) -> None:
    """Each world keeps its bulk downloads and lazy tables in files/<world>; they go with the world."""
    (tmp_path / "world-1-here.sqlite").write_bytes(b"")
    for name in ("world-1-here", "world-1-gone"):
        (tmp_path / "files" / name).mkdir(parents=True)
        (tmp_path / "files" / name / "lazy-0.sqlite").write_bytes(b"rows")
    assert sweep(tmp_path) == [tmp_path / "files" / "world-1-gone"]
    assert [p.name for p in (tmp_path / "files").iterdir()] == ["world-1-here"]


def test_workers_build_only_the_world_the_episodes_use(
    project: Project, world: BuiltWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = EvalConfig(policy="oracle", out=tmp_path, rollouts=1, tasks=["fin-003"], seeds=[3, 5])
    asyncio.run(run_eval(project, config))  # every episode done: the resume below runs none
    built: list[Any] = []
    real = runner.ensure_world

    def recorded(spec: Any, seed: int | None = None, *args: Any) -> BuiltWorld:
        built.append(seed if seed is not None else spec.seed)
        return real(spec, seed, *args)

    monkeypatch.setattr(runner, "ensure_world", recorded)
    records = asyncio.run(run_eval(project, EvalConfig(**{**config.__dict__, "spread": Spread(workers=2)})))
    assert len(records) == 2
    assert built == [project.world.seed], "the world seed's world only, not one per sandbox seed"
