"""Benchmark of the evaluation harness (not a test): oracle episodes per second over all tasks x rollouts x seeds,
and the harness overhead per tool call (time outside the sandbox and the policy).

Usage: python scripts/bench_eval.py [--rollouts 4] [--seeds 8] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.project import load_project
from kopa_gen.runtime.spread import Spread
from kopa_gen.sandbox import emulator


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollouts", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes (the sandbox timing is then not seen)"
    )
    parser.add_argument(
        "--ray", nargs="?", const="", default=None, help="run on Ray (ADDRESS, or a local cluster)"
    )
    args = parser.parse_args()
    project = load_project()

    # Time spent inside the sandbox (its whole request handling), measured by wrapping its entry point.
    sandbox_s: list[float] = []
    original = emulator.Sandbox.answer

    async def timed(self: emulator.Sandbox, *a: object, **k: object) -> object:
        start = time.perf_counter()
        try:
            return await original(self, *a, **k)  # type: ignore[arg-type]
        finally:
            sandbox_s.append(time.perf_counter() - start)

    emulator.Sandbox.answer = timed  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        config = EvalConfig(
            policy="oracle",
            out=Path(tmp),
            rollouts=args.rollouts,
            seeds=list(range(args.seeds)),
            concurrency=args.concurrency,
            spread=Spread(workers=args.workers, ray=args.ray),
        )
        start = time.perf_counter()
        records = asyncio.run(run_eval(project, config))
        wall = time.perf_counter() - start
    calls = [c for r in records for c in r["calls"]]
    per_call_ms = [c["elapsed_ms"] for c in calls]
    inside_ms = 1000 * sum(sandbox_s) / max(1, len(sandbox_s))
    print(
        f"oracle: {len(records)} episodes ({len(project.tasks)} tasks x {args.rollouts} rollouts x {args.seeds} seeds)"
    )
    print(f"  wall {wall:.1f} s -> {len(records) / wall:.1f} episodes/s at concurrency {args.concurrency}")
    print(f"  rewarded {sum(r['reward'] for r in records)}/{len(records)}")
    print(
        f"  tool calls {len(calls)}: session-measured p50 {statistics.median(per_call_ms):.2f} ms, "
        f"mean {statistics.mean(per_call_ms):.2f} ms"
    )
    print(
        f"  of which inside the sandbox: mean {inside_ms:.2f} ms per HTTP request ({len(sandbox_s)} requests)"
    )
    print(
        f"  harness overhead per call (session + toolbox + client + envelope, outside the sandbox): "
        f"{statistics.mean(per_call_ms) - inside_ms:.2f} ms"
    )


if __name__ == "__main__":
    main()
