"""Sandbox work off verl's event loop. The sandbox answers a call with synchronous SQLite work (≈100 ms for a large
page), and verl runs every trajectory of an AgentLoopWorker on one event loop: inline, one tool call stalls every
other trajectory's generation. Each trajectory's Session instead lives on one of a few background threads, each
with its own event loop (the Session's async clients stay on the loop that opened them); the agent loop awaits
its work from verl's loop without blocking it.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class SandboxThreads:
    """`size` daemon threads, each running an event loop; trajectories are spread over them round-robin."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"SandboxThreads needs at least one thread, got {size}")
        self.loops: list[asyncio.AbstractEventLoop] = []
        for i in range(size):
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name=f"kopa-sandbox-{i}", daemon=True)
            thread.start()
            self.loops.append(loop)
        self._next = itertools.cycle(range(size))
        self._lock = threading.Lock()

    def pick(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            return self.loops[next(self._next)]


_POOLS: dict[int, SandboxThreads] = {}
_POOLS_LOCK = threading.Lock()


def pool(size: int) -> SandboxThreads:
    """The process's pool of `size` threads (one per AgentLoopWorker process and size)."""
    with _POOLS_LOCK:
        if size not in _POOLS:
            _POOLS[size] = SandboxThreads(size)
        return _POOLS[size]


async def run_on(loop: asyncio.AbstractEventLoop | None, coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on `loop` (None: here, inline)."""
    if loop is None:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


async def call_on(
    loop: asyncio.AbstractEventLoop | None, fn: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """Run the synchronous `fn` on `loop`'s thread (None: here, inline)."""

    async def sync() -> T:
        return fn(*args, **kwargs)

    return await run_on(loop, sync())
