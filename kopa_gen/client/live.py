"""Live mode: the same client, pointed at the real service with the user's own key from the environment."""

from __future__ import annotations

import os

from kopa_gen.client.client import PlatformClient
from kopa_gen.spec.platform import Platform


class MissingKeyError(Exception):
    """The user asked for live mode without the key in the environment."""


def live_client(platform: Platform) -> PlatformClient:
    env = platform.kopa.auth.env
    key = os.environ.get(env)
    if not key and not platform.kopa.auth.optional:
        raise MissingKeyError(
            f"live mode for {platform.id} needs your API key in ${env} (issued by the platform); it is never logged"
        )
    return PlatformClient(platform, key=key or None)
