"""Task specs and gold fixtures: validated with their place, executed in the sandbox, answers checked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from kopa_gen.compile.fixtures import compile_fixtures, run_gold
from kopa_gen.project import Project, load_project
from kopa_gen.spec.diagnostics import Diagnostics, SpecError
from kopa_gen.spec.task import Task
from kopa_gen.world.build import BuiltWorld
from tests.toyspec import write_project

TASK = {
    "id": "fin-001",
    "domain": "finance",
    "query": "사과 가격은?",
    "system": {"today": "2026-11-29", "keys": ["toy"]},
    "max_calls": 3,
    "reward": ["RESPONSE"],
    "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {"name": "사과"}}]}],
    "answer": {"kind": "number", "value": 1200},
    "answer_from": {"from": "fruit", "path": "rows[0].price"},
}


def task_errors(tmp_path: Path, task: dict[str, object]) -> list[str]:
    write_project(tmp_path)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True)
    (folder / "fin-001.yaml").write_text(
        yaml.safe_dump(task, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    return [d.render() for d in info.value.diagnostics]


def test_a_valid_toy_task_loads(tmp_path: Path) -> None:
    write_project(tmp_path)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True)
    (folder / "fin-001.yaml").write_text(yaml.safe_dump(TASK, allow_unicode=True), encoding="utf-8")
    ((_, task),) = load_project(tmp_path).tasks
    assert task.calls()[0].tool == "toy_list_fruits"


def test_unknown_gold_tool_is_named_with_its_place(tmp_path: Path) -> None:
    broken = {**TASK, "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruit", "args": {}}]}]}
    assert task_errors(tmp_path, broken) == [
        "specs/tasks/finance/fin-001.yaml:14: gold[0].calls[0].tool: error: unknown tool 'toy_list_fruit'; "
        "known: toy_list_fruits"
    ]


def test_references_must_point_backwards_and_action_is_never_alone(tmp_path: Path) -> None:
    forward = {
        **TASK,
        "gold": [
            {
                "calls": [
                    {
                        "id": "a",
                        "tool": "toy_list_fruits",
                        "args": {"name": {"from": "b", "path": "rows[0].name"}},
                    }
                ]
            },
            {"calls": [{"id": "b", "tool": "toy_list_fruits", "args": {}}]},
        ],
        "answer_from": {"from": "b", "path": "rows[0].price"},
    }
    (found,) = task_errors(tmp_path, forward)
    assert "gold[0] a.name refers to 'b', found in no earlier step" in found
    alone = {**TASK, "reward": ["ACTION"], "answer": None, "answer_from": None}
    (found,) = task_errors(tmp_path / "x", alone)
    assert "ACTION is never used alone; add RESPONSE or ENVIRONMENT" in found
    extra = {**TASK, "colour": "red"}
    (found,) = task_errors(tmp_path / "y", extra)
    assert found.endswith(
        "colour: error: unknown field; remove it or check its spelling against the JSON Schema"
    )


def test_committed_fixtures_match_the_specs(project: Project, world: BuiltWorld) -> None:
    changed, diags = compile_fixtures(project, check_only=True)
    assert changed == [] and not diags.errors


def test_gold_chains_replay_identically(project: Project, world: BuiltWorld) -> None:
    for file, task in project.tasks:
        runs = [
            asyncio.run(run_gold(project, file, task, project.world.seed, Diagnostics())) for _ in range(2)
        ]
        assert runs[0] is not None and runs[0] == runs[1]


def test_environment_tasks_change_state(project: Project, world: BuiltWorld) -> None:
    empty = "c6b08d41eeea70ceffb181b29976ea8a96003ffa63d9746c5008d47c6210b8b3"
    for file, task in project.tasks:
        fixture = asyncio.run(run_gold(project, file, task, project.world.seed, Diagnostics()))
        assert fixture is not None
        if "ENVIRONMENT" in task.reward:
            assert fixture["state_hash"] != empty, f"{task.id}: doing nothing must not pass ENVIRONMENT"


def test_a_declared_answer_the_chain_does_not_give_is_a_build_error(
    project: Project, world: BuiltWorld
) -> None:
    file, task = next((f, t) for f, t in project.tasks if t.id == "fin-001")
    assert task.answer is not None
    wrong = Task.model_validate(
        {**task.model_dump(by_alias=True, mode="json"), "answer": {**task.answer.model_dump(), "value": 1}}
    )
    diags = Diagnostics()
    assert asyncio.run(run_gold(project, file, wrong, project.world.seed, diags)) is None
    (error,) = diags.errors
    assert error.path == "answer" and "disagrees with the gold chain" in error.message


def test_stats_tables_cover_every_domain(project: Project) -> None:
    from kopa_gen.evaluate.taskstats import benchmark_table, handoff_table, percentile

    table = benchmark_table(project)
    for _, task in project.tasks:
        assert f"| {task.domain.value} |" in table
    assert f"| all | {len(project.tasks)} |" in table
    assert "one-to-many" in handoff_table(project)
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9) == 9.1
