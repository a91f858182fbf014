"""The project as data: every platform spec and the world spec, loaded and cross-checked together."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from kopa_gen.cache import cache_dir
from kopa_gen.envelopes import family, family_names
from kopa_gen.heap import collection_paused
from kopa_gen.language.diagnostics import Diagnostic, Diagnostics, Level, NotFound, SpecError
from kopa_gen.language.domains import FILE as DOMAINS_FILE
from kopa_gen.language.domains import load_domains, load_held_out
from kopa_gen.language.meaning import Kinds, Meaning, load_kinds, load_meaning
from kopa_gen.language.nested import check_world
from kopa_gen.language.platform import Platform, load_platform, tool_params
from kopa_gen.language.task import Task, load_tasks
from kopa_gen.language.world import WorldSpec, load_world
from kopa_gen.roots import find_root
from kopa_gen.world.build import columns_of
from kopa_gen.world.registry import generators
from kopa_gen.world.synth import synthesize


@dataclass(frozen=True)
class Project:
    root: Path
    platforms: tuple[Platform, ...]
    world: WorldSpec
    warnings: tuple[Diagnostic, ...] = ()
    tasks: tuple[tuple[str, Task], ...] = ()
    fixtures: Path | None = None  # where gold fixtures live (default generated/fixtures)
    kinds: Kinds | None = None  # specs/kinds.yaml: the kinds of values that cross between tools
    meanings: tuple[tuple[str, Meaning], ...] = ()  # (platform id, specs/platforms/<id>/meaning.yaml)
    held_out: tuple[
        str, ...
    ] = ()  # specs/domains.yaml `held_out`: platforms withheld from synthesis and training

    def held_out_tasks(self) -> list[Task]:
        """The benchmark's held-out split: its tasks that use a held-out platform (gold or exposed tools)."""
        return [t for _, t in self.tasks if self.touches_held_out(t)]

    def touches_held_out(self, task: Task) -> bool:
        tools = {c.tool for c in task.calls()} | set(task.tools or [])
        return any(self.platform_of(tool).id in self.held_out for tool in tools)

    @property
    def fixtures_dir(self) -> Path:
        return self.fixtures or self.root / "generated" / "fixtures"

    def with_task_set(self, folder: Path) -> Project:
        """The project with another task set in place of the benchmark: `folder`/tasks/<domain>/<id>.yaml and
        their gold fixtures in `folder`/fixtures (what `kopa-gen edge synth` writes)."""
        tools = {op.tool for p in self.platforms for op in p.operations}
        domains, _ = load_domains(self.root)
        tasks, diags = load_tasks(self.root, tools, folder / "tasks", domains)
        errors = [d for d in diags if d.level == Level.ERROR]
        if errors:
            raise SpecError(errors)
        if not tasks:
            raise NotFound(
                f"no tasks under {folder / 'tasks'}; run `kopa-gen edge synth --out {folder}` first"
            )
        return dataclasses.replace(self, tasks=tuple(tasks), fixtures=folder / "fixtures")

    def task(self, task_id: str) -> Task:
        for _, task in self.tasks:
            if task.id == task_id:
                return task
        raise NotFound(f"no task {task_id!r}")

    @functools.cached_property
    def _tool_platforms(self) -> dict[str, Platform]:
        return {op.tool: p for p in reversed(self.platforms) for op in p.operations}

    def platform_of(self, tool: str) -> Platform:
        try:
            return self._tool_platforms[tool]
        except KeyError:
            raise NotFound(f"no platform has a tool named {tool!r}") from None

    def page_params(self, tool: str) -> tuple[str, str] | None:
        """The (page number, page size) arguments of a tool that pages its rows; None for one that does not."""
        platform = self.platform_of(tool)
        op = platform.operation(tool)
        if op.kopa.shape == "file":
            return None if op.kopa.file is not None and op.kopa.file.per_row else ("page", "page_size")
        paging = platform.kopa.paging
        if paging is not None and platform.paged(op):
            return (paging.page, paging.size)
        return None

    def meaning(self, pid: str) -> Meaning | None:
        """What the platform's fields and parameters mean (None when it has no meaning.yaml)."""
        return dict(self.meanings).get(pid)

    def platform(self, pid: str) -> Platform:
        for p in self.platforms:
            if p.id == pid:
                return p
        known = ", ".join(p.id for p in self.platforms)
        raise NotFound(f"unknown platform {pid!r}; known platforms: {known}")


def envelope_families() -> dict[str, bool]:
    """The envelope families this project knows, each with whether it places echoed fields (what the spec
    language checks a platform's `x-kopa.envelope` and `echo` against)."""
    return {name: family(name).echoes for name in family_names()}


PROJECTS_KEPT = 6  # checked projects kept in the cache (checkouts, `only` subsets, test folders)


def load_project(root: Path | None = None, only: list[str] | None = None) -> Project:
    """Load and check everything; raise one SpecError listing every problem found. A project that loads clean is
    remembered in the cache under the digest of every file it was made from (its specs and this package's code), so
    the next load of the same files reads one pickle (0.1-0.3 s) instead of parsing and checking every spec (5 s)."""
    root = (root or find_root()).resolve()
    key = project_key(root, only)
    path = cache_dir() / "projects" / f"{key}.pickle"
    try:
        with path.open("rb") as f, collection_paused(freeze=True):  # 0.5-0.8 s -> 0.2-0.3 s
            project = pickle.load(f)
        if isinstance(project, Project):
            return project
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError):
        pass  # absent, or written by other code: load it afresh
    project = _load_project(root, only)
    _remember(path, project)
    return project


def project_key(root: Path, only: list[str] | None) -> str:
    """The digest of what a loaded project is made from: the files under `root`/specs (names and bytes), this
    package's own files (the loader, its checks, the generators and families it consults), the folder and `only`."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{root}|{sorted(only) if only else ''}".encode())
    for base in (root / "specs", Path(__file__).resolve().parent):
        for file in sorted(base.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                h.update(file.relative_to(base).as_posix().encode())
                h.update(file.read_bytes())
    return h.hexdigest()


def _remember(path: Path, project: Project) -> None:
    """Write atomically (another process may be reading it), then keep only the newest PROJECTS_KEPT. A cache that
    cannot be written costs only speed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(pickle.dumps(project, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)
        kept = sorted(path.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[PROJECTS_KEPT:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _load_project(root: Path, only: list[str] | None) -> Project:
    diags = Diagnostics()
    domains, domain_diags = load_domains(root)
    diags.extend(domain_diags)
    world, world_diags = load_world(root, generators())
    diags.extend(world_diags)
    families = envelope_families()
    platforms: list[Platform] = []
    broken: list[str] = []
    skipped: list[Diagnostic] = []
    for path in sorted((root / "specs" / "platforms").glob("*/openapi.yaml")):
        if only and path.parent.name not in only:
            continue
        platform, found = load_platform(path, root, families)
        diags.extend(found)
        if platform is not None:
            platforms.append(platform)
        else:
            broken.append(path.parent.name)
    if world is not None:
        platforms, world = synthesize(platforms, world, diags)
        check_bindings(platforms, world, diags)
        check_nested_bindings(platforms, world, diags)
    check_tool_names(platforms, diags)
    if domains:
        for p in platforms:
            if p.kopa.domain is not None and p.kopa.domain not in domains:
                _error(
                    diags,
                    p,
                    ("x-kopa", "domain"),
                    f"unknown domain {p.kopa.domain!r}; declared in specs/domains.yaml: {', '.join(domains)}",
                )
    held_out = load_held_out(root)
    loaded = {p.id for p in platforms}
    for k, pid in enumerate(held_out):
        if pid not in loaded and not only and pid not in broken:
            diags.error(
                str(DOMAINS_FILE),
                f"held_out.platforms.{k}",
                f"unknown platform {pid!r}; known: {', '.join(sorted(loaded))}",
            )
    kinds, kind_diags = load_kinds(root)
    diags.extend(kind_diags)
    # a kinds file that did not load would make every kind named anywhere "unknown": one error is enough
    meanings = load_meanings(root, platforms, kinds, diags) if not kind_diags else []
    tasks: list[tuple[str, Task]] = []
    if broken and not only:
        # Tasks name the broken platforms' tools; checking them now would bury the real problem under an
        # "unknown tool" line for every call.
        if any((root / "specs" / "tasks").glob("*/*.yaml")):
            skipped.append(
                Diagnostic(
                    "specs/tasks",
                    "",
                    f"tasks not checked: platform spec(s) {', '.join(broken)} did not load; fix them first",
                    Level.WARNING,
                )
            )
    elif not only:
        tasks, task_diags = load_tasks(
            root, {op.tool for p in platforms for op in p.operations}, domains=domains
        )
        diags.extend(task_diags)
    if diags.errors or world is None:
        raise SpecError(diags.errors + skipped if diags.errors else diags.items)
    # every check that names a spec line is done: the parsed YAML and its line map go (half of the cached
    # project's bytes, and 0.4 s of every later load)
    return Project(
        root,
        tuple(dataclasses.replace(p, origin=None) for p in platforms),
        world,
        tuple(diags.items),
        tuple(tasks),
        kinds=kinds,
        meanings=tuple(meanings),
        held_out=held_out,
    )


def load_meanings(
    root: Path, platforms: list[Platform], kinds: Kinds | None, diags: Diagnostics
) -> list[tuple[str, Meaning]]:
    """Every loaded platform's meaning.yaml, checked against its tools' parameters and row fields."""
    out: list[tuple[str, Meaning]] = []
    for p in platforms:
        path = root / "specs" / "platforms" / p.id / "meaning.yaml"
        if not path.exists():
            continue
        tools = {  # a tool's arguments as the generated tool exposes them (a bulk file's local filters too)
            op.tool: (
                frozenset(x.name for x in tool_params(p.kopa, op)) | frozenset(op.fixed_query),
                frozenset(op.row_fields),
            )
            for op in p.operations
        }
        meaning, found = load_meaning(path, root, tools, kinds)
        diags.extend(found)
        if meaning is not None:
            out.append((p.id, meaning))
    return out


def _error(diags: Diagnostics, p: Platform, loc: tuple[str | int, ...], message: str) -> None:
    """An error at its place in the platform's spec (file, line, field path)."""
    if p.origin is not None:
        diags.items.append(p.origin.diag(loc, message))
    else:
        diags.error(p.file, ".".join(str(x) for x in loc), message)


def check_bindings(platforms: list[Platform], world: WorldSpec, diags: Diagnostics) -> None:
    """Every x-kopa source table exists in the world and has every column the row schema promises; every world
    file a platform names is one of the world's."""
    columns = columns_of(world)
    episode = {e.name for e in world.episode}
    for p in platforms:
        for i, name in enumerate(p.kopa.world):
            if name not in world.files:
                _error(
                    diags,
                    p,
                    ("x-kopa", "world", i),
                    f"world file {name!r} is not listed in specs/world/world.yaml (files: {', '.join(world.files)})",
                )
        for op in p.operations:
            if op.kopa.source is None:
                continue  # its row schema's hint is broken, and reported
            table = op.source.table
            where = ("paths", op.path, op.method, "x-kopa", "source", "table")
            if table not in columns:
                _error(diags, p, where, f"world has no table or view {table!r}; define it under specs/world/")
                continue
            if op.kopa.write is not None and table not in episode:
                _error(
                    diags,
                    p,
                    where,
                    f"write operation on {table!r}, which is not an episode table of the world",
                )
            src = op.source
            used: list[tuple[tuple[str | int, ...], str]] = [
                (("filters", i, "column"), f.column) for i, f in enumerate(src.filters)
            ]
            used += [(("order", i, "column"), o.column) for i, o in enumerate(src.order)]
            if src.sort is not None:
                used += [
                    (("sort", "orders", value, i, "column"), o.column)
                    for value, order in src.sort.orders.items()
                    for i, o in enumerate(order)
                ]
            for at, column in used:
                if column not in columns[table]:
                    _error(
                        diags,
                        p,
                        ("paths", op.path, op.method, "x-kopa", "source", *at),
                        f"column {column!r} is in neither the row schema nor world view {table!r}; add it to one of them or "
                        "bind another column",
                    )
            missing = [f for f in op.row_fields if f not in columns[table]]
            if missing:
                _error(
                    diags,
                    p,
                    where,
                    f"world view {table!r} lacks columns {', '.join(missing)} of row schema {op.row_name}; "
                    "add them to the view or remove them from the row schema",
                )


def check_nested_bindings(platforms: list[Platform], world: WorldSpec, diags: Diagnostics) -> None:
    """Every sub-list (`x-kopa.nested`) reads a world table or view that has its key, order and item columns."""
    bound = [(p, op) for p in platforms for op in p.operations if op.kopa.nested]
    if not bound:
        return
    columns = columns_of(world)
    for p, op in bound:
        assert p.origin is not None
        found: list[Diagnostic] = []
        loc = ("paths", op.path, op.method, "x-kopa", "nested")
        check_world(op.row_props, op.kopa.nested, loc, columns, p.origin.diag, found)
        diags.extend(found)


def check_tool_names(platforms: list[Platform], diags: Diagnostics) -> None:
    seen: dict[str, str] = {}
    for p in platforms:
        for op in p.operations:
            if op.tool in seen and seen[op.tool] != p.file:
                diags.error(
                    p.file,
                    f"paths.{op.path}.{op.method}.x-kopa.tool",
                    f"tool {op.tool!r} also defined in {seen[op.tool]}",
                )
            seen[op.tool] = p.file
