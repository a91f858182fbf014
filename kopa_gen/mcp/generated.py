"""Finding a platform's generated package (generated/servers/<platform>/): the installed `generated` package for
this repository's own project, or, for a project elsewhere (a platform author's folder, a test's inline spec),
the files its own `kopa-gen build` wrote under its root."""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_HOME = Path(__file__).resolve().parents[2]  # the checkout the `generated` package belongs to


def generated_module(platform_id: str, name: str = "server", root: Path | None = None) -> ModuleType:
    """`generated/servers/<platform_id>/<name>.py` of the project at `root` (default: this repository)."""
    if (
        root is not None
        and root.resolve() != _HOME
        and (root / "generated" / "servers" / platform_id).is_dir()
    ):
        return importlib.import_module(f"{_package(root.resolve(), platform_id)}.{name}")
    try:
        return importlib.import_module(f"generated.servers.{platform_id}.{name}")
    except ModuleNotFoundError as exc:
        raise SystemExit(
            f"no generated server for {platform_id!r}; run `kopa-gen build` first ({exc})"
        ) from exc


@functools.cache
def _package(root: Path, platform_id: str) -> str:
    """Import a project's generated platform package under a name of its own (one per root and platform)."""
    folder = root / "generated" / "servers" / platform_id
    name = f"kopa_project_{hashlib.sha256(str(root).encode()).hexdigest()[:12]}_{platform_id}"
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {folder}; run `kopa-gen build` in {root}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return name
