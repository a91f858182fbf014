"""A stratified sample of a synthesized EDGE set, printed for a reader to judge task by task, and the query lint
over the whole set (no query names a tool or an ASCII response field).

    python scripts/edge_sample.py runs/edge/tasks 60            # 60 tasks, each type in its share, seed 0
    python scripts/edge_sample.py runs/edge/tasks 60 --seed 1

Each task prints its id, domain, calls (logical / with pages), whether the first page solves it, where it
started, its tools in order, the query and the answer. Write a verdict beside each: good (a person would ask
it, one reading, the chain is needed), usable (clear, worded awkwardly or unusual) or bad (misread, garbled,
ambiguous)."""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from kopa_gen.project import load_project


def sample(root: Path, n: int, seed: int) -> list[Path]:
    """About `n` task files, each type drawn in its share of the set (at least one of each)."""
    files = sorted(root.glob("tasks/*/*.yaml"))
    by_type: dict[str, list[Path]] = defaultdict(list)
    for f in files:
        by_type[f.stem.split("-")[0]].append(f)
    rng = random.Random(seed)
    picked: list[Path] = []
    for _, group in sorted(by_type.items()):
        k = max(1, round(n * len(group) / len(files)))
        picked += rng.sample(group, min(k, len(group)))
    return sorted(picked, key=lambda f: f.stem)


def named_vocabulary(root: Path) -> list[tuple[str, list[str]]]:
    """Queries of the set that name a tool or an ASCII response field of any platform."""
    project = load_project()
    tools = {op.tool for p in project.platforms for op in p.operations}
    fields = {
        f
        for p in project.platforms
        for op in p.operations
        for f in op.row_fields
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{2,}", f)
    }
    out: list[tuple[str, list[str]]] = []
    for f in sorted(root.glob("tasks/*/*.yaml")):
        query = str(yaml.safe_load(f.read_text(encoding="utf-8"))["query"])
        hit = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query)) & (tools | fields))
        if hit:
            out.append((f.stem, hit))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set", type=Path, help="the folder `kopa-gen edge synth --out` wrote")
    ap.add_argument("n", type=int, help="tasks to sample")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    meta: dict[str, Any] = json.loads((args.set / "synth.json").read_text(encoding="utf-8"))
    for i, f in enumerate(sample(args.set, args.n, args.seed), 1):
        task = yaml.safe_load(f.read_text(encoding="utf-8"))
        prov = meta[task["id"]]
        answer = task["answer"]
        value = answer.get("value", [x.get("value") for x in answer.get("items", [])])
        tools = " > ".join(c["tool"] for step in task["gold"] for c in step["calls"])
        first = "first-page " if prov.get("first_page") else ""
        print(
            f"[{i}] {task['id']} {task['domain']} calls={prov['calls']}/{prov['pages']} {first}{prov['start']}"
        )
        print(f"    {tools}")
        print(f"    {task['query']}")
        print(f"    -> {str(value)[:160]} {answer.get('unit', '')}".rstrip())
    named = named_vocabulary(args.set)
    total = len(list(args.set.glob("tasks/*/*.yaml")))
    print(f"\n{len(named)} of {total} queries name a tool or an ASCII field")
    for stem, hit in named[:20]:
        print(f"  {stem}: {', '.join(hit)}")


if __name__ == "__main__":
    main()
