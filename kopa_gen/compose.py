"""The composition root of an in-process episode: a platform client wired to the emulator over an in-memory
ASGI transport (no socket), or to the real service with the user's key. The emulator imports no client and the
client knows no emulator; this module, above both, is the one place they meet (`Session.open` builds its tool
boxes on it)."""

from __future__ import annotations

import httpx

from kopa_gen.client.client import PlatformClient, RetryPolicy
from kopa_gen.client.live import live_client
from kopa_gen.envelopes import Wire
from kopa_gen.project import Project
from kopa_gen.sandbox.config import sandbox_key
from kopa_gen.sandbox.emulator import Sandbox
from kopa_gen.sandbox.local import open_sandbox

SANDBOX_HOST = "http://sandbox.kopa"
"""The host every in-process client calls; the transport never resolves it."""


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
        secret=False,
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
