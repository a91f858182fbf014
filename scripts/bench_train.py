"""CPU micro-benchmark of the training glue (needs the `train` extra, verl):

reward     compute_score calls per second over the oracle's episodes of every benchmark task
loop       one oracle trajectory through our agent loop inside verl's ToolAgentLoop (scripted generator,
           offline tiny tokenizer) vs the same calls made straight on a Session: the loop's overhead per
           tool call (chat-template rendering and tokenization of tool messages included), with the sandbox
           inline on the event loop (sandbox_threads=0, as before) and on sandbox threads (the default)
overlap    --concurrent N copies of that trajectory at once on one event loop (as an AgentLoopWorker runs
           them), each generate call taking --latency-ms (a stand-in for the model server): wall time and
           the event loop's longest stall, inline vs on sandbox threads

  KOPA_GEN_CACHE=... python scripts/bench_train.py [--reps 20] [--concurrent 8] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

from kopa_gen.evaluate.runner import EvalConfig, load_fixture, run_eval  # noqa: E402
from kopa_gen.project import load_project  # noqa: E402
from kopa_gen.runtime.session import Session  # noqa: E402
from kopa_gen.sandbox.config import SandboxConfig  # noqa: E402
from kopa_gen.train import contract  # noqa: E402
from kopa_gen.train import tools as kopa_tools  # noqa: E402
from kopa_gen.train.harness import (  # noqa: E402
    LoopHarness,
    ScriptedGenerator,
    replay_script,
    row_kwargs,
)
from kopa_gen.train.reward import compute_score  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--concurrent", type=int, default=8)
    ap.add_argument("--latency-ms", type=int, default=50)
    args = ap.parse_args()
    project = load_project(ROOT)
    tmp = Path(tempfile.mkdtemp(prefix="bench_train_"))

    records = asyncio.run(run_eval(project, EvalConfig(policy="oracle", out=tmp / "eval", rollouts=1)))
    by_id = {t.id: t for _, t in project.tasks}
    episodes = [(by_id[r["task"]], load_fixture(project, by_id[r["task"]]), r) for r in records]
    items = [(contract.ground_truth(t, f), contract.fields_of_record(r)) for t, f, r in episodes]
    start = time.perf_counter()
    n = 0
    for _ in range(args.reps):
        for gt, info in items:
            assert compute_score("kopa/bench", "", gt, info)["score"] == 1.0
            n += 1
    dt = time.perf_counter() - start
    print(f"reward: {n} calls in {dt:.2f}s = {n / dt:.0f} calls/s ({1000 * dt / n:.2f} ms/call)")

    task, _, record = max(episodes, key=lambda e: len(e[2]["calls"]))
    fixture = load_fixture(project, task)
    script = replay_script(record)
    names = [tool["name"] for _, tool in kopa_tools.mcp_tools(project, fixture["platforms"])]
    ncalls = len(record["calls"])
    out_chars = sum(len(c["text"]) for c in record["calls"])

    async def direct() -> None:
        async with Session.open(
            project,
            fixture["platforms"],
            max_calls=task.max_calls,
            tools=task.tools,
            sandbox=SandboxConfig(seed=0),
        ) as s:
            for turn in record["turns"]:
                await asyncio.gather(
                    *(s.call(record["calls"][i]["tool"], record["calls"][i]["arguments"]) for i in turn)
                )
            json.dumps(s.state_hash(fixture.get("state_scope") or []))

    asyncio.run(direct())  # warm-up
    start = time.perf_counter()
    for _ in range(args.reps):
        asyncio.run(direct())
    direct_s = (time.perf_counter() - start) / args.reps
    print(
        f"loop: task {task.id}, {ncalls} calls, {out_chars} chars of tool output (tiny byte-level tokenizer)"
    )
    print(f"  direct session {1000 * direct_s:.1f} ms/trajectory")

    for label, threads in (("inline (sandbox_threads=0)", 0), ("sandbox threads (4)", 4)):
        rig = LoopHarness(project, tmp / f"rig{threads}", fixture["platforms"], sandbox_threads=threads)
        rig.play(ScriptedGenerator(rig.tok, script), row_kwargs(task, fixture, names))  # warm-up
        start = time.perf_counter()
        for _ in range(args.reps):
            _, out = rig.play(ScriptedGenerator(rig.tok, script), row_kwargs(task, fixture, names))
            assert out.extra_fields[contract.STATE_HASH] == record["state_hash"]
        loop_s = (time.perf_counter() - start) / args.reps
        wall, stall = asyncio.run(overlap(rig, script, task, fixture, names, args))
        print(
            f"  {label}: agent loop {1000 * loop_s:.1f} ms/trajectory -> overhead "
            f"{1000 * (loop_s - direct_s) / ncalls:.1f} ms per tool call; {args.concurrent} concurrent "
            f"trajectories at {args.latency_ms} ms/generate: {wall:.2f} s wall, longest event-loop stall "
            f"{1000 * stall:.0f} ms"
        )


async def overlap(
    rig: LoopHarness, script: list[str], task: Any, fixture: dict[str, Any], names: list[str], args: Any
) -> tuple[float, float]:
    """Wall time of `args.concurrent` trajectories on this event loop, and its longest stall (a 5 ms ticker)."""
    stall = 0.0
    done = False

    async def ticker() -> None:
        nonlocal stall
        while not done:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            stall = max(stall, time.perf_counter() - before - 0.005)

    tick = asyncio.create_task(ticker())
    start = time.perf_counter()
    loops = [
        rig.loop(ScriptedGenerator(rig.tok, script, args.latency_ms / 1000)) for _ in range(args.concurrent)
    ]
    outs = await asyncio.gather(
        *(lp.run({"temperature": 1.0}, **row_kwargs(task, fixture, names)) for lp in loops)
    )
    wall = time.perf_counter() - start
    done = True
    await tick
    assert all(o.extra_fields[contract.STATE_HASH] for o in outs)
    return wall, stall


if __name__ == "__main__":
    main()
