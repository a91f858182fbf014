"""Finding a platform's generated package (generated/servers/<platform>/)."""

from __future__ import annotations

import importlib
from types import ModuleType


def generated_module(platform_id: str, name: str = "server") -> ModuleType:
    try:
        return importlib.import_module(f"generated.servers.{platform_id}.{name}")
    except ModuleNotFoundError as exc:
        raise SystemExit(
            f"no generated server for {platform_id!r}; run `kopa-gen build` first ({exc})"
        ) from exc
