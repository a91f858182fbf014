"""The reward axes, one registered plug-in each: what an episode is scored on.

An axis reads one finished episode (`Evidence`) and gives its verdict. The axes a task lists in its `reward`
(`Basis` in kopa_gen/language/task.py: RESPONSE, ENVIRONMENT) decide pass/fail and the training reward; the others
(ACTION) are reported for every episode and never decide.

    @AXES.register("ENVIRONMENT")
    class Environment:
        decides = True
        def score(self, ev: Evidence) -> bool: ...

    AXES.get("ENVIRONMENT")().score(evidence)

A new deciding axis is a class here (or in any module that registers with `AXES`) and its name in `Basis`, so that
task files may list it; tests/test_axes.py checks that the two agree. `score_episode` (kopa_gen/evaluate/episode.py)
asks each axis in turn; `verdict` says whether an axis's score passed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from kopa_gen.evaluate.action import score_action
from kopa_gen.evaluate.response import ResponseVerdict, score_submitted, score_text
from kopa_gen.evaluate.submission import SUBMIT_TOOL
from kopa_gen.evaluate.typed import Stated
from kopa_gen.language.records import ActionParts
from kopa_gen.language.task import AnswerMode, Task
from kopa_gen.mcp.search import SEARCH_TOOL
from kopa_gen.plugins import Registry


@dataclass(frozen=True)
class Evidence:
    """What an axis may read of one finished episode: the task, its gold fixture, the final message, the hash of
    the state the task checks, the call log and its turns, the valid submissions, and (text mode) an LLM judge's
    verdict with its name."""

    task: Task
    fixture: dict[str, Any]
    final_message: str
    state_hash: str
    calls: Sequence[Any]
    turns: Sequence[Sequence[int]]
    submitted: Sequence[Stated]
    mode: AnswerMode = "submit"
    judged: bool | None = None
    judge: str | None = None


class Axis(Protocol):
    decides: ClassVar[bool]
    """True: the axis decides pass/fail where a task lists it in `reward`; False: reported only."""

    def score(self, ev: Evidence) -> Any:
        """The axis's score of one episode (a verdict record, a bool, or parts)."""
        ...


AXES: Registry[type[Axis]] = Registry("reward axis", hint="register it in kopa_gen/evaluate/axes.py")


def verdict(score: Any) -> bool:
    """Whether a deciding axis's score passed: a bool, or a record with `passed`."""
    return bool(score) if isinstance(score, bool) else bool(score.passed)


@AXES.register("RESPONSE")
class Response:
    """The answer the episode committed to, graded by type against the gold (submit mode: the submitted value;
    text mode: the final message, with the judge only where the rules cannot read it, never against a rule's
    fail)."""

    decides: ClassVar[bool] = True

    def score(self, ev: Evidence) -> ResponseVerdict | None:
        answer = ev.task.answer
        if answer is None:
            return None
        pool = ev.fixture.get("answer_pool") or []
        if ev.mode == "submit":
            return score_submitted(answer, ev.submitted, pool)
        found = score_text(ev.final_message, answer, ev.task.system.today.year, pool, ev.task.query)
        if found.passed or found.readable or ev.judged is None:
            return found
        return found.model_copy(
            update={
                "passed": ev.judged,
                "reason": f"{found.reason}; LLM judge said {'YES' if ev.judged else 'NO'}",
                "decided_by": "judge",
                "judge": ev.judge,
            }
        )


@AXES.register("ENVIRONMENT")
class Environment:
    """The state the task checks (the rows its gold writes) equals the gold's, by canonical hash."""

    decides: ClassVar[bool] = True

    def score(self, ev: Evidence) -> bool:
        return bool(ev.state_hash == ev.fixture["state_hash"])


@AXES.register("ACTION")
class Action:
    """The paper's (Corr + Eff)/2 over the calls made: reported for every episode, never deciding. A submission
    is the answer, not a call of the chain: ACTION never sees it (a malformed one it does). Nor a search
    (`search_tools` in search mode): finding a tool is not a call of the chain, so the modes compare."""

    decides: ClassVar[bool] = False

    def score(self, ev: Evidence) -> ActionParts:
        calls = [c for c in ev.calls if c.tool not in (SUBMIT_TOOL, SEARCH_TOOL) or c.is_error]
        parts = score_action(ev.fixture["steps"], calls, ev.turns, ev.fixture.get("calls"))
        return ActionParts.model_validate(parts, from_attributes=True)  # its fields, less the matched pairs
