"""Build a world's stale tables in worker processes, each job into its own scratch SQLite file, and copy the
rows into the world as each job returns.

A job is one table, or every stale table sharing one in-memory simulation (`@generator(..., shares=...)`), in
spec order. A worker reads the tables its generator needs from the world file being built (opened read-only;
the world is in WAL mode while building, so the copier never waits for a reader). Which tables a generator reads
is not declared: a job reading a stale table the world does not have yet is stopped by SQLite's authorizer at
that read and queued again behind it (the spec order is a valid order, so every job runs once the tables before
it are in). The rows, their rowids and every derived column equal the one-process build's; only the pages of
the file are laid out in the order the jobs finished."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.world import Table, WorldSpec
from kopa_gen.processes import die_with_parent
from kopa_gen.world.fill import fill_table
from kopa_gen.world.registry import SHARES

WORKERS_ENV = "KOPA_GEN_WORLD_WORKERS"
SCRATCH_PREFIX = "kopa-world-"


class WorkersError(UserError, ValueError):
    """`$KOPA_GEN_WORLD_WORKERS` is not a process count (the CLI prints it as one line)."""


def world_workers() -> int:
    """Processes a world build may use: `$KOPA_GEN_WORLD_WORKERS`, else the CPUs this process may run on (at
    most 8); 1 inside a daemonic process, which may not start children, and in a process running other threads
    (a Ray or verl worker, a server), which it is not safe to fork."""
    env = os.environ.get(WORKERS_ENV, "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise WorkersError(f"${WORKERS_ENV}={env!r}: give a whole number of processes, e.g. 2") from None
        if n < 1:
            raise WorkersError(f"${WORKERS_ENV}={env!r}: give at least 1 (1 builds in this process)")
        return n
    if multiprocessing.current_process().daemon or threading.active_count() > 1:
        return 1
    return max(
        1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    )


@dataclass(frozen=True)
class Job:
    tables: tuple[str, ...]  # in spec order


@dataclass
class Done:
    """What a job made: its scratch file, and per table the tables it read and its seconds."""

    part: str
    reads: dict[str, set[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class Retries:
    """Jobs stopped at a read of a table the world did not have yet, and the seconds they had run."""

    count: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        return f"{self.count} jobs run again, {self.seconds:.1f} s lost"


@dataclass(frozen=True)
class NotReady:
    """The job read `table` before the world had it; run it again once it has."""

    table: str
    seconds: float


def jobs_of(spec: WorldSpec, stale: set[str]) -> list[Job]:
    """One job per stale table, one per shared simulation (its stale tables together), in spec order."""
    groups: dict[str, list[str]] = {}
    jobs: list[list[str]] = []
    for t in spec.tables:
        if t.name not in stale:
            continue
        state = SHARES.get(t.generator or "")
        if state is None:
            jobs.append([t.name])
        elif state in groups:
            groups[state].append(t.name)
        else:
            groups[state] = [t.name]
            jobs.append(groups[state])
    return [Job(tuple(names)) for names in jobs]


# --- worker side -------------------------------------------------------------------------------------------

_SPEC: WorldSpec | None = None
_TABLES: dict[str, Table] = {}
_SEED = 0
_WORLD = ""
_SCRATCH = ""


def _start(spec: WorldSpec, seed: int, world: str, scratch: str, parent: int) -> None:
    global _SPEC, _SEED, _WORLD, _SCRATCH
    die_with_parent(parent)  # a killed build leaves no worker writing on, or holding what it inherited
    _SPEC, _SEED, _WORLD, _SCRATCH = spec, seed, world, scratch
    _TABLES.update((t.name, t) for t in spec.tables)
    from kopa_gen.world.registry import generators

    generators()  # import every generator module once per worker, not in the first job's time


def _run(job: Job, attempt: int, ready: frozenset[str], pending: frozenset[str]) -> Done | NotReady:
    """Fill the job's tables into a fresh scratch file, reading the rest from the world. `pending`: stale tables
    the world does not have yet; `ready`: those of them it has now."""
    from kopa_gen.world.registry import GenContext, generators

    assert _SPEC is not None, "worker started without a spec"
    part = os.path.join(_SCRATCH, f"{job.tables[0]}-{attempt}.sqlite")
    db = sqlite3.connect(Path(part).as_uri(), uri=True)  # a URI connection attaches the world by URI
    start = time.perf_counter()
    try:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("PRAGMA temp_store=MEMORY")
        db.execute("ATTACH ? AS world", (Path(_WORLD).as_uri() + "?mode=ro",))
        ctx = GenContext(seed=_SEED, today=_SPEC.today, db=db)
        missing: list[str] = []

        def gate(table: str, schema: str | None) -> bool:
            """May the job read `table` here? Not a stale table the world has not got yet (the job's own
            tables, made before in this job, are read from the scratch file: schema "main")."""
            if schema == "world" and table in pending and table not in ready:
                missing.append(table)
                return False
            return True

        done = Done(part)
        for name in job.tables:
            table_start = time.perf_counter()
            try:
                done.reads[name] = fill_table(db, ctx, _TABLES[name], generators(), gate)
            except Exception:
                if missing:  # the read the gate refused failed the statement
                    return NotReady(missing[0], time.perf_counter() - start)
                raise
            db.commit()
            done.seconds[name] = time.perf_counter() - table_start
        return done
    finally:
        db.close()


# --- builder side ------------------------------------------------------------------------------------------


class Builders:
    """`workers` processes building one world at `path`. Start them before opening the world: on Linux they are
    forked (no re-import, nothing pickled, no main module run again), and a forked process must not inherit an
    open SQLite connection to a file it opens itself."""

    def __init__(self, spec: WorldSpec, seed: int, path: Path, workers: int) -> None:
        from kopa_gen.world.registry import generators

        generators()  # imported once here, not again in every process
        self.spec = spec
        self.workers = workers
        # named after this process, so the next build can tell a dead build's scratch from a running one's
        self.scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=path.parent)
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn"),
            initializer=_start,
            initargs=(spec, seed, str(path), self.scratch, os.getpid()),
        )
        self.pool.submit(int).result()  # every process starts now, before the caller connects to the world

    def __enter__(self) -> Builders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def build(
        self, stale: set[str], merge: Callable[[Table, str, set[str], float], None]
    ) -> tuple[Retries, list[str]]:
        """Run the stale tables' jobs; `merge(table, part, reads, seconds)` copies each table into the world as
        its job returns. Returns the jobs that ran again because they read a table too early, and the tables left
        for the caller to build in one process, in spec order: those of jobs waiting for each other (tables
        sharing a simulation that read a table reading one of them), which only the spec order can build."""
        jobs = jobs_of(self.spec, stale)
        by_name = {t.name: t for t in self.spec.tables}
        position = {j: i for i, j in enumerate(jobs)}  # spec order: the tables most others read come first
        ready: set[str] = set()
        waiting: dict[Job, str] = {}  # job -> the table it stopped at
        queue = list(jobs)
        running: dict[concurrent.futures.Future[Done | NotReady], Job] = {}
        attempts: dict[Job, int] = {}
        retries = Retries()
        while queue or running:
            startable = [j for j in queue if waiting.get(j, "") in ("", *ready)]
            for job in startable[: self.workers - len(running)]:
                queue.remove(job)
                waiting.pop(job, None)
                attempts[job] = attempts.get(job, 0) + 1
                future = self.pool.submit(_run, job, attempts[job], frozenset(ready), frozenset(stale))
                running[future] = job
            if not running:
                left = {name for job in queue for name in job.tables}
                return retries, [t.name for t in self.spec.tables if t.name in left]
            finished, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: position[running[f]]):
                job = running.pop(future)
                result = future.result()
                if isinstance(result, NotReady):
                    retries.count += 1
                    retries.seconds += result.seconds
                    waiting[job] = result.table
                    queue.append(job)
                    queue.sort(key=position.__getitem__)
                    continue
                for name in job.tables:
                    merge(by_name[name], result.part, result.reads[name], result.seconds[name])
                    ready.add(name)
                os.unlink(result.part)
        return retries, []
