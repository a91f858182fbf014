"""Scoring one episode, the one function behind `kopa-gen eval`, `kopa-gen score` and the training reward.

The reward is binary: every axis listed in the task's `reward` (RESPONSE, ENVIRONMENT) must pass, and the agent
must have ended with a final message (an episode that stops silently has not finished, even when its files are
right). ACTION is computed for every episode and reported beside the reward, never part of it. The axes themselves
are registered plug-ins (kopa_gen/evaluate/axes.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, get_args

from kopa_gen.evaluate.axes import AXES, Evidence, verdict
from kopa_gen.evaluate.response import ResponseVerdict
from kopa_gen.evaluate.submission import SUBMIT_TOOL, SubmissionError, read_submission
from kopa_gen.evaluate.typed import Stated
from kopa_gen.language.records import ActionParts
from kopa_gen.language.task import AnswerMode, Basis, Task


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
    mode the episode finished when it submitted; in text mode when it ended with a final message. Each axis is
    the registered one (kopa_gen/evaluate/axes.py): those in the task's `reward` decide, ACTION is reported."""
    submitted = submissions(task, calls)
    ev = Evidence(task, fixture, final_message, state_hash, calls, turns, submitted, mode, judged, judge)
    # in the spec language's order (RESPONSE before ENVIRONMENT), whatever order the task lists them in
    scores = {name: AXES.get(name)().score(ev) for name in get_args(Basis) if name in task.reward}
    failed = next((name for name in scores if scores[name] is not None and not verdict(scores[name])), None)
    response: ResponseVerdict | None = scores.get("RESPONSE")
    environment: bool | None = scores.get("ENVIRONMENT")
    action: ActionParts = AXES.get("ACTION")().score(ev)
    finished = bool(submitted) if mode == "submit" else bool(final_message.strip())
    if not finished:
        reason = (
            f"no {SUBMIT_TOOL} call: the episode did not commit to an answer"
            if mode == "submit"
            else "no final message: the episode did not finish"
        )
    elif failed == "ENVIRONMENT":
        reason = "ENVIRONMENT: the state the task checks differs from the gold state"
    elif failed is not None:
        reason = f"{failed}: {getattr(scores[failed], 'reason', 'failed')}"
    else:
        reason = "every axis of the reward passed"
    decided = [s for s in scores.values() if s is not None]
    return EpisodeScore(response, environment, action, finished and bool(decided) and failed is None, reason)
