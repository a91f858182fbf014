"""Live mode: the same client, pointed at the real service with the user's own key from the environment."""

from __future__ import annotations

import os

from kopa_gen.client.client import PlatformClient
from kopa_gen.client.errors import MissingKeyError
from kopa_gen.client.redaction import register
from kopa_gen.language.platform import Platform

__all__ = ["MissingKeyError", "live_client", "require_key"]


def require_key(platform: Platform) -> str | None:
    """The user's key for `platform` from the environment; None where the platform works without one. Raises
    MissingKeyError when a required key is not set."""
    env = platform.kopa.auth.env
    key = os.environ.get(env)
    register(key)  # from now on no output of this process carries it (kopa_gen/client/redaction.py)
    if not key and not platform.kopa.auth.optional:
        raise MissingKeyError(
            f"live mode for {platform.id} needs your API key in ${env} (issued by the platform); it is never logged"
        )
    return key or None


def live_client(platform: Platform) -> PlatformClient:
    return PlatformClient(platform, key=require_key(platform))
