"""ACTION credits any route that fetched what the answer derives from, on the real tasks in the sandbox: every
page read unsorted instead of the API's own sort (law-001: correct, at a cost in efficiency) and a lookup skipped
because another call gave the value (trf-020's route by its number) are credited; a route that never fetched
those rows is not."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.probe import probe
from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld


def units(project: Project, task_id: str) -> list[dict[str, Any]]:
    task = next(t for _, t in project.tasks if t.id == task_id)
    return [u for step in load_fixture(project, task)["steps"] for u in step]


def action_of(project: Project, task_id: str, calls: list[dict[str, Any]], submit: Any, tmp: Path) -> Any:
    log = tmp / f"{task_id}.json"
    log.write_text(json.dumps({"calls": calls, "turns": [[i] for i in range(len(calls))]}), encoding="utf-8")
    return asyncio.run(probe(project, task_id, None, log, submits=[submit]))


def test_reading_every_page_scores_as_the_gold_chains_sort(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    """law-001's gold asks the API for the newest ordinances first (`sort: ddes`); a route that reads every page
    unsorted fetched the same newest row: fully correct, less efficient; the oldest one instead is not correct."""
    gold = units(project, "law-001")
    first = gold[0]
    assert first["args"].get("sort") == "ddes"
    page, size = project.page_params(first["tool"]) or ("page", "display")
    unsorted = {k: v for k, v in first["args"].items() if k != "sort"} | {size: 100}
    pages = [
        {"tool": first["tool"], "arguments": unsorted | {page: k}}
        for k in range(1, -(-int(first["total_count"]) // 100) + 1)
    ]
    assert len(pages) > 1
    rest = [{"tool": u["tool"], "arguments": u["args"]} for u in gold[1:]]
    answer = load_fixture(project, next(t for _, t in project.tasks if t.id == "law-001"))["answer"]
    submit = {"answer": answer["value"]}
    sorted_route = [{"tool": first["tool"], "arguments": first["args"]}, *rest]
    best, paged = (
        action_of(project, "law-001", r, submit, tmp_path) for r in (sorted_route, [*pages, *rest])
    )
    assert best["reward"] is True and paged["reward"] is True
    assert best["action"]["action"] == 1.0 and paged["action"]["corr"] == 1.0, paged["action"]
    # every page costs calls the sort did not: correct, and less efficient
    assert paged["action"]["eff"] < 1.0 and paged["action"]["action"] < 1.0
    # the oldest ordinances alone: neither the newest row nor the academies the answer counts were fetched
    oldest = {"tool": first["tool"], "arguments": first["args"] | {"sort": "dasc"}}
    assert action_of(project, "law-001", [oldest], submit, tmp_path)["action"]["corr"] == 0.0


def test_a_skipped_lookup_scores_as_the_gold_chain(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    """trf-020 finds the route through the stop it serves; finding it by its number (the declared alternative)
    skips the stop lookup and is credited as fully; leaving out the route's stops is not."""
    gold = units(project, "trf-020")
    route_unit = next(u for u in gold if u["alternatives"])
    alternative = route_unit["alternatives"][0]
    skipped = [
        {"tool": u["tool"], "arguments": u["args"]}
        if u is not route_unit
        else {"tool": alternative["tool"], "arguments": alternative["args"]}
        for u in gold
        if u["id"] != "stop"
    ]
    answer = load_fixture(project, next(t for _, t in project.tasks if t.id == "trf-020"))["answer"]
    submit = {"answer": answer["value"], "unit": answer.get("unit")}
    verdict = action_of(project, "trf-020", skipped, submit, tmp_path)
    assert verdict["reward"] is True
    assert verdict["action"]["action"] == 1.0, verdict["action"]
    # without the route's stops nothing the answer derives from was fetched
    short = [c for c in skipped if c["tool"] != gold[-1]["tool"]]
    assert action_of(project, "trf-020", short, submit, tmp_path)["action"]["corr"] < 0.5
