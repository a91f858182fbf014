"""The tool-result budget's effect (not a test): the oracle plays every benchmark task once, and for each task the
longest tool result of its gold chain is measured as the model used to read it (plain JSON, a key per value) and
as it reads it now (compact rows within the budget), in characters and in Qwen3.5 tokens; a gold result the
budget cuts is counted (it must be 0: every gold chain fits). Rendering time per result and per episode (the
sum over its results) is printed too.

Usage: python scripts/bench_budget.py [--budget 16384] [--tasks fin-001 ...] [--no-tokens]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.runner import EvalConfig, run_eval
from kopa_gen.language.settings import TOOL_RESULT_CHARS
from kopa_gen.mcp.render import render_result
from kopa_gen.mcp.toolbox import result_text
from kopa_gen.project import load_project

CUT = "[cut to fit"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=TOOL_RESULT_CHARS)
    parser.add_argument("--tasks", nargs="*")
    parser.add_argument("--no-tokens", action="store_true", help="skip the Qwen3.5 token counts")
    args = parser.parse_args()
    project = load_project()
    with tempfile.TemporaryDirectory() as tmp:
        config = EvalConfig(
            policy="oracle", out=Path(tmp), rollouts=1, tasks=args.tasks, tool_result_chars=args.budget
        )
        records = asyncio.run(run_eval(project, config))
    count = (lambda text: 0) if args.no_tokens else _tokens()
    rows: list[tuple[str, int, int, int, int, bool]] = []
    render_s: list[float] = []
    episode_s: list[float] = []
    for record in sorted(records, key=lambda r: r["task"]):
        before = after = ""
        cut = False
        episode_s.append(0.0)
        for call in record["calls"]:
            data: dict[str, Any] | None = call["structured"]
            if call["is_error"] or not data or "submitted" in data:
                continue
            old = result_text(data)
            start = time.perf_counter()
            render_result(data, args.budget)
            render_s.append(time.perf_counter() - start)
            episode_s[-1] += render_s[-1]
            new = call["text"]
            cut |= CUT in new
            before = max(before, old, key=len)
            after = max(after, new, key=len)
        rows.append((record["task"], len(before), count(before), len(after), count(after), cut))
    print(
        f"budget {args.budget:,} characters; {len(rows)} tasks, oracle reward {sum(r['reward'] for r in records)}"
    )
    print("| task | before chars | before tokens | after chars | after tokens | gold result cut |")
    print("|---|---|---|---|---|---|")
    for task, bc, bt, ac, at, cut in rows:
        print(f"| {task} | {bc:,} | {bt:,} | {ac:,} | {at:,} | {'yes' if cut else 'no'} |")
    over_before = sum(1 for r in rows if r[1] > args.budget)
    over_after = sum(1 for r in rows if r[3] > args.budget)
    print(
        f"tasks whose longest result is over the budget: before {over_before}, after {over_after}; "
        f"tasks with a gold result cut: {sum(r[5] for r in rows)}"
    )
    print(
        f"longest result: before {max(r[1] for r in rows):,} chars / {max(r[2] for r in rows):,} tokens, "
        f"after {max(r[3] for r in rows):,} chars / {max(r[4] for r in rows):,} tokens; median after "
        f"{int(statistics.median(r[3] for r in rows)):,} chars"
    )
    if render_s:
        print(
            f"rendering: median {statistics.median(render_s) * 1e6:.0f} us, max {max(render_s) * 1e3:.2f} ms "
            f"per result ({len(render_s)} results); per episode (its results together) median "
            f"{statistics.median(episode_s) * 1e3:.2f} ms, max {max(episode_s) * 1e3:.2f} ms"
        )


def _tokens() -> Any:
    from kopa_gen.train.qwen35 import packaged_tokenizer

    tok = packaged_tokenizer()
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"]) if text else 0


if __name__ == "__main__":
    main()
