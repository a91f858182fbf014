"""`kopa-gen build`, `new platform` and `demo`: specs into generated/, the world and the fixtures."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass

from kopa_gen.cli.options import Subparsers, UsageError, load, parse, root_folder


@dataclass(frozen=True, kw_only=True)
class BuildOptions:
    """`kopa-gen build`."""

    root: str | None = None
    check: bool = False
    full: bool = False
    force: bool = False
    no_world: bool = False
    seed: int | None = None  # None: specs/world/world.yaml


@dataclass(frozen=True, kw_only=True)
class NewPlatformOptions:
    """`kopa-gen new platform`."""

    root: str | None = None
    id: str
    family: str
    domain: str | None = None  # None: the first of specs/domains.yaml


@dataclass(frozen=True, kw_only=True)
class DemoOptions:
    """`kopa-gen demo`."""

    root: str | None = None
    seed: int | None = None


def cmd_build(o: BuildOptions) -> int:
    from kopa_gen.compile.build import build, check
    from kopa_gen.compile.fixtures import compile_fixtures
    from kopa_gen.compile.world_record import record_drift, record_world
    from kopa_gen.language.schemas import export_schemas
    from kopa_gen.world.build import ensure_world

    project = load(o.root)
    start = time.perf_counter()
    if o.check:
        report = check(project, full=o.full)
        for line in report.drift:
            print(f"drift: {line}", file=sys.stderr)
        stale = export_schemas(project.root, write=False)
        for path in stale:
            print(f"drift: {path} is stale; run `kopa-gen build`", file=sys.stderr)
        fixtures, _ = compile_fixtures(project, o.seed, check_only=True)
        for task_id in fixtures:
            print(f"drift: fixture of task {task_id} is out of date; run `kopa-gen build`", file=sys.stderr)
        rows = record_drift(project)
        if rows is not None:
            print(f"drift: {rows}", file=sys.stderr)
        ok = not report.drift and not stale and not fixtures and rows is None
        print(f"generated/ {'in sync' if ok else 'out of date'} ({time.perf_counter() - start:.2f}s)")
        return 0 if ok else 1
    export_schemas(project.root, write=True)
    report = build(project, force=o.force)
    print(
        f"built {', '.join(report.built) or 'nothing'}; unchanged {', '.join(report.skipped) or 'none'}"
        + (f"; removed {', '.join(report.removed)}" if report.removed else "")
        + f" ({time.perf_counter() - start:.2f}s)"
    )
    if not o.no_world:
        world = ensure_world(project.world, o.seed, progress=lambda line: print(line, file=sys.stderr))
        size = world.path.stat().st_size / 2**20
        how = f"built in {world.seconds:.1f}s" if world.fresh else "cached"
        print(f"world seed {world.seed}: {world.path} ({size:.0f} MiB, {how})")
        if record_world(project, world):
            print("world rows recorded in generated/world.json")
        start = time.perf_counter()
        written, diags = compile_fixtures(project, o.seed)
        if diags.items:
            print(diags.render(), file=sys.stderr)
        if diags.errors:
            print(f"{len(diags.errors)} task problem(s); fixtures not updated.", file=sys.stderr)
            return 1
        print(
            f"fixtures: {len(written)} written of {len(project.tasks)} tasks ({time.perf_counter() - start:.2f}s)"
        )
    return 0


def cmd_demo(o: DemoOptions) -> int:
    from kopa_gen.demo import DemoFailed, run_demo

    code = cmd_build(BuildOptions(root=o.root, seed=o.seed))
    if code:
        return code
    try:
        return asyncio.run(run_demo(load(o.root)))
    except DemoFailed as exc:
        print(f"kopa-gen demo: error: {exc}", file=sys.stderr)
        return 1


def cmd_new_platform(o: NewPlatformOptions) -> int:
    from kopa_gen.scaffold import new_platform

    root = root_folder(o.root)
    written = new_platform(root, o.id, o.family, o.domain)
    for path in written:
        print(f"wrote {path.relative_to(root).as_posix()}")
    print(
        f'next: kopa-gen build && kopa-gen call {o.id} {o.id}_list_items \'{{"item_nm": "관측"}}\'; then '
        "replace the sample operation with the real API's (docs/platforms.md)"
    )
    return 0


def add_build(sub: Subparsers) -> None:
    b = sub.add_parser("build", help="compile specs into generated/ and build the world")
    b.add_argument("--check", action="store_true", help="fail when generated/ is out of date; write nothing")
    b.add_argument("--full", action="store_true", help="with --check: regenerate and compare bytes")
    b.add_argument("--force", action="store_true", help="rebuild every platform")
    b.add_argument("--no-world", action="store_true", help="do not build the world database")
    b.add_argument("--seed", type=int, default=None, help="world seed (default: specs/world/world.yaml)")
    b.set_defaults(func=lambda args: cmd_build(parse(BuildOptions, args)))


def add_new_and_demo(sub: Subparsers) -> None:
    nw = sub.add_parser("new", help="scaffold a new platform (spec, declared world, examples)")
    nws = nw.add_subparsers(dest="what", required=True)
    np_ = nws.add_parser("platform", help="a platform of one envelope family that builds and answers at once")
    np_.add_argument("id", help="platform id: 2-24 lower-case letters or digits")
    np_.add_argument(
        "--family", required=True, help="envelope family (kopa_gen/envelopes): datagokr, dart, hub, ..."
    )
    np_.add_argument("--domain", default=None, help="domain id from specs/domains.yaml (default: the first)")
    np_.set_defaults(func=lambda args: cmd_new_platform(parse(NewPlatformOptions, args)))

    d = sub.add_parser("demo", help="build, then run a cross-platform chain on the embedded sandbox")
    d.add_argument("--seed", type=int, default=None, help="world seed (default: specs/world/world.yaml)")
    d.set_defaults(func=lambda args: cmd_demo(parse(DemoOptions, args)))


__all__ = ["UsageError", "add_build", "add_new_and_demo"]
