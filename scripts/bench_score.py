"""The benchmark's validity figures and the grader's speed, as the closing notes report them:

table      pass@1 and pass@4 of every reference and adversarial policy (4 rollouts), in both answer modes, with
           pool-guess's exact expectation; ACTION (the paper's formula and the gated one) per policy
action     ACTION per task for oracle, shortcut and list-all (paper / gated)
corpus     the labelled corpora (tests/data/*_corpus.yaml) by class and mode: how many the grader decides as
           labelled
speed      RESPONSE verdicts per second, submit mode (typed submissions) and text mode (the corpora's replies);
           whole-episode scores (RESPONSE, ENVIRONMENT, ACTION) per second over the oracle's episodes

  KOPA_GEN_CACHE=... python scripts/bench_score.py [--reps 20] [--rollouts 4] [--parts table,action,corpus,speed]

`--parts speed` runs only what the speed figures need (the oracle in submit mode, the corpora's text replies).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.corpus import corpus_tasks, grade, load, table
from kopa_gen.evaluate.episode import score_episode
from kopa_gen.evaluate.guess import expectation, guesses
from kopa_gen.evaluate.report import results
from kopa_gen.evaluate.response import score_submitted, score_text
from kopa_gen.evaluate.runner import EvalConfig, load_fixture, run_eval
from kopa_gen.evaluate.stats import summarize
from kopa_gen.evaluate.submission import SubmissionError, SubmitChannel
from kopa_gen.language.task import ANSWER_MODES, AnswerMode
from kopa_gen.project import load_project
from kopa_gen.runtime.session import CallRecord

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("table", "action", "corpus", "speed")
POLICIES = (
    "oracle", "shortcut", "no-lookup", "first-page", "first-row", "last-row", "pool-guess", "list-all",
    "all-candidates", "dump", "do-nothing",
)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rollouts", type=int, default=4)
    ap.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)} (default: all)"
    )
    args = ap.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if not parts or parts - set(PARTS):
        ap.error(f"--parts: choose among {', '.join(PARTS)}, got {args.parts!r}")
    project = load_project(ROOT)
    tasks = [t for _, t in project.tasks]
    fixtures = {t.id: load_fixture(project, t) for t in tasks}
    pairs = {t.id: (t, fixtures[t.id]) for t in tasks}
    chosen = [(t, fixtures[t.id]) for t in tasks]

    wanted: set[tuple[AnswerMode, str]] = set()
    if "table" in parts:
        wanted |= {(mode, name) for mode in ANSWER_MODES for name in POLICIES}
    if "action" in parts:
        wanted |= {("submit", name) for name in ("oracle", "shortcut", "list-all")}
    if "speed" in parts:
        wanted.add(("submit", "oracle"))
    runs: dict[tuple[AnswerMode, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode, name in sorted(wanted):
            config = EvalConfig(
                policy=name, out=Path(tmp) / f"{mode}-{name}", rollouts=args.rollouts, answer_mode=mode
            )
            runs[mode, name] = asyncio.run(run_eval(project, config))
    if "table" in parts:
        _table(runs, chosen, args.rollouts)
    if "action" in parts:
        _action(runs, tasks)
    corpora = []
    for path in sorted((ROOT / "tests" / "data").glob("*_corpus.yaml")):
        if path.name != "response_corpus.yaml":
            corpora.append((path.name, load(path)))
    frozen = corpus_tasks(project)  # a rewritten task as the corpora knew it
    if "corpus" in parts:
        graded = []
        for name, cases in corpora:
            mine = [grade(c, *frozen[c.task]) for c in cases]
            graded += mine
            print(f"\n{name}: {sum(g.agrees for g in mine)}/{len(mine)} decided as labelled")
        print()
        print(table(graded))
    if "speed" in parts:
        replies = [c for _, cases in corpora for c in cases if c.mode == "text"]
        _speed(runs, chosen, pairs, frozen, replies, args.reps)


def _table(runs: dict[tuple[AnswerMode, str], list[dict[str, Any]]], chosen: list[Any], k: int) -> None:
    print(
        f"| policy | submit pass@1 | submit pass@{k} | text pass@1 | text pass@{k} | ACTION | ACTION gated |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in POLICIES:
        cells = []
        for mode in ANSWER_MODES:
            row = summarize(results(runs[mode, name]), k=k)[-1]
            cells += [f"{row.pass_at_1:.4f}", f"{row.pass_at_k:.4f}"]
        episodes = runs["submit", name]
        gated = sum(r["action"]["action_gated"] for r in episodes) / len(episodes)
        action = sum(r["action"]["action"] for r in episodes) / len(episodes)
        print(f"| {name} | {' | '.join(cells)} | {action:.3f} | {gated:.3f} |")
    cells = []
    for mode in ANSWER_MODES:
        one, at_k = expectation(guesses(chosen, mode), k)
        cells += [f"{one:.4f}", f"{at_k:.4f}"]
    print(f"| pool-guess, exact expectation | {' | '.join(cells)} | | |")
    scored = [(t, f) for t, f in chosen if t.answer is not None and "RESPONSE" in t.reward]
    one, at_k = expectation(guesses(scored, "submit"), k)
    print(f"(over the {len(scored)} tasks RESPONSE decides: pass@1 {one:.4f}, pass@{k} {at_k:.4f})")


def _action(runs: dict[tuple[AnswerMode, str], list[dict[str, Any]]], tasks: list[Any]) -> None:
    print("\n| task | oracle | shortcut | list-all |  (ACTION paper / gated, submit mode, first rollout)")
    print("|---|---|---|---|")
    first = {
        name: {r["task"]: r for r in runs["submit", name] if r["rollout"] == 0}
        for name in ("oracle", "shortcut", "list-all")
    }
    for task in tasks:
        cells = [
            f"{first[n][task.id]['action']['action']:.3f} / {first[n][task.id]['action']['action_gated']:.3f}"
            for n in first
        ]
        print(f"| {task.id} | {' | '.join(cells)} |")


def _speed(
    runs: dict[tuple[AnswerMode, str], list[dict[str, Any]]],
    chosen: list[Any],
    pairs: dict[str, Any],
    frozen: dict[str, Any],
    replies: list[Any],
    reps: int,
) -> None:
    fixtures = {t.id: f for t, f in chosen}
    submissions = []
    for t, f in chosen:
        channel = SubmitChannel(t.answer)
        for v in (f.get("answer_pool") or [])[:20] if t.answer is not None else []:
            try:
                submissions.append((t, channel.read(channel.arguments_for(v)), f["answer_pool"]))
            except SubmissionError:  # a candidate that is no value of the answer's type ('-' for a number)
                continue
    start = time.perf_counter()
    for _ in range(reps):
        for task, stated, pool in submissions:
            assert task.answer is not None
            score_submitted(task.answer, [stated], pool)
    elapsed = time.perf_counter() - start
    n = reps * len(submissions)
    print(f"\nRESPONSE, submit mode: {n} verdicts in {elapsed:.2f}s = {n / elapsed:.0f}/s")
    start = time.perf_counter()
    for _ in range(reps):
        for case in replies:
            task, fixture = frozen[case.task]
            assert task.answer is not None
            score_text(case.reply or "", task.answer, 2026, fixture["answer_pool"], task.query)
    elapsed = time.perf_counter() - start
    n = reps * len(replies)
    print(f"RESPONSE, text mode: {n} verdicts in {elapsed:.2f}s = {n / elapsed:.0f}/s")

    episodes = runs["submit", "oracle"]
    start = time.perf_counter()
    for _ in range(reps):
        for r in episodes:
            calls = [CallRecord(**c) for c in r["calls"]]
            score_episode(
                pairs[r["task"]][0],
                fixtures[r["task"]],
                r["final_message"],
                r["state_hash"],
                calls,
                r["turns"],
            )
    elapsed = time.perf_counter() - start
    n = reps * len(episodes)
    print(f"episode scores: {n} in {elapsed:.2f}s = {n / elapsed:.0f}/s ({elapsed / n * 1e3:.2f} ms each)")


if __name__ == "__main__":
    main()
