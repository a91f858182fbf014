"""`kopa-gen eval`: every (task, seed, rollout) episode in its own Session, run concurrently, scored, and
appended to runs/<name>/episodes.jsonl as soon as it ends. A rerun skips the episodes already recorded, so a
crashed or interrupted run continues where it stopped; episodes that failed for infrastructure (the model
endpoint down) are run again. The folder's rules (one run per folder, one writer at a time) are in `rundir`."""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kopa_gen.client.redaction import redact, register
from kopa_gen.evaluate.episode import score_episode
from kopa_gen.evaluate.guess import guesses, manifest_entry
from kopa_gen.evaluate.jsonline import json_line
from kopa_gen.evaluate.rundir import (
    INFRASTRUCTURE,
    code_version,
    locked,
    merge,
    read_episodes,
    read_manifest,
    repair_tail,
    set_hash,
    task_hash,
    write_manifest,
)
from kopa_gen.evaluate.submission import SubmitChannel
from kopa_gen.language.answers import answer_text
from kopa_gen.language.diagnostics import InfrastructureError, NotFound
from kopa_gen.language.modes import ToolsMode
from kopa_gen.language.records import (
    MANIFEST_FORMAT,
    JudgeRecord,
    RunManifest,
    TaskSetRef,
    Usage,
    check_fixture,
)
from kopa_gen.language.settings import TOOL_RESULT_CHARS, AgentSettings, EndpointSettings
from kopa_gen.language.task import AnswerMode, Task
from kopa_gen.policies.base import Episode, TaskContext, policy
from kopa_gen.project import Project
from kopa_gen.runtime.session import CallRecord, Session
from kopa_gen.runtime.spread import Spread, run_jobs
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.world.build import ensure_world


@dataclass(frozen=True)
class EvalConfig:
    policy: str
    out: Path
    endpoint: EndpointSettings | None = None  # the model of the `openai` and `closed-book` policies
    agent: AgentSettings = field(default_factory=AgentSettings)  # how a model policy plays an episode
    tasks: list[str] | None = None
    rollouts: int = 4
    seeds: list[int] = field(default_factory=lambda: [0])
    concurrency: int = 4
    live: bool = False
    episode_timeout_s: float = (
        900.0  # the runner's own bound on any policy (a model's is agent.episode_timeout_s)
    )
    judge: EndpointSettings | None = None  # the optional LLM-as-judge fallback (text mode)
    judge_kind: str = "openai"  # its name in kopa_gen.evaluate.judge.JUDGES
    answer_mode: AnswerMode = "submit"  # submit: through the submit_answer tool; text: a `최종 답:` line
    tools_mode: ToolsMode = "task"  # which tools the model meets (kopa_gen/mcp/search.py)
    withheld: tuple[str, ...] = ()  # all and search mode: platforms not opened (training's held-out split)
    spread: Spread = field(default_factory=Spread)  # where episodes run; `concurrency` is per process
    stop_after_infrastructure: int = 5  # episodes in a row failed for infrastructure that stop the run
    tool_result_chars: int | None = TOOL_RESULT_CHARS  # the tool-result budget; None: results are never cut
    server: str | None = None  # the command that served the model for the run (`--serve-vllm`), for run.json

    def policy_options(self) -> dict[str, Any]:
        """What the policy is built from: a model policy's endpoint and agent settings; nothing otherwise."""
        return {"endpoint": self.endpoint, "agent": self.agent} if self.endpoint is not None else {}


def opened_platforms(
    project: Project, fixture: dict[str, Any], mode: ToolsMode, withheld: Collection[str] = ()
) -> list[str]:
    """The platforms an episode opens: the task's own in task mode; in all and search mode every platform of
    the project but the `withheld` (the task's first, so its tools keep their order), as a model meeting the
    whole catalog would."""
    own: list[str] = list(fixture["platforms"])
    if mode == "task":
        return own
    return own + [p.id for p in project.platforms if p.id not in own and p.id not in withheld]


def episode_key(task_id: str, seed: int, rollout: int) -> str:
    return f"{task_id}:{seed}:{rollout}"


def selected(project: Project, patterns: list[str] | None) -> list[tuple[str, Task]]:
    if not patterns:
        return list(project.tasks)
    chosen = [(f, t) for f, t in project.tasks if any(fnmatch.fnmatch(t.id, p) for p in patterns)]
    if not chosen:
        raise NotFound(f"no task matches {patterns}; known: {', '.join(t.id for _, t in project.tasks)}")
    return chosen


def load_fixture(project: Project, task: Task) -> dict[str, Any]:
    path = project.fixtures_dir / task.domain / f"{task.id}.json"
    if not path.exists():
        if project.fixtures is not None:  # a task dir: `kopa-gen build` builds the benchmark's fixtures only
            raise NotFound(
                f"no gold fixture for {task.id} at {path}; a task dir carries its own fixtures "
                "(fixtures/<domain>/<id>.json, as `kopa-gen edge synth` writes them): write them with "
                f"`kopa-gen task fixtures --task-dir {project.fixtures.parent}`"
            )
        raise NotFound(f"no gold fixture for {task.id}; run `kopa-gen build`")
    return _read_fixture(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=512)
def _read_fixture(path: Path, mtime_ns: int) -> dict[str, Any]:
    """A fixture is read once per version of the file (every episode of its task asks for it); read-only."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    check_fixture(data, path)  # a fixture of another shape fails here, naming the file and the field
    return data


def secrets(project: Project, config: EvalConfig) -> list[str]:
    """Every key the run could have touched, so that nothing written can carry one."""
    names = {p.kopa.auth.env for p in project.platforms} | {
        e.api_key_env for e in (config.endpoint, config.judge) if e is not None
    }
    found = [os.environ[n] for n in sorted(names) if os.environ.get(n)]
    for secret in found:  # and no log record of the run carries one either
        register(secret)
    return found


async def run_episode(
    project: Project,
    config: EvalConfig,
    task: Task,
    fixture: dict[str, Any],
    seed: int,
    rollout: int,
    pattern: str | None = None,
) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        episode, written, state, calls = await _play(project, config, task, fixture, seed, rollout)
    except InfrastructureError as exc:  # the world could not be opened: nothing ran
        episode, written, state, calls = Episode("", [], [], "infrastructure", str(exc)), [], "", []
    judged = None
    signature = None
    mode = config.answer_mode
    if config.judge and task.answer is not None and "RESPONSE" in task.reward and mode == "text":
        first = score_episode(task, fixture, episode.final_message, state, calls, episode.turns, mode=mode)
        if first.response is not None and not first.response.readable and episode.final_message:
            from kopa_gen.evaluate.judge import JUDGES
            from kopa_gen.policies.openai import EndpointDown

            judge = JUDGES.get(config.judge_kind)(config.judge)
            signature = judge.signature
            try:
                judged = await judge.judge(task.query, task.answer, episode.final_message)
            except EndpointDown as exc:  # ungraded, not failed: the run retries it on resume
                episode.stop_reason = "infrastructure"
                episode.error = f"the LLM judge could not grade the answer: {exc}"
    score = score_episode(
        task, fixture, episode.final_message, state, calls, episode.turns, judged, mode, signature
    )
    record = {
        "key": episode_key(task.id, seed, rollout),
        "task": task.id,
        "domain": task.domain,
        "query": task.query,
        "seed": seed,
        "rollout": rollout,
        "policy": config.policy,
        "answer_mode": mode,
        "stop_reason": episode.stop_reason,
        "error": episode.error,
        "final_message": episode.final_message,
        "calls": [c.as_dict() for c in calls],
        "turns": episode.turns,
        "messages": episode.messages,
        "state_hash": state,
        "state": written,
        "response": score.response.model_dump() if score.response is not None else None,
        "environment": score.environment,
        "action": score.action.model_dump(),
        "reward": score.reward,
        "reason": score.reason,
        "elapsed_s": round(time.perf_counter() - start, 3),
        "pattern": pattern,
        "expected": expected_text(project, task, fixture),
        "usage": usage.model_dump() if (usage := Usage.of(episode.usage)) is not None else None,
    }
    return record


async def _play(
    project: Project, config: EvalConfig, task: Task, fixture: dict[str, Any], seed: int, rollout: int
) -> tuple[Episode, list[dict[str, Any]], str, list[CallRecord]]:
    """One episode in its session: what the policy did, the scoped state, its hash and the call log."""
    agent = policy(config.policy, **config.policy_options())
    channel = SubmitChannel(task.answer) if config.answer_mode == "submit" else None
    async with Session.open(
        project,
        opened_platforms(project, fixture, config.tools_mode, config.withheld),
        max_calls=task.max_calls,
        tools=task.tools,
        mode=config.tools_mode,
        live=config.live,
        sandbox=SandboxConfig(seed=seed),
        channel=channel,
        result_chars=config.tool_result_chars,
        stop_on_infrastructure=True,
    ) as session:
        try:
            ctx = TaskContext(task, fixture, seed, rollout, config.answer_mode)
            episode = await asyncio.wait_for(agent.run(ctx, session), config.episode_timeout_s)
        except TimeoutError:
            episode = Episode("", [], [], "timeout", f"episode exceeded {config.episode_timeout_s}s")
        except InfrastructureError as exc:  # the environment failed, not the policy: run again on resume
            episode = Episode("", [], [], "infrastructure", str(exc))
        except Exception as exc:  # a policy bug must not end the whole run; it is recorded and scored 0
            episode = Episode("", [], [], "error", f"{type(exc).__name__}: {exc}")
        scope = fixture.get("state_scope") or []
        written, state = session.state(scope)
        return episode, written, state, list(session.calls)


def expected_text(project: Project, task: Task, fixture: dict[str, Any]) -> str | None:
    """What the report shows beside a reply: the gold answer (`3,070 원`) and, for a task scored on the state it
    leaves, the gold chain's writes (`state: workspace_write_file {"path": ..., "content": ...}`); None: neither."""
    parts = [answer_text(task.answer)] if task.answer is not None else []
    if "ENVIRONMENT" in task.reward:
        writes = [
            f"{call['tool']} {json.dumps(call['args'], ensure_ascii=False)}"
            for step in fixture.get("steps") or []
            for call in step
            if project.platform_of(call["tool"]).operation(call["tool"]).kopa.effect != "read"
        ]
        if writes:
            parts.append("state: " + "; ".join(writes))
    return " · ".join(parts) or None


async def episode_job(
    project: Project, config: EvalConfig, task_id: str, seed: int, rollout: int
) -> dict[str, Any]:
    """One episode named by its task id (what a worker process is sent)."""
    task = project.task(task_id)
    pattern = patterns(project).get(task_id)
    return await run_episode(project, config, task, load_fixture(project, task), seed, rollout, pattern)


def manifest(project: Project, config: EvalConfig, tasks: dict[str, str]) -> RunManifest:
    """run.json for this invocation: the task set (benchmark or task dir) with each selected task's content hash,
    the policy, the plan (answer mode, seeds, rollouts, tool-result budget, the endpoint's and the agent's
    settings: no keys, base URLs without user info or query), the world and the code version."""
    judge = None
    if config.judge:
        from kopa_gen.evaluate.judge import rubric

        judge = JudgeRecord(kind=config.judge_kind, endpoint=config.judge.public(), rubric=rubric().version)
    if project.fixtures is None:
        task_set = TaskSetRef(kind="benchmark", path="specs/tasks", hash=set_hash(tasks))
    else:
        task_set = TaskSetRef(
            kind="task-dir", path=str(project.fixtures.parent.resolve()), hash=set_hash(tasks)
        )
    endpoint = config.endpoint.public() if config.endpoint else None
    return RunManifest(
        format=MANIFEST_FORMAT,
        task_set=task_set,
        tasks=dict(sorted(tasks.items())),
        policy=config.policy,
        answer_mode=config.answer_mode,
        tools_mode=config.tools_mode,
        seeds=sorted(set(config.seeds)),
        rollouts=config.rollouts,
        tool_result_chars=config.tool_result_chars,
        endpoint=endpoint,
        agent=config.agent if endpoint else None,
        live=config.live,
        world_seed=project.world.seed,
        judge=judge,
        code_versions=[code_version(project.root)],
        endpoints=[endpoint.base_url] if endpoint else [],
        server=config.server,
        unvalidated=sorted(t for t in tasks if config.tools_mode not in project.task(t).tools_modes),
    )


def patterns(project: Project) -> dict[str, str]:
    """EDGE pattern of each task of a synthesized set (its synth.json), for the report's per-pattern chart."""
    if project.fixtures is None:
        return {}
    path = project.fixtures.parent / "synth.json"
    return _patterns(path, path.stat().st_mtime_ns) if path.exists() else {}


@functools.lru_cache(maxsize=16)
def _patterns(path: Path, mtime_ns: int) -> dict[str, str]:
    if not path.exists():
        return {}
    meta = json.loads(path.read_text(encoding="utf-8"))
    return {tid: str(m["pattern"]) for tid, m in meta.items() if isinstance(m, dict) and "pattern" in m}


def failed_infrastructure(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("stop_reason") == INFRASTRUCTURE]


class InfrastructureStop(InfrastructureError):
    """The run stopped because the environment kept failing (EvalConfig.stop_after_infrastructure episodes in
    a row); the message is one line saying why and what to do."""


async def run_eval(
    project: Project,
    config: EvalConfig,
    progress: Callable[[int, int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every missing episode; return the latest record of every episode of the run (old and new). Raises
    RunFolderError when `config.out` holds another run or another eval is writing to it."""
    selected(project, config.tasks)  # an unknown task is refused before the run folder is made
    with locked(config.out):
        return await _run_locked(project, config, progress, warn or (lambda line: None))


async def _run_locked(
    project: Project,
    config: EvalConfig,
    progress: Callable[[int, int, int], None] | None,
    warn: Callable[[str], None],
) -> list[dict[str, Any]]:
    path = config.out / "episodes.jsonl"
    before = read_episodes(path)
    for line in before.warnings:
        warn(line)
    chosen = [(task, load_fixture(project, task)) for _, task in selected(project, config.tasks)]
    run = manifest(project, config, {task.id: task_hash(task, fixture) for task, fixture in chosen})
    run = run.model_copy(update={"pool_guess": manifest_entry(guesses(chosen, config.answer_mode))})
    if run.unvalidated:
        warn(
            f"{len(run.unvalidated)} tasks are not validated in {config.tools_mode} mode (their tools_modes "
            f"leave it out), and the report says so: {', '.join(run.unvalidated)}"
        )
    hidden = secrets(project, config)
    old = read_manifest(config.out) if before.records else None  # an empty folder's run.json is replaced
    merged = merge(config.out, old, run, bool(before.records))
    write_manifest(config.out, merged, hidden)
    repair_tail(path)
    wanted = {
        episode_key(task.id, seed, rollout): (task, fixture, seed, rollout)
        for task, fixture in chosen
        for seed in config.seeds
        for rollout in range(config.rollouts)
    }
    # an episode that failed for infrastructure is not done: it runs again and its new line supersedes it
    here = [r for r in before.records if r["key"] in wanted and r.get("stop_reason") != INFRASTRUCTURE]
    done = {r["key"] for r in here}
    jobs = [(t.id, seed, rollout) for key, (t, _, seed, rollout) in wanted.items() if key not in done]
    total = len(wanted)
    finished = [len(here), sum(bool(r["reward"]) for r in here)]
    if not config.live and not config.spread.in_process:  # built once here, not by every worker at once
        ensure_world(project.world)  # the world the episodes use: its own seed, whatever the sandbox seeds
    in_a_row = 0
    with path.open("a", encoding="utf-8") as fh:
        async for _, record in run_jobs(
            project, config.spread, episode_job, [(config, *job) for job in jobs], config.concurrency
        ):
            fh.write(json_line(record, hidden) + "\n")
            fh.flush()
            in_a_row = in_a_row + 1 if record["stop_reason"] == INFRASTRUCTURE else 0
            if in_a_row >= config.stop_after_infrastructure:
                raise InfrastructureStop(
                    f"stopped: {in_a_row} episodes in a row failed for infrastructure, the last with "
                    f"{redact(str(record['error']), hidden)[:300]}; every finished episode is kept in {path}: "
                    "fix the cause and run the same command again to go on"
                )
            finished[0] += 1
            finished[1] += int(record["reward"])
            if progress is not None:
                progress(finished[0], total, finished[1])
    return read_episodes(path).records


def print_progress(done: int, total: int, passed: int) -> None:
    """A bar redrawn in place on a terminal; in a log (not a terminal), one line at each tenth and at the end."""
    width = 30
    filled = int(width * done / total) if total else width
    text = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} episodes, {passed} rewarded"
    if sys.stderr.isatty():
        sys.stderr.write("\r" + text + ("\n" if done == total else ""))
    elif done == total or (total and (10 * done) // total != (10 * (done - 1)) // total):
        sys.stderr.write(text + "\n")
    sys.stderr.flush()
