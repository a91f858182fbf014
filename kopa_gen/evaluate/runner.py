"""`kopa-gen eval`: every (task, seed, rollout) episode in its own Session, run concurrently, scored, and
appended to runs/<name>/episodes.jsonl as soon as it ends. A rerun skips the episodes already recorded, so a
crashed or interrupted run continues where it stopped."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kopa_gen.client.errors import redact
from kopa_gen.evaluate.episode import score_episode
from kopa_gen.policies.base import Episode, TaskContext, policy
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.spec.task import Task


@dataclass(frozen=True)
class EvalConfig:
    policy: str
    out: Path
    policy_options: dict[str, Any] = field(default_factory=dict)
    tasks: list[str] | None = None
    rollouts: int = 4
    seeds: list[int] = field(default_factory=lambda: [0])
    concurrency: int = 4
    live: bool = False
    episode_timeout_s: float = 900.0
    judge: dict[str, Any] | None = None  # {base_url, model, api_key_env}: the optional LLM-as-judge fallback


def episode_key(task_id: str, seed: int, rollout: int) -> str:
    return f"{task_id}:{seed}:{rollout}"


def selected(project: Project, patterns: list[str] | None) -> list[tuple[str, Task]]:
    if not patterns:
        return list(project.tasks)
    chosen = [(f, t) for f, t in project.tasks if any(fnmatch.fnmatch(t.id, p) for p in patterns)]
    if not chosen:
        raise KeyError(f"no task matches {patterns}; known: {', '.join(t.id for _, t in project.tasks)}")
    return chosen


def load_fixture(project: Project, task: Task) -> dict[str, Any]:
    path = project.fixtures_dir / task.domain / f"{task.id}.json"
    if not path.exists():
        raise KeyError(f"no gold fixture for {task.id}; run `kopa-gen build`")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def done_keys(path: Path) -> set[str]:
    if not path.exists():
        return set()
    keys = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            keys.add(json.loads(line)["key"])
    return keys


def secrets(project: Project, config: EvalConfig) -> list[str]:
    """Every key the run could have touched, so that nothing written can carry one."""
    names = {p.kopa.auth.env for p in project.platforms} | {
        str(config.policy_options.get("api_key_env", "OPENAI_API_KEY"))
    }
    return [os.environ[n] for n in sorted(names) if os.environ.get(n)]


async def run_episode(
    project: Project, config: EvalConfig, task: Task, fixture: dict[str, Any], seed: int, rollout: int
) -> dict[str, Any]:
    agent = policy(config.policy, **config.policy_options)
    start = time.perf_counter()
    platforms = fixture["platforms"]
    sandbox = SandboxConfig(seed=seed)
    async with Session.open(
        project, platforms, max_calls=task.max_calls, tools=task.tools, live=config.live, sandbox=sandbox
    ) as session:
        try:
            ctx = TaskContext(task, fixture, seed, rollout)
            episode = await asyncio.wait_for(agent.run(ctx, session), config.episode_timeout_s)
        except TimeoutError:
            episode = Episode("", [], [], "timeout", f"episode exceeded {config.episode_timeout_s}s")
        except Exception as exc:  # a policy bug must not end the whole run; it is recorded and scored 0
            episode = Episode("", [], [], "error", f"{type(exc).__name__}: {exc}")
        scope = fixture.get("state_scope") or []
        written, state = session.state(scope)
        calls = list(session.calls)
    judged = None
    if config.judge and task.answer is not None and "RESPONSE" in task.reward:
        first = score_episode(task, fixture, episode.final_message, state, calls, episode.turns)
        if first.response is not None and not first.response.readable and episode.final_message:
            from kopa_gen.evaluate.judge import OpenAIJudge

            judged = await OpenAIJudge(**config.judge).judge(task.query, task.answer, episode.final_message)
    score = score_episode(task, fixture, episode.final_message, state, calls, episode.turns, judged)
    return {
        "key": episode_key(task.id, seed, rollout),
        "task": task.id,
        "domain": task.domain,
        "seed": seed,
        "rollout": rollout,
        "policy": config.policy,
        "stop_reason": episode.stop_reason,
        "error": episode.error,
        "final_message": episode.final_message,
        "calls": [asdict(c) for c in calls],
        "turns": episode.turns,
        "messages": episode.messages,
        "state_hash": state,
        "state": written,
        "response": score.response.model_dump() if score.response is not None else None,
        "environment": score.environment,
        "action": score.action,
        "reward": score.reward,
        "reason": score.reason,
        "elapsed_s": round(time.perf_counter() - start, 3),
    }


async def run_eval(
    project: Project, config: EvalConfig, progress: Callable[[int, int, int], None] | None = None
) -> list[dict[str, Any]]:
    """Run every missing episode; return all records of the run (old and new)."""
    config.out.mkdir(parents=True, exist_ok=True)
    path = config.out / "episodes.jsonl"
    done = done_keys(path)
    jobs = [
        (task, load_fixture(project, task), seed, rollout)
        for _, task in selected(project, config.tasks)
        for seed in config.seeds
        for rollout in range(config.rollouts)
        if episode_key(task.id, seed, rollout) not in done
    ]
    total = len(jobs) + len(done)
    hidden = secrets(project, config)
    gate = asyncio.Semaphore(config.concurrency)
    lock = asyncio.Lock()
    finished = [len(done), 0]

    async def one(task: Task, fixture: dict[str, Any], seed: int, rollout: int) -> None:
        async with gate:
            record = await run_episode(project, config, task, fixture, seed, rollout)
        line = redact(json.dumps(record, ensure_ascii=False, default=str), hidden)
        async with lock:
            with path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
            finished[0] += 1
            finished[1] += int(record["reward"])
            if progress is not None:
                progress(finished[0], total, finished[1])

    (config.out / "run.json").write_text(
        json.dumps(
            {
                "policy": config.policy,
                "policy_options": {k: v for k, v in config.policy_options.items() if "key" not in k.lower()},
                "tasks": config.tasks,
                "rollouts": config.rollouts,
                "seeds": config.seeds,
                "live": config.live,
                "world_seed": project.world.seed,
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    await asyncio.gather(*(one(*job) for job in jobs))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def print_progress(done: int, total: int, passed: int) -> None:
    width = 30
    filled = int(width * done / total) if total else width
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} episodes, {passed} rewarded")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()
