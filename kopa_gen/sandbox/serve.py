"""The app behind `kopa-gen sandbox serve --workers N`: each uvicorn worker process builds its own sandbox from
the settings the parent put in the environment (uvicorn starts workers from an import string, not an object)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from starlette.types import ASGIApp

from kopa_gen.project import load_project
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.sandbox.local import open_sandbox

SETTINGS = "KOPA_GEN_SANDBOX_SERVE"
"""Environment variable holding {"root", "config", "world_seed"} as JSON."""


def settings(root: Path | None, config: SandboxConfig, world_seed: int | None) -> str:
    return json.dumps(
        {
            "root": str(root) if root else None,
            "config": config.model_dump(mode="json"),
            "world_seed": world_seed,
        }
    )


def app() -> ASGIApp:
    """uvicorn's factory: one sandbox per worker process (its own counters, fault stream and connections)."""
    raw = os.environ.get(SETTINGS)
    if raw is None:
        raise SystemExit(f"{SETTINGS} is not set; start workers with `kopa-gen sandbox serve --workers N`")
    given = json.loads(raw)
    project = load_project(Path(given["root"]) if given["root"] else None)
    config = SandboxConfig.model_validate(given["config"])
    return open_sandbox(project, config, given["world_seed"]).app
