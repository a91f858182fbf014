"""The reference policies through the real runner: the oracle scores 1.0 everywhere, do-nothing scores 0
everywhere, and the failure-mode baselines fail where their failure mode matters."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.project import Project
from kopa_gen.world.build import BuiltWorld


def run(project: Project, name: str, out: Path, rollouts: int = 1) -> list[dict[str, object]]:
    return asyncio.run(run_eval(project, EvalConfig(policy=name, out=out, rollouts=rollouts, concurrency=4)))


def test_oracle_scores_one_on_every_task(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    records = run(project, "oracle", tmp_path)
    assert len(records) == len(project.tasks)
    failed = [(r["task"], r["response"], r["environment"]) for r in records if not r["reward"]]
    assert failed == []
    assert all(r["action"]["action"] == 1.0 for r in records)


def test_do_nothing_scores_zero_on_every_task(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    records = run(project, "do-nothing", tmp_path)
    assert [r["task"] for r in records if r["reward"]] == []
    assert all(r["calls"] == [] for r in records)
    assert all(r["action"]["action"] == 0.0 for r in records), "no calls, no ACTION credit"


def test_runs_resume_without_redoing_episodes(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    first = run(project, "oracle", tmp_path, rollouts=1)
    episodes = tmp_path / "episodes.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines()
    episodes.write_text("\n".join(lines[:1]) + "\n", encoding="utf-8")  # as if the run died after one episode
    again = run(project, "oracle", tmp_path, rollouts=2)
    assert len(again) == 2 * len(project.tasks)
    keys = [json.loads(line)["key"] for line in episodes.read_text(encoding="utf-8").splitlines()]
    assert len(keys) == len(set(keys)) == 2 * len(project.tasks)
    assert keys[0] == first[0]["key"]


def test_no_lookup_fails_chains_that_start_with_a_lookup(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    records = {r["task"]: r for r in run(project, "no-lookup", tmp_path)}
    assert records["fin-001"]["reward"] is False
    assert all(c["tool"] != "dart_corp_code" for c in records["fin-001"]["calls"])


def test_report_renders_runs_side_by_side(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    from kopa_gen.evaluate.report import render_report

    oracle = run(project, "oracle", tmp_path / "oracle")
    nothing = run(project, "do-nothing", tmp_path / "nothing")
    md, html = render_report({"oracle": oracle, "do-nothing": nothing}, k=1)
    assert "## oracle" in md and "## do-nothing" in md
    assert f"| all | {len(project.tasks)} | {len(project.tasks)} | {len(project.tasks)} | 1.0000 |" in md
    assert "| no calls |" in md
    assert html.count("<svg") == 8 and "<script" not in html


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
    run(project, "no-lookup", part, rollouts=2)
    episodes = part / "episodes.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines()
    episodes.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    resumed = run(project, "no-lookup", part, rollouts=2)
    assert outcome(resumed) == outcome(whole)


def test_same_seed_same_scores(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    first = run(project, "first-page", tmp_path / "a", rollouts=1)
    second = run(project, "first-page", tmp_path / "b", rollouts=1)
    assert outcome(first) == outcome(second)


def test_failure_mode_baselines_score_well_below_the_oracle(
    project: Project, world: BuiltWorld, tmp_path: Path
) -> None:
    def pass_rate(name: str) -> float:
        records = run(project, name, tmp_path / name)
        return sum(bool(r["reward"]) for r in records) / len(records)

    assert pass_rate("oracle") == 1.0
    assert pass_rate("no-lookup") < 0.5, "guessing codes must fail most chains"
    assert pass_rate("first-page") < 0.85, "never paging must fail the paging tasks"


def test_llm_judge_fallback_over_loopback(project: Project, world: BuiltWorld, tmp_path: Path) -> None:
    """The judge is asked only where the rules found no match, and only decides RESPONSE."""
    from kopa_gen.policies.double import ChatDouble, Reply

    tasks = ["fin-001", "dis-001"]  # RESPONSE only / RESPONSE + ENVIRONMENT
    with ChatDouble([Reply(content="YES"), Reply(content="YES")]) as double:
        judge = {"base_url": double.base_url, "model": "judge-double", "api_key_env": "KOPA_TEST_NO_KEY"}
        config = EvalConfig(policy="do-nothing", out=tmp_path / "j", rollouts=1, tasks=tasks, judge=judge)
        records = {r["task"]: r for r in asyncio.run(run_eval(project, config))}
        asked = len(double.requests)
    assert asked == 2
    assert (
        records["fin-001"]["reward"] is True
        and "LLM judge said YES" in records["fin-001"]["response"]["reason"]
    )
    assert records["dis-001"]["reward"] is False, "the judge never passes a wrong workspace state"
    with ChatDouble([]) as silent:
        judge = {"base_url": silent.base_url, "model": "judge-double", "api_key_env": "KOPA_TEST_NO_KEY"}
        config = EvalConfig(policy="oracle", out=tmp_path / "o", rollouts=1, tasks=tasks, judge=judge)
        assert all(r["reward"] for r in asyncio.run(run_eval(project, config)))
        assert silent.requests == [], "no judge call when the rules already match"
