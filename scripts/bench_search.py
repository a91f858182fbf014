"""Search-mode recall and speed (not a test): for each benchmark task, does `search_tools` with the task's own query
find its gold tools among the top 10, over every tool of every platform?

Two figures per task: the gold tools an agent must find (those not pinned as an entry tool of their platform) found
by one search with the user's question as the query, and found by one search per gold step with the step's tool
title as the query (what an agent that names what it wants next would type: an upper bound on how findable each
tool is). Also the index build time and the time per search.

Usage: python scripts/bench_search.py [--limit 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict

from kopa_gen.mcp.search import ToolIndex
from kopa_gen.project import load_project
from kopa_gen.runtime.session import frozen_tools


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    project = load_project()
    tools = [
        t
        for p in project.platforms
        for t in frozen_tools(project.root / "generated" / "servers" / p.id / "tools.json")
    ]
    start = time.perf_counter()
    index = ToolIndex.of(tools)
    build_s = time.perf_counter() - start
    titles = {t["name"]: str(t.get("title") or t["name"]) for t in tools}
    pinned = {tool for p in project.platforms for tool in p.kopa.entry}
    per_domain: dict[str, list[float]] = defaultdict(list)
    by_title: list[float] = []
    whole: list[bool] = []
    timings: list[float] = []
    missed: list[str] = []
    for _, task in project.tasks:
        gold = {c.tool for step in task.gold for c in step.calls} - pinned
        if not gold:
            continue
        start = time.perf_counter()
        hits = {t["name"] for t, _ in index.search(task.query, args.limit)}
        timings.append(time.perf_counter() - start)
        share = len(gold & hits) / len(gold)
        per_domain[task.domain].append(share)
        whole.append(gold <= hits)
        missed += [f"{task.id}:{tool}" for tool in sorted(gold - hits)]
        by_title.append(
            sum(tool in {t["name"] for t, _ in index.search(titles[tool], args.limit)} for tool in gold)
            / len(gold)
        )
    every = [s for shares in per_domain.values() for s in shares]
    result = {
        "tools": len(tools),
        "pinned": len(pinned),
        "tasks": len(every),
        "limit": args.limit,
        "recall_query": statistics.mean(every),
        "all_found_query": sum(whole) / len(whole),
        "recall_title": statistics.mean(by_title),
        "by_domain": {d: round(statistics.mean(s), 3) for d, s in sorted(per_domain.items())},
        "index_build_ms": round(build_s * 1000, 1),
        "search_ms_median": round(statistics.median(timings) * 1000, 3),
        "missed_examples": missed[:15],
    }
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return
    print(
        f"{result['tools']} tools ({result['pinned']} pinned entry tools), {result['tasks']} tasks with a gold "
        f"tool to find, top {args.limit}"
    )
    print(
        f"recall with the task's question: {result['recall_query']:.3f} (every gold tool found: "
        f"{result['all_found_query']:.3f}); with each tool's title: {result['recall_title']:.3f}"
    )
    print("by domain:", ", ".join(f"{d} {v:.3f}" for d, v in result["by_domain"].items()))
    print(f"index build {result['index_build_ms']} ms, one search {result['search_ms_median']} ms (median)")
    print("missed, e.g.:", ", ".join(result["missed_examples"]))


if __name__ == "__main__":
    main()
