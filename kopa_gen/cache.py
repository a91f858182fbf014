"""Where kopa-gen keeps what it can rebuild: world databases and spec-validation verdicts."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """`$KOPA_GEN_CACHE`, else `~/.cache/kopa-gen`."""
    env = os.environ.get("KOPA_GEN_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kopa-gen"
