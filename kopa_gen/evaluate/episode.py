"""Scoring one episode, the one function behind `kopa-gen eval`, `kopa-gen score` and the training reward.

The reward is binary: every axis listed in the task's `reward` (RESPONSE, ENVIRONMENT) must pass, and the agent
must have ended with a final message (an episode that stops silently has not finished, even when its files are
right). ACTION is computed for every episode and reported beside the reward, never part of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kopa_gen.evaluate.action import score_action
from kopa_gen.evaluate.response import ResponseVerdict, score_response
from kopa_gen.spec.task import Task


@dataclass(frozen=True)
class EpisodeScore:
    response: ResponseVerdict | None
    environment: bool | None
    action: dict[str, Any]
    reward: bool
    reason: str  # why the reward is what it is, in one sentence


def score_episode(
    task: Task,
    fixture: dict[str, Any],
    final_message: str,
    state_hash: str,
    calls: Sequence[Any],
    turns: Sequence[Sequence[int]],
    judged: bool | None = None,
) -> EpisodeScore:
    """`state_hash` is the session's hash over the fixture's `state_scope`; `judged` is an LLM judge's verdict,
    used only where the rules could not read the response (never against a rule's fail)."""
    response = None
    if "RESPONSE" in task.reward and task.answer is not None:
        pool = fixture.get("answer_pool") or []
        response = score_response(final_message, task.answer, task.system.today.year, pool)
        if not response.passed and not response.readable and judged is not None:
            response = response.model_copy(
                update={
                    "passed": judged,
                    "reason": f"{response.reason}; LLM judge said {'YES' if judged else 'NO'}",
                }
            )
    environment = state_hash == fixture["state_hash"] if "ENVIRONMENT" in task.reward else None
    action = action_score(fixture, calls, turns)
    answered = bool(final_message.strip())
    if not answered:
        reason = "no final message: the episode did not finish"
    elif response is not None and not response.passed:
        reason = f"RESPONSE: {response.reason}"
    elif environment is False:
        reason = "ENVIRONMENT: the state the task checks differs from the gold state"
    else:
        reason = "every axis of the reward passed"
    checks = [c for c in (response.passed if response else None, environment) if c is not None]
    return EpisodeScore(response, environment, action, answered and bool(checks) and all(checks), reason)


def action_score(
    fixture: dict[str, Any], calls: Sequence[Any], turns: Sequence[Sequence[int]]
) -> dict[str, Any]:
    score = score_action(fixture["steps"], calls, turns)
    return {"corr": score.corr, "cr": score.cr, "mpc": score.mpc, "eff": score.eff, "action": score.action}
