"""The benchmark's validity figures and the grader's speed, as the closing notes report them:

table      pass@1 of every reference policy on every task (oracle, no-lookup, first-page, list-all, dump,
           do-nothing), and for each task first-page solves, how many pages its gold reads
corpus     the hand-written RESPONSE corpus (tests/data/response_corpus.yaml) by class: cases, and how many the
           grader decides as the corpus says
speed      RESPONSE verdicts per second over the corpus; whole-episode scores (RESPONSE, ENVIRONMENT, ACTION)
           per second over the oracle's episodes

  KOPA_GEN_CACHE=... python scripts/bench_score.py [--reps 20]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from kopa_gen.evaluate.answers import answer_adapter
from kopa_gen.evaluate.episode import score_episode
from kopa_gen.evaluate.response import score_response
from kopa_gen.evaluate.runner import EvalConfig, load_fixture, run_eval
from kopa_gen.project import load_project
from kopa_gen.runtime.session import CallRecord

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ("oracle", "no-lookup", "first-page", "list-all", "dump", "do-nothing")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    project = load_project(ROOT)
    tasks = [t for _, t in project.tasks]

    runs: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in POLICIES:
            config = EvalConfig(policy=name, out=Path(tmp) / name, rollouts=1)
            runs[name] = {r["task"]: r for r in asyncio.run(run_eval(project, config))}
    print("| task | " + " | ".join(POLICIES) + " |")
    print("|---|" + "---|" * len(POLICIES))
    for task in tasks:
        print(f"| {task.id} | " + " | ".join(str(int(runs[p][task.id]["reward"])) for p in POLICIES) + " |")
    totals = " | ".join(f"{sum(r['reward'] for r in runs[p].values()) / len(tasks):.2f}" for p in POLICIES)
    print(f"| pass@1 | {totals} |")
    print("\nfirst-page passes, with the pages each gold list reads (all one page):")
    for task in tasks:
        if runs["first-page"][task.id]["reward"]:
            fixture = load_fixture(project, task)
            lists = [
                f"{u['tool']} {u['total_count']} rows"
                for step in fixture["steps"]
                for u in step
                if u.get("total_count") is not None
            ]
            print(f"  {task.id}: {', '.join(lists)}")

    corpus = yaml.safe_load((ROOT / "tests" / "data" / "response_corpus.yaml").read_text(encoding="utf-8"))
    cases = [(c, answer_adapter.validate_python(c["answer"])) for c in corpus]
    agree: Counter[str] = Counter()
    size: Counter[str] = Counter()
    for case, answer in cases:
        verdict = score_response(case["message"], answer, 2026, case.get("distractors") or [])
        size[case["class"]] += 1
        agree[case["class"]] += verdict.passed == (case["expect"] == "pass")
    print("\n| corpus class | cases | must pass | must fail | decided as written |")
    print("|---|---|---|---|---|")
    for name in sorted(size):
        passes = sum(1 for c, _ in cases if c["class"] == name and c["expect"] == "pass")
        print(f"| {name} | {size[name]} | {passes} | {size[name] - passes} | {agree[name]}/{size[name]} |")
    print(f"| all | {len(cases)} | | | {sum(agree.values())}/{len(cases)} |")

    start = time.perf_counter()
    for _ in range(args.reps):
        for case, answer in cases:
            score_response(case["message"], answer, 2026, case.get("distractors") or [])
    elapsed = time.perf_counter() - start
    n = args.reps * len(cases)
    print(
        f"\nRESPONSE: {n} verdicts in {elapsed:.2f}s = {n / elapsed:.0f}/s ({elapsed / n * 1e6:.0f} us each)"
    )

    episodes = list(runs["oracle"].values())
    by_id = {t.id: t for t in tasks}
    fixtures = {t.id: load_fixture(project, t) for t in tasks}
    start = time.perf_counter()
    for _ in range(args.reps):
        for r in episodes:
            calls = [CallRecord(**c) for c in r["calls"]]
            score_episode(
                by_id[r["task"]], fixtures[r["task"]], r["final_message"], r["state_hash"], calls, r["turns"]
            )
    elapsed = time.perf_counter() - start
    n = args.reps * len(episodes)
    print(f"episode scores: {n} in {elapsed:.2f}s = {n / elapsed:.0f}/s ({elapsed / n * 1e3:.2f} ms each)")


if __name__ == "__main__":
    main()
