"""The task lint and the chain constructs (pages, fan-out, templates, alternatives) on a tiny inline platform:
tasks are written, compiled, executed in the toy's sandbox and linted; broken ones fail with every error listed at
file:line with what to write instead.

The toy world has three fruits (F01 사과 1200, F02 배 2500, F03 청사과 1500), two per page."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from kopa_gen.compile.build import build
from kopa_gen.compile.fixtures import compile_fixtures
from kopa_gen.language.diagnostics import SpecError
from kopa_gen.policies.base import TaskContext, policy
from kopa_gen.project import Project, load_project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import ensure_world
from tests.conftest import repository_project
from tests.toyspec import write_project

FILE = "specs/tasks/finance/fin-001.yaml"
BASE: dict[str, Any] = {
    "id": "fin-001",
    "domain": "finance",
    "query": "사과가 들어간 과일 가운데 가장 비싼 과일의 가격은?",
    "system": {"today": "2026-11-29", "keys": ["toy"]},
    "max_calls": 4,
    "reward": ["RESPONSE"],
    "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {"name": "사과"}}]}],
    "answer": {"kind": "number", "value": 1500, "unit": "원"},
    "answer_from": {"from": "fruit", "path": "max(rows[*].price)"},
}


def compiled(tmp_path: Path, task: dict[str, Any]) -> tuple[Project, list[str]]:
    """Write the toy project with `task`, generate its code, build its world, compile the fixture."""
    write_project(tmp_path)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fin-001.yaml").write_text(yaml.safe_dump(task, allow_unicode=True, sort_keys=False), "utf-8")
    project = load_project(tmp_path)
    build(project)
    ensure_world(project.world)
    _, diags = compile_fixtures(project)
    return project, [d.render() for d in diags.errors]


def errors(tmp_path: Path, task: dict[str, Any]) -> list[str]:
    return compiled(tmp_path, task)[1]


def with_call(task: dict[str, Any], **changes: Any) -> dict[str, Any]:
    call = {**task["gold"][0]["calls"][0], **changes}
    return {**task, "gold": [{"calls": [call]}, *task["gold"][1:]]}


def play(project: Project, name: str) -> tuple[str, int]:
    """A reference policy on the toy task: its final message and how many calls it made."""
    import json

    ((_, task),) = project.tasks
    fixture = json.loads((project.root / "generated/fixtures/finance/fin-001.json").read_text("utf-8"))

    async def go() -> tuple[str, int]:
        async with Session.open(project, ["toy"], max_calls=task.max_calls) as session:
            episode = await policy(name).run(TaskContext(task, fixture), session)
            return episode.final_message, len(session.calls)

    return asyncio.run(go())


def test_a_sound_task_builds_and_the_oracle_answers_it(tmp_path: Path) -> None:
    project, found = compiled(tmp_path, BASE)
    assert found == []
    assert play(project, "oracle") == ("최종 답: 1500", 1)


def test_pages_all_reads_to_the_end_and_first_page_does_not(tmp_path: Path) -> None:
    task = {
        **BASE,
        "query": "과일 가운데 가장 비싼 과일의 가격은?",
        "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {}, "pages": "all"}]}],
        "answer": {"kind": "number", "value": 2500},
    }
    project, found = compiled(tmp_path, task)
    assert found == []
    import json

    fixture = json.loads((tmp_path / "generated/fixtures/finance/fin-001.json").read_text("utf-8"))
    units = [u for step in fixture["steps"] for u in step]
    assert [(u["key"], u["paging"]["rows"]) for u in units] == [("fruit@1", [0, 2]), ("fruit@2", [2, 3])]
    assert play(project, "oracle") == ("최종 답: 2500", 2)
    # the first page holds 사과 1200 and 배 2500: first-page happens to be right, with one call
    assert play(project, "first-page") == ("최종 답: 2500", 1)
    cheapest = {
        **task,
        "query": "과일 가운데 가장 싼 과일의 이름은?",
        "answer": {"kind": "text", "value": "사과"},
    }
    cheapest["answer_from"] = {"from": "fruit", "path": "rows[price=@min].name"}
    assert errors(tmp_path / "min", cheapest) == []


def test_fan_out_over_every_matching_row(tmp_path: Path) -> None:
    task = {
        **BASE,
        "query": "사과가 들어간 과일마다 이름으로 다시 조회했을 때 결과는 모두 몇 건인가요?",
        "max_calls": 5,
        "gold": [
            BASE["gold"][0],
            {
                "calls": [
                    {
                        "id": "each_fruit",
                        "tool": "toy_list_fruits",
                        "for_each": {"from": "fruit", "path": "rows[*].name"},
                        "args": {"name": {"from": "each"}},
                    }
                ]
            },
        ],
        "answer": {"kind": "number", "value": 3, "unit": "건"},
        "answer_from": {"from": "each_fruit", "path": "[*].result.total_count | sum"},
    }
    project, found = compiled(tmp_path, task)
    assert found == []  # 사과 finds 사과 and 청사과 (2), 청사과 finds itself (1)
    assert play(project, "oracle") == ("최종 답: 3", 3)


def test_every_lint_problem_is_listed_with_its_line_and_the_fix(tmp_path: Path) -> None:
    task = {
        **BASE,
        "max_calls": 1,
        "gold": [
            {"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {"name": "사과"}}]},
            {
                "calls": [
                    {"id": "unused", "tool": "toy_list_fruits", "args": {"name": "배"}},
                    {"id": "green", "tool": "toy_list_fruits", "args": {"name": "청사과"}},
                ]
            },
        ],
        "answer": {"kind": "number", "value": 1200, "unit": "원"},
        "answer_from": {"from": "fruit", "path": "rows[price=1500].price"},
    }
    assert errors(tmp_path, task) == [
        f"{FILE}:18: gold[1].calls[0]: error: the result of gold call 'unused' is never used; reference it "
        "from a later call or the answer, remove the call, or mark it `state: true` if it is kept for its effect",
        f"{FILE}:22: gold[1].calls[1]: error: the result of gold call 'green' is never used; reference it "
        "from a later call or the answer, remove the call, or mark it `state: true` if it is kept for its effect",
        f"{FILE}:25: gold[1].calls[1].args.name: error: literal '청사과' is not in the query but is in the "
        "result of 'fruit' at rows[1].name: hand it over as a reference, e.g. {from: fruit, path: ...}",
        f"{FILE}:32: answer_from.path: error: [price=1500] picks a row by an identifier the query does not "
        "give; use [field=@max] / [field=@min] for the extreme",
        f"{FILE}:28: answer.value: error: declared value 1200 is not what the chain gives (1500); write "
        "value: 1500",
        f"{FILE}:8: max_calls: error: max_calls 1 is below the gold chain's 3 calls; give at least 3",
    ]


def test_an_alias_does_not_excuse_a_wrong_value(tmp_path: Path) -> None:
    task = {
        **BASE,
        "answer": {"kind": "text", "value": "배", "aliases": ["청사과"]},
        "answer_from": {"from": "fruit", "path": "rows[price=@max].name"},
    }
    (problem,) = errors(tmp_path, task)
    assert "declared value '배' is not what the chain gives ('청사과'); write value: '청사과'" in problem


def test_keys_and_exposed_tools_must_cover_the_chain(tmp_path: Path) -> None:
    task = {**BASE, "system": {"today": "2026-11-29", "keys": ["nope"]}, "tools": ["toy_list_fruits"]}
    assert errors(tmp_path, task) == [
        f"{FILE}:7: system.keys[0]: error: unknown platform 'nope'; known: toy",
        f"{FILE}:14: gold[0].calls[0].tool: error: toy_list_fruits is a toy tool, but system.keys does not "
        "hold toy; add it",
        f"{FILE}:25: tools[0]: error: toy_list_fruits is a toy tool, but system.keys does not hold toy; add it",
    ]


def test_a_path_that_does_not_resolve_is_a_build_error(tmp_path: Path) -> None:
    task = {**BASE, "answer_from": {"from": "fruit", "path": "rows[name=포도].price"}}
    (problem,) = errors(tmp_path, task)
    assert problem.startswith(f"{FILE}:22: answer_from: error: 'rows[name=포도].price' selects 0 values")


def test_a_tie_has_no_single_answer(tmp_path: Path) -> None:
    task = {
        **BASE,
        "query": "과일 이름에서 가장 흔한 첫 글자는?",
        "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {}, "pages": "all"}]}],
        "answer": {"kind": "text", "value": "사"},
        "answer_from": {"from": "fruit", "path": "rows[*].name | prefix(1) | mode"},
    }
    (problem,) = errors(tmp_path, task)
    assert "mode: 3 values are equally frequent (사, 배, 청, each 1x); no single answer" in problem


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "rows[0].price | cube",
            "'rows[0].price | cube' at character 21: unknown function 'cube'; known: abs, add_days,",
        ),
        ("rows[0.price", "'rows[0.price' at character 13: a selector is [index], [*], [field], [!field]"),
        ("max(rows[*].price, 2)", "'max(rows[*].price, 2)' at character 22: max takes 0 argument(s)"),
        ("rows[name={who}].price", "the path uses {who}; give it under `with:`"),
    ],
)
def test_a_broken_path_is_a_load_error_at_its_line(tmp_path: Path, path: str, message: str) -> None:
    write_project(tmp_path)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True)
    task = {**BASE, "answer_from": {"from": "fruit", "path": path}}
    (folder / "fin-001.yaml").write_text(yaml.safe_dump(task, allow_unicode=True, sort_keys=False), "utf-8")
    with pytest.raises(SpecError) as info:
        load_project(tmp_path)
    (problem,) = [d.render() for d in info.value.diagnostics]
    assert problem.startswith(f"{FILE}:22: answer_from") and message in problem


def test_a_code_answer_is_checked_against_the_chain() -> None:
    from kopa_gen.gold.lint import answer_mismatch
    from kopa_gen.language.answers import CodeAnswer

    assert answer_mismatch(CodeAnswer(value="2620011900"), "26200-11900") is None
    problem = answer_mismatch(CodeAnswer(value="2620011900"), "2638010600")
    assert problem is not None and "write value: '2638010600'" in problem
    assert answer_mismatch(CodeAnswer(value="0012"), "12") is not None  # leading zeros count


def test_the_walker_and_the_edge_probe_coerce_alike() -> None:
    from kopa_gen.edge.probe import coerce as probe_coerce
    from kopa_gen.edge.signatures import load_signatures
    from kopa_gen.runtime.chain import coerce as chain_coerce

    project = repository_project()
    sigs = {s.name: s for s in load_signatures(project)}
    seen = 0
    for tool, sig in sigs.items():
        for param in sig.bindable:
            for value in ("12", " 7 ", 12, 3.5, "abc", True):
                assert chain_coerce(project, tool, param.name, value) == probe_coerce(value, sig, param.name)
                seen += 1
    assert seen > 100


def test_a_literal_the_query_says_in_words_is_given(tmp_path: Path) -> None:
    """A literal the query gives as its meaning words it (meaning.yaml `labels`: a city code said as its city's
    name) is no hidden hand-off, even where an earlier result holds the same value; the same literal without
    those words in the query still is one."""
    hidden = {
        **BASE,
        "max_calls": 2,
        "gold": [
            {"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {"name": "사과"}}]},
            {"calls": [{"id": "green", "tool": "toy_list_fruits", "args": {"name": "청사과"}}]},
        ],
        "answer_from": {"from": "green", "path": "max(rows[*].price)"},
    }
    said = {**hidden, "query": "사과가 들어간 과일과 푸른 사과 가운데 가장 비싼 과일의 가격은?"}
    write_project(tmp_path)
    meaning = tmp_path / "specs" / "platforms" / "toy" / "meaning.yaml"
    meaning.write_text("platform: toy\nparams:\n  name: {labels: {청사과: 푸른 사과, 사과: 사과}}\n", "utf-8")
    for task, problems in ((hidden, 1), (said, 0)):
        folder = tmp_path / "specs" / "tasks" / "finance"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "fin-001.yaml").write_text(
            yaml.safe_dump(task, allow_unicode=True, sort_keys=False), "utf-8"
        )
        project = load_project(tmp_path)
        build(project)
        ensure_world(project.world)
        _, diags = compile_fixtures(project)
        found = [d.render() for d in diags.errors if "is not in the query but is in the result" in d.render()]
        assert len(found) == problems, found


def _two_fruits(answer: dict[str, Any], answer_from: dict[str, Any], query: str) -> dict[str, Any]:
    calls = [
        {"id": "apple", "tool": "toy_list_fruits", "args": {"name": "사과"}},
        {"id": "pear", "tool": "toy_list_fruits", "args": {"name": "배"}},
    ]
    return {**BASE, "query": query, "gold": [{"calls": calls}], "answer": answer, "answer_from": answer_from}


def warnings(tmp_path: Path, task: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The build's errors and warnings for `task` (a fresh toy project each time)."""
    write_project(tmp_path)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fin-001.yaml").write_text(yaml.safe_dump(task, allow_unicode=True, sort_keys=False), "utf-8")
    project = load_project(tmp_path)
    build(project)
    ensure_world(project.world)
    _, diags = compile_fixtures(project)
    return [d.render() for d in diags.errors], [d.render() for d in diags.items if d not in diags.errors]


def test_arithmetic_between_results_builds_and_an_unstated_rounding_warns(tmp_path: Path) -> None:
    # 사과 1,200원 (F01; 청사과 is the other row) against 배 2,500원: 48.0%
    percent = {
        "op": "percent",
        "digits": 1,
        "of": [{"from": "apple", "path": "rows[name=사과].price"}, {"from": "pear", "path": "rows[0].price"}],
    }
    answer = {"kind": "number", "value": 48, "unit": "%"}
    said = _two_fruits(
        answer, percent, "사과 가격은 배 가격의 몇 %인가요? 소수 첫째 자리까지 반올림해 주세요."
    )
    found, warned = warnings(tmp_path / "said", said)
    assert found == [] and not any("rounded" in w for w in warned)
    unsaid = _two_fruits(answer, percent, "사과 가격은 배 가격의 몇 %인가요?")
    found, warned = warnings(tmp_path / "unsaid", unsaid)
    assert found == []
    (warning,) = [w for w in warned if "rounded" in w]
    assert warning.startswith(
        f"{FILE}:26: answer_from: warning: the answer is rounded, but the query does not say"
    )


def test_a_tie_between_results_is_an_error_unless_the_task_declares_a_rule(tmp_path: Path) -> None:
    apple = {"from": "apple", "path": "rows[name=사과].price"}
    tied = {
        "op": "argmax",
        "of": [apple, apple],
        "labels": [
            {"from": "apple", "path": "rows[name=사과].name"},
            {"from": "pear", "path": "rows[0].name"},
        ],
    }
    task = _two_fruits({"kind": "text", "value": "사과"}, tied, "사과와 배 중 더 비싼 과일은?")
    (problem,) = errors(tmp_path / "tied", task)
    assert problem.startswith(f"{FILE}:25: answer_from: error: argmax: a tie at 1200 between 사과, 배;")
    ruled = _two_fruits(
        {"kind": "text", "value": "사과"},
        {**tied, "tie_break": "first"},
        "사과와 배 중 더 비싼 과일은? 값이 같으면 먼저 말한 과일로 답해 주세요.",
    )
    found, warned = warnings(tmp_path / "ruled", ruled)
    assert found == [] and not any("tie-break" in w for w in warned)
    found, warned = warnings(tmp_path / "unsaid", {**ruled, "query": "사과와 배 중 더 비싼 과일은?"})
    assert found == [] and any("a tie-break is declared, but the query does not say" in w for w in warned)


def test_a_tie_between_groups_is_an_error_at_its_line(tmp_path: Path) -> None:
    task = {
        **BASE,
        "query": "가장 많은 과일이 같은 값을 매긴 가격은?",
        "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {}, "pages": "all"}]}],
        "answer": {"kind": "text", "value": "1200"},
        "answer_from": {"from": "fruit", "path": "rows | group(price, count()) | argmax"},
    }
    (problem,) = errors(tmp_path, task)
    assert problem.startswith(f"{FILE}:21: answer_from: error: argmax: a tie at 1 between 1200, 2500, 1500;")


def test_an_answer_read_from_real_data_warns(tmp_path: Path) -> None:
    from tests.toyspec import spec_copy

    spec = spec_copy()
    spec["x-kopa"]["real_data"] = True  # as if the fruit list were a real public master list
    write_project(tmp_path, spec)
    folder = tmp_path / "specs" / "tasks" / "finance"
    folder.mkdir(parents=True)
    (folder / "fin-001.yaml").write_text(yaml.safe_dump(BASE, allow_unicode=True, sort_keys=False), "utf-8")
    project = load_project(tmp_path)
    build(project)
    ensure_world(project.world)
    _, diags = compile_fixtures(project)
    (warning,) = [d.render() for d in diags.items if "real public master list" in d.message]
    assert warning.startswith(
        f"{FILE}:22: answer_from: warning: the answer is read from toy, which serves a real"
    )
    # the next build, from the kept fixture, says it again
    _, again = compile_fixtures(project)
    assert any("real public master list" in d.message for d in again.items)


# every page of the fruit list read, then 청사과 picked by name (the toy filters fruit by a part of the name)
PAGED: dict[str, Any] = {
    **BASE,
    "query": "청사과의 가격은?",
    "gold": [{"calls": [{"id": "fruit", "tool": "toy_list_fruits", "args": {}, "pages": "all"}]}],
    "answer_from": {"from": "fruit", "path": "rows[name=청사과].price"},
}


def test_the_shortcut_policy_passes_only_where_the_api_can_pick(tmp_path: Path) -> None:
    # the toy filters fruit by a part of the name: a task reading every page and then picking 청사과 by name is
    # answered by one filtered call; a maximum over a name search has no shortcut, and the policy does nothing
    project, found = compiled(tmp_path / "paged", PAGED)
    assert found == []
    assert play(project, "shortcut") == ("최종 답: 1500", 1)
    project, found = compiled(tmp_path / "none", BASE)
    assert found == []
    message, calls = play(project, "shortcut")
    assert calls == 0 and "1500" not in message


def test_a_paged_step_the_api_could_pick_in_one_page_is_a_warning_at_its_call(tmp_path: Path) -> None:
    # every page of the fruit list is read, then 청사과 is picked by name: the toy filters by name, so one filtered
    # page gives the same row and the step claims a cardinality it does not have
    project, found = compiled(tmp_path / "paged", PAGED)
    assert found == []
    _, diags = compile_fixtures(project)
    (warning,) = [d.render() for d in diags.items if "pages through" in d.message]
    assert warning.startswith(f"{FILE}:") and "gold.0.calls.0: warning:" in warning
    assert "'fruit'" in warning and "name=청사과" in warning
    # reading the maximum of every fruit needs every page: no warning
    whole = {
        **PAGED,
        "query": "가장 비싼 과일의 가격은?",
        "answer": {"kind": "number", "value": 2500, "unit": "원"},
        "answer_from": {"from": "fruit", "path": "max(rows[*].price)"},
    }
    project, found = compiled(tmp_path / "whole", whole)
    assert found == []
    _, diags = compile_fixtures(project)
    assert not [d for d in diags.items if "pages through" in d.message]
