"""Two real runs of reference policies on a few tasks (one scored on ENVIRONMENT), rendered as the report, and a
run of 1,800 episodes made of their records: shared by the report tests and the headless-browser test."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.report import Report, RunData, render_report
from kopa_gen.evaluate.rundir import read_manifest
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.project import Project

TASKS = ["fin-001", "fin-002", "edu-011", "dis-001", "dis-002"]


@dataclass(frozen=True)
class Rendered:
    runs: dict[str, RunData]
    md: str
    html: str
    folder: Path
    report: Report


def sample_report(project: Project, folder: Path) -> Rendered:
    runs: dict[str, RunData] = {}
    for name, rollouts in (("oracle", 2), ("first-page", 3)):
        config = EvalConfig(policy=name, out=folder / name, rollouts=rollouts, tasks=TASKS)
        records = asyncio.run(run_eval(project, config))
        runs[name] = RunData(records, read_manifest(folder / name))
    report = render_report(runs)
    report.write(folder)
    return Rendered(runs, report.md, report.html, folder, report)


def eighteen_hundred(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """45 tasks x 8 seeds x 5 rollouts made of a real run's records (the 5 tasks x 3 rollouts of `first-page`):
    the size of a benchmark run of 10 seeds x 4 rollouts, for the report's size and layout."""
    base = {(r["task"], r["rollout"]): r for r in records}
    return [
        dict(base[task, rollout % 3], task=f"{task}-{copy}", seed=seed, rollout=rollout)
        | {"key": f"{task}-{copy}:{seed}:{rollout}"}
        for task in TASKS
        for copy in range(9)
        for seed in range(8)
        for rollout in range(5)
    ]
