"""Turning episode records into the results table (the paper's shape: per domain and overall)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kopa_gen.evaluate.stats import EpisodeResult, SummaryRow, summarize


def results(records: Sequence[dict[str, Any]]) -> list[EpisodeResult]:
    return [
        EpisodeResult(
            task_id=r["task"],
            domain=r["domain"],
            seed=r["seed"],
            rollout=r["rollout"],
            passed=bool(r["reward"]),
            action=float(r["action"]["action"]) if r.get("action") else math.nan,
        )
        for r in records
    ]


def table(rows: Sequence[SummaryRow]) -> str:
    def f(x: float) -> str:
        return "-" if math.isnan(x) else f"{x:.4f}"

    head = "| domain | tasks | episodes | solved | pass@1 | pass@k (k) | pass^k | ACTION | 95% CI pass@1 (seeds) |"
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = "-" if math.isnan(r.ci_low) else f"[{r.ci_low:.4f}, {r.ci_high:.4f}] ({r.seeds})"
        lines.append(
            f"| {r.domain} | {r.tasks} | {r.episodes} | {r.solved} | {f(r.pass_at_1)} | {f(r.pass_at_k)} ({r.k}) "
            f"| {f(r.pass_hat_k)} | {f(r.action)} | {ci} |"
        )
    return "\n".join(lines)


def print_summary(records: Sequence[dict[str, Any]], k: int) -> None:
    print(table(summarize(results(records), k=k)))
