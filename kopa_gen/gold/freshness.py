"""When a fixture is fresh: its input is the task file, the world, the platform specs and the source of every
module the gold run imports (the import closure of kopa_gen.gold.run, drawn from the code by
kopa_gen.layers.import_graph, plug-in packages a registry loads included), so that a change to the sandbox, an envelope or the client reruns the gold chains
instead of a hand-kept list of files deciding."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from kopa_gen.layers import import_graph
from kopa_gen.project import Project
from kopa_gen.world.build import world_hash

PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def gold_code(root: Path = PACKAGE, start: str = "kopa_gen.gold.run") -> tuple[Path, ...]:
    """The source files of `start` and of every kopa_gen module it imports, directly or not."""
    graph = import_graph(root, plugins=True)
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in graph:
            continue
        seen.add(name)
        todo.extend(graph[name])
    files = []
    for name in sorted(seen):
        rel = Path(*name.split(".")[1:])
        path = root / rel / "__init__.py" if (root / rel).is_dir() else root / rel.with_suffix(".py")
        files.append(path)
    return tuple(files)


@functools.cache
def _code_digest() -> str:
    h = hashlib.sha256()
    for path in gold_code():
        h.update(path.relative_to(PACKAGE).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def fixture_input(project: Project, file: str, seed: int) -> str:
    """The digest a fixture was made from: another digest means its gold chain runs again."""
    h = hashlib.sha256((project.root / file).read_bytes())
    h.update(world_hash(project.world, seed).encode())
    h.update(_code_digest().encode())
    for p in sorted(project.platforms, key=lambda x: x.id):
        h.update(p.sha256.encode())
    return h.hexdigest()
