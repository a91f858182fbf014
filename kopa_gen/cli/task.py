"""`kopa-gen task show` (one task on one page for review, kopa_gen/evaluate/show.py) and `kopa-gen audit
contamination` (the benchmark's overlap with a training set, kopa_gen/evaluate/audit.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from kopa_gen.cli.options import Subparsers, load, parse, positive_int


@dataclass(frozen=True, kw_only=True)
class TaskShowOptions:
    """`kopa-gen task show`."""

    root: str | None = None
    id: list[str]
    task_dir: str | None = None
    rows: int = 3
    no_policies: bool = False


def cmd_task_show(o: TaskShowOptions) -> int:
    from kopa_gen.evaluate.runner import selected
    from kopa_gen.evaluate.show import show_task
    from kopa_gen.world.build import ensure_world

    project = load(o.root)
    if o.task_dir:
        project = project.with_task_set(Path(o.task_dir))
    ensure_world(project.world)
    clean = True
    for k, (file, task) in enumerate(selected(project, o.id)):
        page, ok = asyncio.run(show_task(project, file, task, o.rows, not o.no_policies))
        print(("\n" + "─" * 100 + "\n" if k else "") + page)
        clean = clean and ok
    return 0 if clean else 1


@dataclass(frozen=True, kw_only=True)
class TaskFixturesOptions:
    """`kopa-gen task fixtures`."""

    root: str | None = None
    task_dir: str
    id: list[str] | None = None


def cmd_task_fixtures(o: TaskFixturesOptions) -> int:
    """Run the gold chains of a draft task set and write its fixtures (DIR/fixtures/<domain>/<id>.json), so that
    `kopa-gen eval --task-dir DIR` plays it; a task that does not build is reported at its file and line."""
    import json
    import sys

    from kopa_gen.evaluate.runner import selected
    from kopa_gen.gold.run import run_gold
    from kopa_gen.language.diagnostics import Diagnostics
    from kopa_gen.world.build import ensure_world

    project = load(o.root).with_task_set(Path(o.task_dir))
    ensure_world(project.world)
    written = failed = 0
    for file, task in selected(project, o.id or []):
        diags = Diagnostics()
        fixture = asyncio.run(run_gold(project, file, task, project.world.seed, diags))
        if diags.items:
            print(diags.render(), file=sys.stderr)
        if fixture is None:
            failed += 1
            continue
        path = project.fixtures_dir / task.domain / f"{task.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written += 1
    print(f"fixtures: {written} written under {project.fixtures_dir}; {failed} task(s) did not build")
    return 1 if failed else 0


@dataclass(frozen=True, kw_only=True)
class AuditOptions:
    """`kopa-gen audit contamination`."""

    root: str | None = None
    task_dir: str
    json: bool = False


def cmd_audit(o: AuditOptions) -> int:
    import json

    from kopa_gen.evaluate.audit import audit

    project = load(o.root)
    training = [t for _, t in project.with_task_set(Path(o.task_dir)).tasks]
    result = audit(project, training)
    print(json.dumps(result.as_dict(), ensure_ascii=False, indent=1) if o.json else result.lines())
    return 0


def add_commands(sub: Subparsers) -> None:
    t = sub.add_parser(
        "task", help="review tasks: `task show ID` prints one task's chain, answer and verdicts"
    )
    ts = t.add_subparsers(dest="task_command", required=True)
    show = ts.add_parser(
        "show",
        help="run a task's gold chain fresh and print the query, each call with its arguments, rows and "
        "hand-offs, the answer and its pool, the build's problems and every reference policy's reward",
    )
    show.add_argument("id", nargs="+", help="task ids or patterns (fin-00*)")
    show.add_argument(
        "--task-dir",
        default=None,
        help="a task set folder (DIR/tasks/<domain>/<id>.yaml) instead of the benchmark",
    )
    show.add_argument(
        "--rows", type=positive_int, default=3, help="first rows shown of each result (default 3)"
    )
    show.add_argument("--no-policies", action="store_true", help="skip running the policies")
    show.set_defaults(func=lambda args: cmd_task_show(parse(TaskShowOptions, args)))
    fx = ts.add_parser(
        "fixtures",
        help="run the gold chains of a task set folder and write its fixtures (DIR/fixtures/<domain>/<id>.json), "
        "so that `kopa-gen eval --task-dir DIR` plays it",
    )
    fx.add_argument("id", nargs="*", help="task ids or patterns (default: every task of the folder)")
    fx.add_argument("--task-dir", required=True, help="the task set folder (DIR/tasks/<domain>/<id>.yaml)")
    fx.set_defaults(func=lambda args: cmd_task_fixtures(parse(TaskFixturesOptions, args)))

    a = sub.add_parser("audit", help="audit a training set against the benchmark")
    asub = a.add_subparsers(dest="audit_command", required=True)
    c = asub.add_parser(
        "contamination",
        help="query, tool and dependency-edge overlap between the benchmark's gold chains and a task set",
    )
    c.add_argument(
        "--task-dir", required=True, help="the training set (the folder `kopa-gen edge synth` wrote)"
    )
    c.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    c.set_defaults(func=lambda args: cmd_audit(parse(AuditOptions, args)))
