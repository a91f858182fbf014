"""`kopa-gen train export`, `train grpo` and `train sft`: verl's data and launches (the train extra)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kopa_gen.cli.options import Choices, Subparsers, UsageError, default_of, load, parse


def _presets() -> list[str]:
    from kopa_gen.train.launch import PRESETS

    return sorted(PRESETS)


def _engines() -> tuple[str, ...]:
    from kopa_gen.train.launch import ENGINES

    return ENGINES


@dataclass(frozen=True, kw_only=True)
class ExportOptions:
    """`kopa-gen train export`."""

    root: str | None = None
    task_dir: str | None = None  # None: the benchmark
    name: str | None = None  # None: bench, or edge for a task dir
    tasks: list[str] | None = None
    out: str = "runs/train/data"
    val_fraction: float = 0.1
    seed: int = 0
    group_by: Literal["task", "root"] | None = None
    no_sft: bool = False
    include_held_out: bool = False
    tools_mode: Literal["all", "task", "search"] = "task"


@dataclass(frozen=True, kw_only=True)
class LaunchOptions:
    """`kopa-gen train grpo` and `train sft`."""

    root: str | None = None
    kind: Literal["grpo", "sft"]
    model: str = "qwen3.5-4b"
    engine: str = "fsdp"
    data_dir: str = "runs/train/data"
    dry_run: bool = False
    out: str | None = None
    overrides: list[str] = field(default_factory=list)


def _train_extra() -> None:
    try:
        import pyarrow  # noqa: F401
        import verl  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            f"training needs the train extra ({exc}): python3 -m pip install -e '.[train]'"
        ) from exc


def cmd_train_export(o: ExportOptions) -> int:
    _train_extra()
    from kopa_gen.train.agent_loop import write_agent_loop_config
    from kopa_gen.train.export import export, format_stats
    from kopa_gen.train.tools import write_tool_config

    project = load(o.root)
    name = o.name or "bench"
    if o.task_dir:
        project = project.with_task_set(Path(o.task_dir))
        name = o.name or "edge"
    out = Path(o.out)
    stats = export(
        project,
        name,
        out,
        o.val_fraction,
        o.seed,
        tasks=o.tasks,
        group_by=o.group_by,
        sft=not o.no_sft,
        include_held_out=o.include_held_out,
        tools_mode=o.tools_mode,
    )
    withheld = () if o.include_held_out else project.held_out
    write_tool_config(
        project,
        sorted(p.id for p in project.platforms if p.id not in withheld),
        out / "tools.yaml",
        search=o.tools_mode == "search",
    )
    write_agent_loop_config(out / "agent_loops.yaml")  # no machine path: workers get KOPA_GEN_ROOT
    print(format_stats(stats))
    print(
        f"wrote {out}/: train/val.parquet, sft_train/sft_val.parquet, tools.yaml, agent_loops.yaml, export.json"
    )
    return 0


def cmd_train_launch(o: LaunchOptions) -> int:
    _train_extra()
    from kopa_gen.train.launch import grpo_overrides, launch, sft_overrides

    build = grpo_overrides if o.kind == "grpo" else sft_overrides
    overrides = build(o.model, o.engine, Path(o.data_dir), o.overrides)
    return launch(o.kind, overrides, dry_run=o.dry_run, out=Path(o.out) if o.out else None)


def add_commands(sub: Subparsers) -> None:
    tr = sub.add_parser("train", help="training with verl: export data, launch GRPO / SFT (extra: train)")
    trs = tr.add_subparsers(dest="train_command", required=True)
    te = trs.add_parser("export", help="RL + SFT parquet, tools.yaml and agent_loops.yaml for verl")
    te.add_argument(
        "--task-dir", help="a synthesized task set (what `kopa-gen edge synth` wrote); default: the benchmark"
    )
    te.add_argument("--name", help="task set name in data_source (default: bench, or the task dir's name)")
    te.add_argument("--tasks", nargs="*", help="task id patterns (default: all)")
    te.add_argument("--out", default=default_of(ExportOptions, "out"), help="folder to write")
    te.add_argument(
        "--val-fraction",
        type=float,
        default=default_of(ExportOptions, "val_fraction"),
        help="share of the split units held out",
    )
    te.add_argument("--seed", type=int, default=default_of(ExportOptions, "seed"), help="split seed")
    te.add_argument(
        "--group-by",
        choices=["task", "root"],
        help="split unit (default: task for the benchmark, root call for a synthesized set)",
    )
    te.add_argument("--no-sft", action="store_true", help="skip the SFT export of oracle trajectories")
    te.add_argument(
        "--include-held-out",
        action="store_true",
        help="also export tasks touching the held-out platforms of specs/domains.yaml (and their tools)",
    )
    te.add_argument(
        "--tools-mode",
        choices=["all", "task", "search"],
        default=default_of(ExportOptions, "tools_mode"),
        help="how the tools meet the model in the episodes: the task's list, every tool, or entry tools with "
        "search_tools and call_tool (SFT rows: the oracle searching)",
    )
    te.set_defaults(func=lambda args: cmd_train_export(parse(ExportOptions, args)))
    for kind in ("grpo", "sft"):
        tk = trs.add_parser(kind, help=f"{kind.upper()} on one 8-GPU node: compose, validate and launch verl")
        tk.add_argument(
            "--model",
            choices=Choices(_presets),
            default=default_of(LaunchOptions, "model"),
            help="model preset",
        )
        tk.add_argument(
            "--engine",
            choices=Choices(_engines),
            default=default_of(LaunchOptions, "engine"),
            help="training engine",
        )
        tk.add_argument(
            "--data-dir",
            default=default_of(LaunchOptions, "data_dir"),
            help="what `kopa-gen train export` wrote",
        )
        tk.add_argument(
            "--dry-run", action="store_true", help="compose + verl's validation, print, no launch"
        )
        tk.add_argument("--out", help="with --dry-run: write the resolved config here")
        tk.add_argument("overrides", nargs="*", help="extra Hydra overrides (win over ours)")
        tk.set_defaults(func=lambda args: cmd_train_launch(parse(LaunchOptions, args)), kind=kind)
