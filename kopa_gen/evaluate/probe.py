"""`kopa-gen score TASK --answer TEXT | --submit JSON [--calls FILE]`: score one candidate final message (text mode)
or `submit_answer` call (submit mode), and optionally a call log, for one task, exactly as `kopa-gen eval` would,
so reviewers can probe the grader.

The call log is replayed in a fresh sandbox session (the task's platforms, budget and exposed tools), so ACTION
sees real results (pages, errors) and ENVIRONMENT the state those calls leave. Accepted forms: a JSON list of
calls `[{"tool": ..., "arguments": {...}}, ...]`, an object with `calls` (and optionally `turns`, the indices each
model turn issued together; default: one turn per call), such as a line of a run's episodes.jsonl, or JSON Lines
of calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.episode import score_episode
from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.evaluate.submission import SUBMIT_TOOL, SubmitChannel
from kopa_gen.language.diagnostics import UserError
from kopa_gen.language.task import AnswerMode, Task
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig


class ProbeError(UserError):
    """A task or call log that cannot be scored; the message is one line saying why."""


def find_task(project: Project, task_id: str) -> Task:
    for _, task in project.tasks:
        if task.id == task_id:
            return task
    known = ", ".join(t.id for _, t in project.tasks)
    raise ProbeError(f"unknown task {task_id!r}; known: {known}")


def read_calls(path: Path) -> tuple[list[dict[str, Any]], list[list[int]] | None]:
    """(calls, turns) from a call-log file; ProbeError naming the file and the problem otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProbeError(f"cannot read call log {path}: {exc.strerror or exc}") from None
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ProbeError(
                f"call log {path} is neither JSON nor JSON Lines (line {exc.lineno}: {exc.msg})"
            ) from None
    turns = None
    if isinstance(data, dict):
        turns = data.get("turns")
        data = data.get("calls")
    if not isinstance(data, list) or not all(
        isinstance(c, dict) and isinstance(c.get("tool"), str) for c in data
    ):
        raise ProbeError(
            f'call log {path} must hold a list of calls like [{{"tool": "...", "arguments": {{...}}}}] '
            "(or an object with `calls`)"
        )
    if turns is not None and not (
        isinstance(turns, list)
        and all(isinstance(t, list) and all(isinstance(i, int) for i in t) for t in turns)
    ):
        raise ProbeError(f"call log {path}: `turns` must be a list of lists of call indices")
    return data, turns


async def probe(
    project: Project,
    task_id: str,
    answer: str | None,
    calls_file: Path | None = None,
    seed: int = 0,
    submits: list[Any] | None = None,
) -> dict[str, Any]:
    """The three axes, the reward and their reasons for one candidate, as a JSON-ready dict: a prose reply
    (`answer`, text mode) or `submit_answer` arguments (`submits`, submit mode; each one call, in order, after the
    replayed calls)."""
    task = find_task(project, task_id)
    try:
        fixture = load_fixture(project, task)
    except KeyError as exc:
        raise ProbeError(str(exc.args[0])) from None
    calls, turns = read_calls(calls_file) if calls_file is not None else ([], None)
    mode: AnswerMode = "text" if submits is None else "submit"
    scope = fixture.get("state_scope") or []
    async with Session.open(
        project,
        fixture["platforms"],
        max_calls=task.max_calls,
        tools=task.tools,
        sandbox=SandboxConfig(seed=seed),
        channel=SubmitChannel(task.answer) if mode == "submit" else None,
    ) as session:
        for call in calls:
            await session.call(call["tool"], call.get("arguments", call.get("args")))
        for arguments in submits or []:
            await session.call(SUBMIT_TOOL, arguments)
        written, state = session.state(scope)
        log = list(session.calls)
    score = score_episode(
        task,
        fixture,
        answer or "",
        state,
        log,
        turns if turns is not None else [[c.index] for c in log],
        mode=mode,
    )
    return {
        "task": task.id,
        "mode": mode,
        "reward": score.reward,
        "reason": score.reason,
        "response": score.response.model_dump() if score.response is not None else None,
        "environment": score.environment,
        "state": written,
        "action": score.action.model_dump(),
        "calls": [
            {"tool": c.tool, "is_error": c.is_error, "error": c.text if c.is_error else None} for c in log
        ],
    }
