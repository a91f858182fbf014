"""Scoring one episode, the one function behind `kopa-gen eval`, `kopa-gen score` and the training reward.

The reward is binary: every axis listed in the task's `reward` (RESPONSE, ENVIRONMENT) must pass, and the agent
must have ended with a final message (an episode that stops silently has not finished, even when its files are
right). ACTION is computed for every episode and reported beside the reward, never part of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kopa_gen.evaluate.action import score_action
from kopa_gen.evaluate.response import ResponseVerdict, score_submitted, score_text
from kopa_gen.evaluate.submission import SUBMIT_TOOL, SubmissionError, read_submission
from kopa_gen.evaluate.typed import Stated
from kopa_gen.language.records import ActionParts
from kopa_gen.language.task import AnswerMode, Task


@dataclass(frozen=True)
class EpisodeScore:
    response: ResponseVerdict | None
    environment: bool | None
    action: ActionParts
    reward: bool
    reason: str  # why the reward is what it is, in one sentence


def submissions(task: Task, calls: Sequence[Any]) -> list[Stated]:
    """The episode's submissions: its valid `submit_answer` calls, read again from the call log (so the eval, the
    probe and the training reward read them alike)."""
    out: list[Stated] = []
    for call in calls:
        if call.tool == SUBMIT_TOOL and not call.is_error:
            try:
                out.append(read_submission(task.answer, call.arguments))
            except SubmissionError:  # a log not written by a session; a session never records these as valid
                continue
    return out


def score_episode(
    task: Task,
    fixture: dict[str, Any],
    final_message: str,
    state_hash: str,
    calls: Sequence[Any],
    turns: Sequence[Sequence[int]],
    judged: bool | None = None,
    mode: AnswerMode = "submit",
    judge: str | None = None,
) -> EpisodeScore:
    """`state_hash` is the session's hash over the fixture's `state_scope`; `judged` is an LLM judge's verdict,
    used in text mode only where the rules could not read the response (never against a rule's fail), and
    `judge` names it (rubric version and model) in the verdict. In submit
    mode the episode finished when it submitted; in text mode when it ended with a final message."""
    submitted = submissions(task, calls)
    response = None
    if "RESPONSE" in task.reward and task.answer is not None:
        pool = fixture.get("answer_pool") or []
        if mode == "submit":
            response = score_submitted(task.answer, submitted, pool)
        else:
            response = score_text(final_message, task.answer, task.system.today.year, pool, task.query)
            if not response.passed and not response.readable and judged is not None:
                response = response.model_copy(
                    update={
                        "passed": judged,
                        "reason": f"{response.reason}; LLM judge said {'YES' if judged else 'NO'}",
                        "decided_by": "judge",
                        "judge": judge,
                    }
                )
    environment = state_hash == fixture["state_hash"] if "ENVIRONMENT" in task.reward else None
    action = action_score(fixture, calls, turns)
    finished = bool(submitted) if mode == "submit" else bool(final_message.strip())
    if not finished:
        reason = (
            f"no {SUBMIT_TOOL} call: the episode did not commit to an answer"
            if mode == "submit"
            else "no final message: the episode did not finish"
        )
    elif response is not None and not response.passed:
        reason = f"RESPONSE: {response.reason}"
    elif environment is False:
        reason = "ENVIRONMENT: the state the task checks differs from the gold state"
    else:
        reason = "every axis of the reward passed"
    checks = [c for c in (response.passed if response else None, environment) if c is not None]
    return EpisodeScore(response, environment, action, finished and bool(checks) and all(checks), reason)


def action_score(
    fixture: dict[str, Any], calls: Sequence[Any], turns: Sequence[Sequence[int]]
) -> ActionParts:
    # a submission is the answer, not a tool call of the chain: ACTION never sees it (a malformed one it does)
    calls = [c for c in calls if c.tool != SUBMIT_TOOL or c.is_error]
    score = score_action(fixture["steps"], calls, turns, fixture.get("calls"))
    return ActionParts(
        corr=score.corr,
        cr=score.cr,
        mpc=score.mpc,
        eff=score.eff,
        action=score.action,
        action_gated=score.action_gated,
    )
