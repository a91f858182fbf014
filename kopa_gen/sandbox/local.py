"""Opening the sandbox in-process: world built on first use, one shared read-only store per process."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

from kopa_gen.cache import cache_dir
from kopa_gen.language.diagnostics import InfrastructureError
from kopa_gen.project import Project
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.store import WorldStore
from kopa_gen.world.build import ensure_world
from kopa_gen.world.lazy import open_world


@functools.cache
def _store(path: Path) -> WorldStore:
    # one connection per thread: a server that runs queries in a thread pool runs them side by side
    return WorldStore(
        open_world(path),
        opener=functools.partial(open_world, path),
        files_dir=path.parent / "files" / path.stem,  # bulk downloads built over this world
    )


def open_sandbox(project: Project, config: SandboxConfig | None = None, seed: int | None = None) -> Sandbox:
    """A fresh sandbox (own counters and fault stream) over the shared world of this seed. InfrastructureError
    when the world cannot be built or opened (a full disk, a damaged file)."""
    try:
        world = ensure_world(project.world, seed)
        store = _store(world.path)
    except (sqlite3.Error, OSError) as exc:
        raise InfrastructureError(
            f"the sandbox's world cannot be opened ({type(exc).__name__}: {exc}); if a file in {cache_dir()} is "
            "damaged, delete it: the next run builds it again"
        ) from exc
    return Sandbox(project.platforms, store, config, episode=project.world.episode)
