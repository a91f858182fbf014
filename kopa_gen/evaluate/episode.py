"""Scoring one episode on the task's axes. The reward is binary: every RESPONSE and ENVIRONMENT check the task
is scored on must pass; ACTION is reported beside it, never alone. The same function serves `kopa-gen eval`
and, later, the training reward."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kopa_gen.evaluate.response import ResponseVerdict, score_response
from kopa_gen.spec.task import Task


@dataclass(frozen=True)
class EpisodeScore:
    response: ResponseVerdict | None
    environment: bool | None
    action: dict[str, Any]
    reward: bool


def score_episode(
    task: Task,
    fixture: dict[str, Any],
    final_message: str,
    state_hash: str,
    calls: Sequence[Any],
    turns: Sequence[Sequence[int]],
    judged: bool | None = None,
) -> EpisodeScore:
    """`judged` is the LLM judge's verdict on the response, used only where the rules found no match."""
    response = None
    if "RESPONSE" in task.reward and task.answer is not None:
        response = score_response(final_message, task.answer, task.system.today.year)
        if not response.passed and judged is not None:
            response = response.model_copy(
                update={
                    "passed": judged,
                    "reason": f"{response.reason}; LLM judge said {'YES' if judged else 'NO'}",
                }
            )
    environment = state_hash == fixture["state_hash"] if "ENVIRONMENT" in task.reward else None
    action = action_score(task, fixture, calls, turns)  # reported for every episode, beside the reward
    checks = [c for c in (response.passed if response else None, environment) if c is not None]
    return EpisodeScore(response, environment, action, bool(checks) and all(checks))


def action_score(
    task: Task, fixture: dict[str, Any], calls: Sequence[Any], turns: Sequence[Sequence[int]]
) -> dict[str, Any]:
    from kopa_gen.evaluate.action import score_action

    compared = {c.id: c.compare for c in task.calls() if c.compare is not None}
    score = score_action(fixture["steps"], compared or None, calls, turns)
    return {"corr": score.corr, "cr": score.cr, "mpc": score.mpc, "eff": score.eff, "action": score.action}
