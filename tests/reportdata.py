"""Two real runs of reference policies on a few tasks (one scored on ENVIRONMENT), rendered as the report: shared
by the report tests and the headless-browser test."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from kopa_gen.evaluate.report import Report, RunData, render_report
from kopa_gen.evaluate.rundir import read_manifest
from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.project import Project

TASKS = ["fin-001", "fin-002", "fin-014", "dis-001", "dis-002"]


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
