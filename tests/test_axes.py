"""The reward axes are registered plug-ins (kopa_gen/evaluate/axes.py) and score_episode asks them, not a copy of
their rules: the spec language's `Basis` and the registry's deciding axes agree, a task decides on exactly the axes
its `reward` lists (in a fixed order), ACTION never decides, and an axis registered twice is refused."""

from __future__ import annotations

from typing import Any, ClassVar, get_args

import pytest

from kopa_gen.evaluate.axes import AXES, Evidence
from kopa_gen.evaluate.episode import score_episode
from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.evaluate.submission import SUBMIT_TOOL
from kopa_gen.language.task import Basis, Task
from kopa_gen.plugins import DuplicateName
from kopa_gen.project import Project
from kopa_gen.runtime.session import CallRecord


def both_axes_task(project: Project) -> Task:
    """A benchmark task scored on RESPONSE and ENVIRONMENT with a number answer (read from the specs, the first)."""
    found = [
        t
        for _, t in project.tasks
        if set(t.reward) == set(get_args(Basis)) and t.answer is not None and t.answer.kind == "number"
    ]
    assert found, "no task with a number answer is scored on every axis of Basis"
    return found[0]


def submit(value: Any, unit: str | None = None) -> CallRecord:
    arguments = {"answer": value} if unit is None else {"answer": value, "unit": unit}
    return CallRecord(0, SUBMIT_TOOL, arguments, False, "", None, None, 0.0)


def gold_submission(task: Task, off: int = 0) -> CallRecord:
    """The gold number as a submission (`off` added: a wrong one)."""
    answer = task.answer
    assert answer is not None and answer.kind == "number"
    return submit(answer.value + off, answer.unit)


def test_basis_and_the_registry_name_the_same_deciding_axes() -> None:
    deciding = {name for name, axis in AXES.items().items() if axis.decides}
    assert deciding == set(get_args(Basis))
    assert "ACTION" in AXES and not AXES.get("ACTION").decides


def test_a_task_decides_on_the_registered_axes_it_lists(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = both_axes_task(project)
    fixture = load_fixture(project, task)
    calls = [gold_submission(task)]
    passed = score_episode(task, fixture, "", fixture["state_hash"], calls, [[0]])
    assert passed.reward and passed.response is not None and passed.environment is True, passed.reason

    wrong_state = score_episode(task, fixture, "", "0" * 64, calls, [[0]])
    assert not wrong_state.reward and wrong_state.reason.startswith("ENVIRONMENT")

    class Refuses:
        """A stand-in ENVIRONMENT plug-in that fails every episode: the verdict must come from the registry."""

        decides: ClassVar[bool] = True

        def score(self, ev: Evidence) -> bool:
            return False

    monkeypatch.setitem(AXES._items, "ENVIRONMENT", Refuses)
    refused = score_episode(task, fixture, "", fixture["state_hash"], calls, [[0]])
    assert not refused.reward and refused.environment is False
    assert refused.reason.startswith("ENVIRONMENT")

    # both fail: RESPONSE is said first, whatever order the task lists them in
    listed_backwards = task.model_copy(update={"reward": list(reversed(task.reward))})
    both = score_episode(
        listed_backwards, fixture, "", fixture["state_hash"], [gold_submission(task, 1)], [[0]]
    )
    assert not both.reward and both.reason.startswith("RESPONSE") and both.environment is False


def test_action_is_reported_and_never_decides(project: Project) -> None:
    task = both_axes_task(project)
    fixture = load_fixture(project, task)
    # no platform call at all: ACTION is low, the reward still follows RESPONSE and ENVIRONMENT alone
    score = score_episode(task, fixture, "", fixture["state_hash"], [gold_submission(task)], [[0]])
    assert score.action.corr < 1.0 and score.reward


def test_an_axis_registered_twice_is_refused() -> None:
    with pytest.raises(DuplicateName, match="RESPONSE"):
        AXES.register("RESPONSE")(type("Again", (), {"decides": True}))
