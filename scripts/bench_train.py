"""CPU micro-benchmark of the training glue (needs the `train` extra, verl):

reward     compute_score calls per second over the oracle's episodes of every benchmark task
loop       one oracle trajectory through our agent loop inside verl's ToolAgentLoop (scripted generator,
           offline tiny tokenizer) vs the same calls made straight on a Session: the loop's overhead per
           tool call (chat-template rendering and tokenization of tool messages included)

  KOPA_GEN_CACHE=... python scripts/bench_train.py [--reps 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

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
    rig = LoopHarness(project, tmp, fixture["platforms"])
    names = [tool["name"] for _, tool in kopa_tools.mcp_tools(project, fixture["platforms"])]
    ncalls = len(record["calls"])
    out_chars = sum(len(c["text"]) for c in record["calls"])

    rig.play(ScriptedGenerator(rig.tok, script), row_kwargs(task, fixture, names))  # warm-up
    start = time.perf_counter()
    for _ in range(args.reps):
        _, out = rig.play(ScriptedGenerator(rig.tok, script), row_kwargs(task, fixture, names))
        assert out.extra_fields[contract.STATE_HASH] == record["state_hash"]
    loop_s = (time.perf_counter() - start) / args.reps

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

    start = time.perf_counter()
    for _ in range(args.reps):
        asyncio.run(direct())
    direct_s = (time.perf_counter() - start) / args.reps
    resp_tokens = len(out.response_ids)
    print(
        f"loop: task {task.id}, {ncalls} calls, {out_chars} chars of tool output, {resp_tokens} response tokens "
        f"(tiny byte-level tokenizer)"
    )
    print(
        f"  agent loop {1000 * loop_s:.1f} ms/trajectory vs direct session {1000 * direct_s:.1f} ms -> "
        f"overhead {1000 * (loop_s - direct_s) / ncalls:.1f} ms per tool call"
    )


if __name__ == "__main__":
    main()
