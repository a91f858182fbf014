"""ACTION credits any route that fetched what the answer derives from, on the real tasks in the sandbox: the
API's own sort instead of reading every page (law-001), a lookup skipped because another call already gave the
value (pol-003 in two calls), score as high as the gold chain; a route that never fetched those rows does not."""

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


def test_the_sort_route_scores_as_the_gold_chain(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    gold = units(project, "law-001")
    query = gold[0]["args"]["query"]
    district = next(u for u in gold if u["id"] == "districts")["args"]["locatadd_nm"]
    sorted_route = [
        {"tool": "law_search_ordinances", "arguments": {"query": query, "sort": "ddes", "display": 1}},
        {"tool": "region_list_legal_districts", "arguments": {"locatadd_nm": district, "numOfRows": 100}},
    ]
    answer = load_fixture(project, next(t for _, t in project.tasks if t.id == "law-001"))["answer"]
    verdict = action_of(project, "law-001", sorted_route, {"answer": answer["value"], "unit": "개"}, tmp_path)
    assert verdict["reward"] is True
    assert verdict["action"]["corr"] == 1.0 and verdict["action"]["action"] == 1.0
    # the newest ordinance but not its districts: the ordinance's row is fetched, the rows the answer counts not
    half = action_of(
        project, "law-001", sorted_route[:1], {"answer": answer["value"], "unit": "개"}, tmp_path
    )
    assert half["action"]["corr"] == 0.5
    # the oldest ordinance and no districts: nothing the answer derives from
    oldest = [dict(sorted_route[0], arguments={"query": query, "sort": "dasc", "display": 1})]
    worse = action_of(project, "law-001", oldest, {"answer": answer["value"], "unit": "개"}, tmp_path)
    assert worse["action"]["corr"] == 0.0


def test_a_skipped_lookup_scores_as_the_gold_chain(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    gold = units(project, "pol-003")
    member = next(u for u in gold if u["id"] == "member")
    districts = next(u for u in gold if u["id"] == "districts")
    note = next(u for u in gold if u["id"] == "note")
    route = [
        {"tool": member["tool"], "arguments": member["args"]},
        {"tool": districts["tool"], "arguments": {**districts["args"], "numOfRows": 100}},
        {"tool": note["tool"], "arguments": note["args"]},
    ]
    count = int(note["args"]["content"])
    verdict = action_of(project, "pol-003", route, {"answer": count, "unit": "개"}, tmp_path)
    assert verdict["reward"] is True
    assert verdict["action"]["action"] == 1.0, verdict["action"]
    # without the districts call the elections and winners it stood for are not credited either
    short = action_of(project, "pol-003", [route[0], route[2]], {"answer": count, "unit": "개"}, tmp_path)
    assert short["action"]["corr"] < 0.5
