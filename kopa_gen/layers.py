"""The floors of kopa_gen, lowest first: a package may import its own floor and the ones below, never one above.
`tests/test_layers.py` holds the code to it, over an import graph drawn from the code itself (every `import`,
function-local ones included), and asserts there is no circle between modules either.

    language    the spec language: pydantic models of every spec kind, answers and units, the path syntax,
                diagnostics, YAML sources (no I/O beyond reading specs)
    world       the seeded world: declarations, generators, the SQLite build
    envelopes   one module per envelope family: render (sandbox) and parse (client)
    project     a loaded project (specs + world spec), plug-in names checked where it is assembled
    sandbox     the generic ASGI emulator
    client      the one httpx platform client
    compose     the composition root: a client wired to the emulator in process, or to the live service
    mcp         tool bindings and the MCP server runtime
    runtime     Session (its tool boxes built on compose), the path evaluator, the gold-chain walker
    policies    what acts in a session
    gold        gold execution: a task's chain run in the sandbox, its evidence and statistics
    compile     kopa-gen build: generated code, fixtures, lint
    evaluate    scoring, runs, reports
    edge        EDGE synthesis
    train       verl export, agent loop, reward
    top         the command line, the demo, the scaffold
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

FLOORS: dict[str, int] = {
    "layers": 0,
    "plugins": 1,  # the registry helper; its errors are the language's user errors
    "cache": 0,
    "heap": 0,  # the garbage collector paused around a large tree (a project load, a bulk file)
    "roots": 0,  # where the project is, found without loading it (the MCP server starts from it)
    "processes": 0,  # what the world build and the run folder's lock need from the operating system
    "__init__": 0,
    "language": 1,
    "world": 2,
    "envelopes": 3,
    "project": 4,
    "sandbox": 5,
    "client": 6,
    "compose": 7,
    "mcp": 8,
    "runtime": 9,
    "policies": 10,
    "gold": 11,
    "compile": 12,
    "evaluate": 13,
    "edge": 14,
    "train": 15,
    "scaffold": 16,
    "demo": 16,
    "cli": 16,
    "__main__": 17,
}
"""Each package (or top-level module) of kopa_gen and its floor."""


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _discovered(node: ast.AST, own: str) -> str | None:
    """The package a `Registry(kind, "pkg")` or `import_all("pkg")` call imports whole at run time."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
    if func not in ("Registry", "import_all"):
        return None
    args = [*node.args[1:2]] if func == "Registry" else [*node.args[:1]]
    args += [k.value for k in node.keywords if k.arg == "package"]
    for arg in args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ast.Name) and arg.id == "__name__":
            return own
    return None


def import_graph(root: Path, plugins: bool = False) -> dict[str, set[str]]:
    """Module -> the kopa_gen modules it imports (relative imports resolved; `from pkg import name` counts as an
    import of pkg.name when that is a module, else of pkg). With `plugins`, a registry that imports a plug-in
    package whole at run time (kopa_gen.plugins) imports each of its modules too: what the code loads, not only
    what it names (a registry and its plug-ins form a circle by design, so the layering test draws it without)."""
    modules = {_module_name(root, p): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    found.add(candidate if candidate in modules else base)
            elif plugins and (package_name := _discovered(node, name)) is not None:
                found |= {m for m in modules if m.startswith(package_name + ".")}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def floor_of(module: str) -> int:
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    return FLOORS.get(key, 99)


def upward(graph: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """Every import from a module to one on a higher floor."""
    return sorted((a, b) for a, targets in graph.items() for b in targets if floor_of(b) > floor_of(a))


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The circles between modules (one cycle per strongly connected component of two or more modules)."""
    import networkx as nx

    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_edges_from((a, b) for a, targets in graph.items() for b in targets)
    out = []
    for component in nx.strongly_connected_components(g):
        if len(component) > 1:
            out.append(sorted(component))
    return sorted(out)
