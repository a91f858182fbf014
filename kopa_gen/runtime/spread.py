"""Where episodes and probes run: in this process (default), in worker processes on this machine
(`--workers N`), or on a Ray cluster (`--ray [ADDRESS]`; verl already brings Ray).

A job is a module-level coroutine function `fn(project, *args)` and its arguments. Workers load the project
themselves from its root (and task set) and run their batch with the caller's concurrency; results come back as
batches finish, so a run still writes each record as soon as it has it. The same job gives the same result
wherever it runs: a sandbox is made per episode from the seeded world, which is built once, before any worker
starts, into the shared cache."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import multiprocessing
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kopa_gen.project import Project, load_project

Job = Callable[..., Awaitable[Any]]
ENV_PASSED = ("KOPA_GEN_CACHE", "KOPA_GEN_ROOT")
"""Environment the Ray workers get from the driver: where the world and the project are (never a key)."""


@dataclass(frozen=True)
class Origin:
    """How a worker loads the caller's project: its root and, for a synthesized set, the task-set folder."""

    root: Path
    task_set: Path | None = None

    @classmethod
    def of(cls, project: Project) -> Origin:
        return cls(project.root.resolve(), project.fixtures.parent.resolve() if project.fixtures else None)


@dataclass(frozen=True)
class Spread:
    """`workers` > 1: that many processes here; `ray`: a Ray cluster ('' = ray.init()'s own choice: the
    cluster in $RAY_ADDRESS or a new local one)."""

    workers: int = 1
    ray: str | None = None

    @property
    def in_process(self) -> bool:
        return self.ray is None and self.workers <= 1


async def run_jobs(
    project: Project, spread: Spread, fn: Job, jobs: Sequence[tuple[Any, ...]], concurrency: int
) -> AsyncIterator[tuple[int, Any]]:
    """(index, result) of every job, as each finishes: `fn(project, *jobs[index])`, at most `concurrency` at
    once per process."""
    if spread.in_process:
        gate = asyncio.Semaphore(concurrency)

        async def one(index: int, args: tuple[Any, ...]) -> tuple[int, Any]:
            async with gate:
                return index, await fn(project, *args)

        for done in asyncio.as_completed([one(i, a) for i, a in enumerate(jobs)]):
            yield await done
        return
    origin = Origin.of(project)
    indexed = list(enumerate(jobs))
    size = batch_size(len(indexed), spread.workers, concurrency)
    batches = [indexed[i : i + size] for i in range(0, len(indexed), size)]
    if spread.ray is not None:
        runner = _ray_runner(spread.ray)
        futures = [asyncio.wrap_future(runner(origin, fn, b, concurrency)) for b in batches]
        for finished in asyncio.as_completed(futures):
            for pair in await finished:
                yield pair
        return
    loop = asyncio.get_running_loop()
    with concurrent.futures.ProcessPoolExecutor(
        spread.workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_adopt,
        initargs=(origin, project),
    ) as pool:
        waiting = [loop.run_in_executor(pool, run_batch, origin, fn, b, concurrency) for b in batches]
        for finished in asyncio.as_completed(waiting):
            for pair in await finished:
                yield pair


def unreachable(address: str, timeout_s: float = 5.0) -> str | None:
    """Why no Ray cluster can answer at `address` (HOST:PORT, optionally ray://), or None when its port takes a
    connection: Ray itself would retry an address with nothing behind it for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return f"{address!r} is not HOST:PORT (e.g. 10.0.0.1:6379, the address `ray start --head` prints)"
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        return (
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with `ray start --head`"
        )
    return None


def batch_size(jobs: int, workers: int, concurrency: int) -> int:
    """Jobs sent to a worker at once: enough to keep its `concurrency` busy, small enough that every worker
    gets several batches (an even finish) and records reach the run file steadily."""
    return max(1, min(4 * concurrency, -(-jobs // (4 * max(1, workers)))))


_ADOPTED: dict[Origin, Project] = {}


def _adopt(origin: Origin, project: Project) -> None:
    """A local worker starts with the caller's project, pickled (4 MB, 0.2 s to read back; loading it from the
    specs takes 2.8 s)."""
    _ADOPTED[origin] = project


@functools.cache
def _project(origin: Origin) -> Project:
    if origin in _ADOPTED:
        return _ADOPTED[origin]
    project = load_project(origin.root)
    return project.with_task_set(origin.task_set) if origin.task_set else project


def run_batch(
    origin: Origin, fn: Job, batch: Sequence[tuple[int, tuple[Any, ...]]], concurrency: int
) -> list[tuple[int, Any]]:
    """In a worker: the batch's jobs on the project loaded once per process."""
    project = _project(origin)

    async def main() -> list[tuple[int, Any]]:
        gate = asyncio.Semaphore(concurrency)

        async def one(index: int, args: tuple[Any, ...]) -> tuple[int, Any]:
            async with gate:
                return index, await fn(project, *args)

        return list(await asyncio.gather(*(one(i, a) for i, a in batch)))

    return asyncio.run(main())


Runner = Callable[
    [Origin, Job, Sequence[tuple[int, tuple[Any, ...]]], int],
    "concurrent.futures.Future[list[tuple[int, Any]]]",
]


def _ray_runner(address: str) -> Runner:
    """Submit a batch as one Ray task (one CPU); connects to the cluster on first use."""
    import ray

    if not ray.is_initialized():
        env = {name: os.environ[name] for name in ENV_PASSED if os.environ.get(name)}
        if address or os.environ.get("RAY_ADDRESS"):  # a running cluster: only what a driver may set
            ray.init(address=address or None, runtime_env={"env_vars": env}, log_to_driver=False)
        else:
            ray.init(runtime_env={"env_vars": env}, log_to_driver=False, include_dashboard=False)
    remote = ray.remote(num_cpus=1, max_retries=0)(run_batch)

    def submit(
        origin: Origin, fn: Job, batch: Sequence[tuple[int, tuple[Any, ...]]], concurrency: int
    ) -> concurrent.futures.Future[list[tuple[int, Any]]]:
        future: concurrent.futures.Future[list[tuple[int, Any]]] = remote.remote(
            origin, fn, list(batch), concurrency
        ).future()
        return future

    return submit
