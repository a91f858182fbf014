"""The RL reward (kopa_gen.train.reward) scores exactly as `kopa-gen eval` does: for every benchmark task and
every reference policy, compute_score over the episode (passed through the contract's JSON encodings, as the
agent loop and the parquet rows carry it) equals the eval record's reward. verl-free."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.evaluate.runner import EvalConfig, load_fixture, run_episode
from kopa_gen.language.task import AnswerMode, Task
from kopa_gen.project import Project
from kopa_gen.train import contract
from kopa_gen.train.reward import compute_score
from kopa_gen.world.build import BuiltWorld

# (policy, answer mode) played by `kopa-gen eval`; the reward must agree in both modes
PLAYS = (
    ("oracle", "submit"),
    ("do-nothing", "submit"),
    ("no-lookup", "submit"),
    ("first-page", "submit"),
    ("oracle", "text"),
    ("first-page", "text"),
)
Episodes = dict[str, list[tuple[Task, dict[str, Any], dict[str, Any]]]]


def extra_info(record: dict[str, Any], task: Task, fixture: dict[str, Any]) -> dict[str, Any]:
    """The row's extra_info as the reward reads it: the row's index and episode spec (which names the answer
    mode the episode was played in), then what the agent loop leaves in extra_fields."""
    spec = contract.episode_spec(task, fixture, mode=record["answer_mode"])
    return {"index": 0, "episode": spec, **contract.fields_of_record(record)}


async def play(
    project: Project, policy: str, mode: AnswerMode, out: Path
) -> list[tuple[Task, dict[str, Any], dict[str, Any]]]:
    config = EvalConfig(policy=policy, out=out, rollouts=1, answer_mode=mode)
    jobs = [(task, load_fixture(project, task)) for _, task in project.tasks]
    gate = asyncio.Semaphore(8)

    async def one(task: Task, fixture: dict[str, Any]) -> tuple[Task, dict[str, Any], dict[str, Any]]:
        async with gate:
            record = await run_episode(project, config, task, fixture, 0, 0)
            return task, fixture, {**record, "answer_mode": mode}

    return list(await asyncio.gather(*(one(t, f) for t, f in jobs)))


@pytest.fixture(scope="module")
def episodes(project: Project, world: BuiltWorld, tmp_path_factory: pytest.TempPathFactory) -> Episodes:
    out = tmp_path_factory.mktemp("eval")
    return {f"{p}/{m}": asyncio.run(play(project, p, m, out / f"{p}-{m}")) for p, m in PLAYS}


def score(task: Task, fixture: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    return compute_score(contract.data_source("bench"), "", contract.ground_truth(task, fixture), info)


@pytest.mark.parametrize("policy", [f"{p}/{m}" for p, m in PLAYS])
def test_reward_agrees_with_eval_on_every_task(episodes: Episodes, policy: str) -> None:
    disagree = []
    for task, fixture, record in episodes[policy]:
        got = score(task, fixture, extra_info(record, task, fixture))
        if got["score"] != float(record["reward"]) or got["action"] != record["action"]["action"]:
            disagree.append((task.id, got, record["reward"], record["action"]))
    assert disagree == []
    assert len(episodes[policy]) == len(episodes["oracle/submit"]) > 0


def test_oracle_is_one_do_nothing_is_zero(
    episodes: Episodes,
) -> None:
    for mode in ("submit", "text"):
        oracle = episodes[f"oracle/{mode}"]
        assert [t.id for t, f, r in oracle if score(t, f, extra_info(r, t, f))["score"] != 1.0] == []
    assert all(score(t, f, extra_info(r, t, f))["score"] == 0.0 for t, f, r in episodes["do-nothing/submit"])
    # the baselines fail somewhere, so the agreement above is not only about ones
    assert any(score(t, f, extra_info(r, t, f))["score"] == 0.0 for t, f, r in episodes["no-lookup/submit"])


def oracle_with(episodes: Episodes, axis: str) -> tuple[Task, dict[str, Any], dict[str, Any]]:
    return next((t, f, r) for t, f, r in episodes["oracle/text"] if axis in t.reward and t.answer is not None)


def test_wrong_answer_scores_zero(
    episodes: Episodes,
) -> None:
    task, fixture, record = oracle_with(episodes, "RESPONSE")
    info = extra_info(record, task, fixture)
    assert score(task, fixture, info)["score"] == 1.0
    info[contract.FINAL_MESSAGE] = "정답: 알 수 없습니다."
    got = score(task, fixture, info)
    assert got["score"] == 0.0 and got["response"] == 0.0 and got["reason"]


def test_wrong_state_scores_zero(
    episodes: Episodes,
) -> None:
    task, fixture, record = next(
        (t, f, r) for t, f, r in episodes["oracle/text"] if "ENVIRONMENT" in t.reward
    )
    info = extra_info(record, task, fixture)
    assert score(task, fixture, info)["score"] == 1.0
    info[contract.STATE_HASH] = "0" * 64
    got = score(task, fixture, info)
    assert got["score"] == 0.0 and got["environment"] == 0.0


def test_missing_or_broken_fields_score_zero_with_a_reason(
    episodes: Episodes,
) -> None:
    task, fixture, record = episodes["oracle/submit"][0]
    gt = contract.ground_truth(task, fixture)
    keys = {
        "score",
        "response",
        "environment",
        "action",
        "action_gated",
        "corr",
        "cr",
        "mpc",
        "eff",
        "reason",
    }
    for info in (None, {}, {"index": 3}):
        got = compute_score("kopa/bench", "정답: 1", gt, info)
        assert got["score"] == 0.0 and "kopa_final_message" in got["reason"] and set(got) == keys
    broken = extra_info(record, task, fixture) | {contract.CALLS: "[{"}
    got = compute_score("kopa/bench", "", gt, broken)
    assert got["score"] == 0.0 and "cannot decode" in got["reason"] and set(got) == keys
    assert set(score(task, fixture, extra_info(record, task, fixture))) == keys
