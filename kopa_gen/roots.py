"""Where the project is, found without loading it (the MCP server and `kopa-gen call` start from here)."""

from __future__ import annotations

import os
from pathlib import Path


def find_root(start: Path | None = None) -> Path:
    """`$KOPA_GEN_ROOT`, else the nearest folder above the working directory holding specs/platforms, else the
    checkout this package was installed from."""
    env = os.environ.get("KOPA_GEN_ROOT")
    if env:
        return Path(env)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "specs" / "platforms").is_dir():
            return folder
    return Path(__file__).resolve().parent.parent
