"""World builds on several processes: the same rows as one process, whatever order the jobs finish in; a job that
reads a table too early runs again; jobs that wait for each other are built in this process; a broken table names
itself; the worker count comes from the environment with a clear error."""

from __future__ import annotations

import copy
import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.language.world import Table
from kopa_gen.project import Project, load_project
from kopa_gen.world.build import build_into
from kopa_gen.world.parallel import WORKERS_ENV, WorkersError, world_workers
from kopa_gen.world.registry import GenContext, Row, generator, generators
from tests.test_world import content, small
from tests.toyspec import WORLD_FILE, write_project

if "test_loop_first" not in generators():

    @generator("test_broken")
    def _broken(ctx: GenContext, table: Table) -> Iterable[Row]:
        raise ValueError("the generator broke")

    @generator("test_loop_first", shares="test_loop")
    def _first(ctx: GenContext, table: Table) -> Iterable[Row]:
        """Shares a simulation with test_loop_last; reads the toy fruit."""
        for code, price in ctx.rows("SELECT code, price FROM fruit ORDER BY code"):
            yield (code, price + 1)

    @generator("test_loop_last", shares="test_loop")
    def _last(ctx: GenContext, table: Table) -> Iterable[Row]:
        """Reads `middle`, which reads `first`: the shared job waits for a table waiting for it."""
        for code, price in ctx.rows("SELECT code, price FROM middle ORDER BY code"):
            yield (code, price * 10)

    @generator("test_middle")
    def _middle(ctx: GenContext, table: Table) -> Iterable[Row]:
        for code, price in ctx.rows("SELECT code, price FROM first ORDER BY code"):
            yield (code, price * 2)


def priced(name: str, gen: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"Prices by {gen}.",
        "generator": gen,
        "columns": [{"name": "code"}, {"name": "price", "type": "integer"}],
    }


def test_two_processes_make_the_rows_one_process_makes(project: Project, tmp_path: Path) -> None:
    """Regions, 3,000 companies and their financials: financials reads companies, companies reads regions, so
    jobs start before the tables they read exist and run again after them."""
    spec = small(project)
    build_into(spec, 11, tmp_path / "one.sqlite")  # type: ignore[arg-type]
    lines: list[str] = []
    build_into(spec, 11, tmp_path / "two.sqlite", lines.append, workers=2)  # type: ignore[arg-type]
    assert content(tmp_path / "two.sqlite") == content(tmp_path / "one.sqlite")
    summary = lines[-1]  # companies was sent off with regions, and read regions before the world had it
    assert summary.startswith(f"  world: {len(spec.tables)} tables on 2 processes (")  # type: ignore[attr-defined]
    assert int(summary.split("(")[1].split()[0]) >= 1 and "jobs run again" in summary, summary
    assert not list(tmp_path.glob("kopa-world-*")), "the scratch folder is removed"
    assert not list(tmp_path.glob("*-wal")), "the world is one file again"
    db = sqlite3.connect(tmp_path / "two.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert indexes == {
        r[0]
        for r in sqlite3.connect(tmp_path / "one.sqlite").execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'"
        )
    }


def test_jobs_waiting_for_each_other_are_built_here_in_spec_order(tmp_path: Path) -> None:
    """`first` and `last` share a simulation (one job) but `last` reads `middle`, which reads `first`: no order
    of jobs builds that, the spec order does."""
    spec = copy.deepcopy(WORLD_FILE)
    spec["tables"] += [
        priced("first", "test_loop_first"),
        priced("middle", "test_middle"),
        priced("last", "test_loop_last"),
    ]
    write_project(tmp_path / "p", world=spec)
    world = load_project(tmp_path / "p").world
    build_into(world, 3, tmp_path / "one.sqlite")
    lines: list[str] = []
    build_into(world, 3, tmp_path / "two.sqlite", lines.append, workers=2)
    assert content(tmp_path / "two.sqlite") == content(tmp_path / "one.sqlite")
    last = sqlite3.connect(tmp_path / "two.sqlite").execute("SELECT price FROM last ORDER BY code").fetchall()
    first = (
        sqlite3.connect(tmp_path / "two.sqlite").execute("SELECT price FROM first ORDER BY code").fetchall()
    )
    assert last and [p for (p,) in last] == [p * 20 for (p,) in first]
    assert "first, middle, last in this one (their jobs waited for each other)" in lines[-1]


def test_a_broken_table_names_itself(tmp_path: Path) -> None:
    spec = copy.deepcopy(WORLD_FILE)
    spec["tables"] += [priced("first", "test_loop_first"), priced("broken", "test_broken")]
    write_project(tmp_path / "p", world=spec)
    world = load_project(tmp_path / "p").world
    with pytest.raises(ValueError, match="the generator broke") as info:
        build_into(world, 3, tmp_path / "two.sqlite", workers=2)
    assert "while building world table 'broken'" in "".join(getattr(info.value, "__notes__", []))
    assert not list(tmp_path.glob("kopa-world-*"))


@pytest.mark.parametrize(
    ("value", "message"),
    [("two", "give a whole number of processes"), ("0", "give at least 1"), ("-3", "give at least 1")],
)
def test_a_bad_worker_count_is_refused(monkeypatch: pytest.MonkeyPatch, value: str, message: str) -> None:
    monkeypatch.setenv(WORKERS_ENV, value)
    with pytest.raises(WorkersError, match=message) as info:
        world_workers()
    assert WORKERS_ENV in str(info.value)


def test_the_worker_count_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV, " 3 ")
    assert world_workers() == 3
    monkeypatch.delenv(WORKERS_ENV)
    assert 1 <= world_workers() <= 8


def test_a_process_running_other_threads_builds_in_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forking a process with other threads running is unsafe (a lock held by one of them stays held). The thread
    count is set here: earlier tests in this process may have left pool threads running."""
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert world_workers() == 4
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert world_workers() == 1


def test_two_processes_asking_for_one_world_build_it_once(tmp_path: Path) -> None:
    """Two commands (or two test workers) asking for the same unbuilt world at once: one builds it, the other waits
    and takes it, so the same cores never build it twice side by side. Both start while the seed's lock is held
    here: neither may build until it is let go."""
    import fcntl
    import subprocess
    import sys
    import time

    root = write_project(tmp_path / "project")
    cache = tmp_path / "cache"
    cache.mkdir()
    script = (
        "import sys; from pathlib import Path; from kopa_gen.project import load_project;"
        "from kopa_gen.world.build import ensure_world;"
        "w = ensure_world(load_project(Path(sys.argv[1])).world); print(w.fresh, w.path)"
    )
    env = {**os.environ, "KOPA_GEN_CACHE": str(cache)}
    seed = load_project(root).world.seed
    with open(cache / f"world-{seed}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", script, str(root)], env=env, stdout=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        time.sleep(3)
        assert [p.poll() for p in procs] == [None, None], "a build started while the lock was held"
    said = sorted(p.communicate(timeout=300)[0].split() for p in procs)
    assert [s[0] for s in said] == ["False", "True"]  # one built it, the other found it built
    assert said[0][1] == said[1][1]
    assert [p.name for p in cache.glob("world-*.sqlite")] == [Path(said[0][1]).name]
