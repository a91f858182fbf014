"""The reference policies through the real runner: the oracle scores 1.0 everywhere; do-nothing, list-all
(every candidate), dump (pasted tool output) and no-lookup score 0; first-page passes only tasks whose gold reads
every list in one page. None of them reads a gold value."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.evaluate.runner import EvalConfig, load_fixture, run_eval
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.language.task import ANSWER_MODES, AnswerMode, Task
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld


def task_of(project: Project, task_id: str) -> Task:
    return next(t for _, t in project.tasks if t.id == task_id)


def run(
    project: Project, name: str, out: Path, rollouts: int = 1, mode: AnswerMode = "submit"
) -> list[dict[str, Any]]:
    config = EvalConfig(policy=name, out=out, rollouts=rollouts, concurrency=4, answer_mode=mode)
    return asyncio.run(run_eval(project, config))


Runs = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="module")
def runs(project: Project, world: BuiltWorld, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """One run per policy and answer mode for the whole module: a run is deterministic (tested below, with runs
    of their own), so the tests that only read a run's records share it."""
    done: dict[tuple[str, str], list[dict[str, Any]]] = {}
    base = tmp_path_factory.mktemp("runs")

    def get(name: str, mode: AnswerMode = "submit") -> list[dict[str, Any]]:
        if (name, mode) not in done:
            done[name, mode] = run(project, name, base / f"{name}-{mode}", mode=mode)
        return done[name, mode]

    return get


def test_oracle_scores_one_on_every_task(project: Project, runs: Runs) -> None:
    records = runs("oracle")
    assert len(records) == len(project.tasks)
    failed = [(r["task"], r["response"], r["environment"]) for r in records if not r["reward"]]
    assert failed == []
    assert all(r["action"]["action"] == 1.0 for r in records)


def test_do_nothing_scores_zero_on_every_task(runs: Runs) -> None:
    records = runs("do-nothing")
    assert [r["task"] for r in records if r["reward"]] == []
    assert all(r["calls"] == [] for r in records)
    assert all(r["action"]["action"] == 0.0 for r in records), "no calls, no ACTION credit"


@pytest.mark.parametrize("mode", ANSWER_MODES)
@pytest.mark.parametrize("name", ["list-all", "all-candidates", "dump"])
def test_answers_that_do_not_commit_score_zero(
    project: Project, runs: Runs, name: str, mode: AnswerMode
) -> None:
    """list-all names every candidate it saw, all-candidates every candidate of every step, dump pastes its
    tool results; all made every gold call, in both answer modes."""
    records = runs(name, mode)
    assert [r["task"] for r in records if r["reward"]] == []
    for r in records:  # every read was right (their writes carry what they answer): only the answers fail
        units = [
            u for step in load_fixture(project, task_of(project, r["task"])).get("steps", []) for u in step
        ]
        logical = {u["key"].split("@")[0]: u for u in units}.values()
        reads = [
            u for u in logical if project.platform_of(u["tool"]).operation(u["tool"]).kopa.effect == "read"
        ]
        assert r["action"]["corr"] >= len(reads) / len(logical), r["task"]
    if name != "dump" and mode == "submit":
        reasons = {r["response"]["reason"] for r in records if r["response"]}
        assert all("answers were submitted" in why or "states" in why for why in reasons), reasons


@pytest.mark.parametrize("name", ["first-row", "last-row", "pool-guess"])
def test_guessers_score_about_what_their_pool_gives(runs: Runs, name: str) -> None:
    """They make the chain's calls but choose their own candidate: each passes only tasks where its choice is the
    gold's (a small pool gives it away); the oracle's own choice always passes."""
    records = runs(name)
    oracle = {r["task"]: r for r in runs("oracle")}
    assert sum(bool(r["reward"]) for r in records) < len(records)
    for r in records:
        if r["reward"] and oracle[r["task"]]["response"] is not None:
            assert r["response"]["extracted"] == oracle[r["task"]]["response"]["extracted"], r["task"]


def test_no_lookup_scores_at_most_five_percent(runs: Runs) -> None:
    records = runs("no-lookup")
    assert sum(bool(r["reward"]) for r in records) / len(records) <= 0.05


def test_first_page_passes_only_what_one_page_answers(project: Project, runs: Runs) -> None:
    records = runs("first-page")
    passed = {r["task"] for r in records if r["reward"]}
    assert passed != {t.id for _, t in project.tasks}
    for task_id in passed:
        fixture = load_fixture(project, task_of(project, task_id))
        later_pages = [
            u["key"]
            for step in fixture["steps"]
            for u in step
            if "@" in u["key"] and not u["key"].endswith("@1")
        ]
        assert later_pages == [], f"{task_id} passed without reading {later_pages}"


def test_runs_resume_without_redoing_episodes(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    first = run(project, "oracle", tmp_path, rollouts=2)
    episodes = tmp_path / "episodes.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines()
    episodes.write_text(
        "\n".join(lines[:-1]) + "\n", encoding="utf-8"
    )  # as if it died before its last episode
    again = run(project, "oracle", tmp_path, rollouts=2)
    assert len(again) == 2 * len(project.tasks)
    keys = [json.loads(line)["key"] for line in episodes.read_text(encoding="utf-8").splitlines()]
    assert len(keys) == len(set(keys)) == 2 * len(project.tasks)
    assert keys[0] == first[0]["key"]


def test_no_lookup_skips_the_lookup_and_sends_the_documented_example(project: Project, runs: Runs) -> None:
    records = {r["task"]: r for r in runs("no-lookup")}
    first = records["fin-001"]
    assert first["reward"] is False
    assert all(c["tool"] != "dart_corp_code" for c in first["calls"])
    example = project.platform("dart").kopa.examples["corp_code"][0]
    assert first["calls"][0]["arguments"]["corp_code"] == example


def test_report_renders_runs_side_by_side(project: Project, runs: Runs) -> None:
    from kopa_gen.evaluate.report import render_report

    oracle = runs("oracle")
    nothing = runs("do-nothing")
    report = render_report({"oracle": oracle, "do-nothing": nothing}, k=1)
    md, html = report.md, report.html
    assert "## oracle" in md and "## do-nothing" in md
    assert f"| all | {len(project.tasks)} | {len(project.tasks)} | {len(project.tasks)} | 1.0000 |" in md
    assert "| no calls |" in md
    # comparison: pass@1 and ACTION by domain, pass@k curves; one outcome chart per run
    assert html.count("<svg") == 3 + 2
    # one task table with both runs side by side, and one transcript page per run and task
    assert html.count("<tr data-task=") == len(project.tasks)
    assert len(report.pages) == 2 * len(project.tasks)


def outcome(records: list[dict[str, object]]) -> list[tuple[object, ...]]:
    keep = ("key", "reward", "stop_reason", "final_message", "state_hash")
    return sorted(
        (*(r[k] for k in keep), str(r["action"]), str(r["response"]), str(r["environment"])) for r in records
    )


def test_interrupted_and_resumed_run_equals_an_uninterrupted_one(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    whole = run(project, "no-lookup", tmp_path / "whole", rollouts=2)
    part = tmp_path / "part"
    shutil.copytree(tmp_path / "whole", part)  # the same run, then cut in half as if it had died there
    episodes = part / "episodes.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines()
    episodes.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    resumed = run(project, "no-lookup", part, rollouts=2)
    assert outcome(resumed) == outcome(whole)


def test_same_seed_same_scores(project: Project, runs: Runs, tmp_path: Path) -> None:
    first = runs("first-page")
    second = run(project, "first-page", tmp_path / "b", rollouts=1)
    assert outcome(first) == outcome(second)


def test_llm_judge_fallback_over_loopback(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    """The judge is asked only where the rules found no match, and only decides RESPONSE."""
    from kopa_gen.policies.double import ChatDouble, Reply

    both = next(t.id for _, t in project.tasks if set(t.reward) == {"RESPONSE", "ENVIRONMENT"})
    tasks = ["fin-001", both]  # RESPONSE only / RESPONSE + ENVIRONMENT
    with ChatDouble([Reply(content="YES"), Reply(content="YES")]) as double:
        judge = EndpointSettings(
            base_url=double.base_url, model="judge-double", api_key_env="KOPA_TEST_NO_KEY"
        )
        config = EvalConfig(
            policy="do-nothing", out=tmp_path / "j", rollouts=1, tasks=tasks, judge=judge, answer_mode="text"
        )
        records = {r["task"]: r for r in asyncio.run(run_eval(project, config))}
        asked = len(double.requests)
    assert asked == 2
    assert (
        records["fin-001"]["reward"] is True
        and "LLM judge said YES" in records["fin-001"]["response"]["reason"]
    )
    assert records[both]["reward"] is False, "the judge never passes a wrong workspace state"
    with ChatDouble([]) as silent:
        judge = EndpointSettings(
            base_url=silent.base_url, model="judge-double", api_key_env="KOPA_TEST_NO_KEY"
        )
        config = EvalConfig(
            policy="oracle", out=tmp_path / "o", rollouts=1, tasks=tasks, judge=judge, answer_mode="text"
        )
        assert all(r["reward"] for r in asyncio.run(run_eval(project, config)))
        assert silent.requests == [], "no judge call when the rules already match"
        # a wrong answer the rules could read is a fail the judge cannot override: it is not even asked
        config = EvalConfig(
            policy="list-all", out=tmp_path / "l", rollouts=1, tasks=tasks, judge=judge, answer_mode="text"
        )
        assert not any(r["reward"] for r in asyncio.run(run_eval(project, config)))
        assert silent.requests == []


def test_closed_book_asks_the_endpoint_without_tools(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    """What a model knows without the APIs: one request, no tools, scored like any answer."""
    from kopa_gen.policies.double import ChatDouble, Reply

    with ChatDouble([Reply(content="정답: 1,446원")]) as double:
        endpoint = EndpointSettings(base_url=double.base_url, model="memory", api_key_env="KOPA_TEST_NO_KEY")
        config = EvalConfig(
            policy="closed-book", out=tmp_path, rollouts=1, tasks=["fin-003"], endpoint=endpoint
        )
        (record,) = asyncio.run(run_eval(project, config))
        (body,) = double.bodies
    assert "tools" not in body and record["calls"] == []
    assert "도구는 없습니다" in body["messages"][0]["content"]
    assert record["final_message"] == "정답: 1,446원" and record["reward"] is False
