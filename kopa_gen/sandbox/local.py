"""Opening the sandbox in-process: world built on first use, one shared read-only store per process."""

from __future__ import annotations

import functools
from pathlib import Path

import httpx

from kopa_gen.client.client import PlatformClient, RetryPolicy
from kopa_gen.client.live import live_client
from kopa_gen.envelopes import Wire
from kopa_gen.project import Project
from kopa_gen.sandbox.config import SandboxConfig, sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.store import WorldStore
from kopa_gen.world.build import ensure_world, open_world

SANDBOX_HOST = "http://sandbox.kopa"


@functools.cache
def _store(path: Path) -> WorldStore:
    # one connection per thread: a server that runs queries in a thread pool runs them side by side
    return WorldStore(
        open_world(path),
        opener=functools.partial(open_world, path),
        files_dir=path.parent / "files" / path.stem,  # bulk downloads built over this world
    )


def open_sandbox(project: Project, config: SandboxConfig | None = None, seed: int | None = None) -> Sandbox:
    """A fresh sandbox (own counters and fault stream) over the shared world of this seed."""
    world = ensure_world(project.world, seed)
    return Sandbox(project.platforms, _store(world.path), config, episode=project.world.episode)


def sandbox_client(
    sandbox: Sandbox,
    platform_id: str,
    wire: Wire = "json",
    retry: RetryPolicy | None = None,
    timeout_s: float = 30.0,
) -> PlatformClient:
    """The platform client wired to the in-process sandbox (httpx ASGI transport; no socket)."""
    platform = sandbox.platforms[platform_id]
    return PlatformClient(
        platform,
        key=sandbox_key(platform),
        base_url=SANDBOX_HOST + sandbox.prefix(platform),
        transport=httpx.ASGITransport(app=sandbox.app),
        wire=wire,
        retry=retry,
        timeout_s=timeout_s,
    )


def platform_client(
    project: Project,
    platform_id: str,
    live: bool,
    sandbox: Sandbox | None = None,
    retry: RetryPolicy | None = None,
) -> PlatformClient:
    """The client a caller wants: the real service with the user's key in live mode, except for local platforms
    (the workspace), which always live in a sandbox; otherwise the given sandbox, or a fresh one."""
    platform = project.platform(platform_id)
    if live and not platform.kopa.local:
        return live_client(platform)
    return sandbox_client(sandbox or open_sandbox(project), platform_id, retry=retry)
