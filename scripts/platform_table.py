"""What each platform is made of (not a test): tools, endpoints, world datasets behind them, the largest result a
tool can face, and the Python written for the platform (its envelope family's module, the generators of its world
tables); all read from the specs, the code and the built world.

Usage: python scripts/platform_table.py [--seed N]
"""

from __future__ import annotations

import argparse
import inspect
import sqlite3
from collections import defaultdict
from pathlib import Path

from kopa_gen.envelopes import family
from kopa_gen.project import load_project
from kopa_gen.world.build import ensure_world
from kopa_gen.world.registry import generators


def lines_of(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    project = load_project()
    world = ensure_world(project.world, args.seed)
    db = sqlite3.connect(f"file:{world.path}?mode=ro", uri=True)
    registry = generators()
    users: dict[str, set[str]] = defaultdict(set)  # envelope module -> platforms using it
    for p in project.platforms:
        users[inspect.getsourcefile(type(family(p.kopa.envelope))) or "?"].add(p.id)
    counts: dict[str, int] = {}
    largest: dict[str, tuple[int, str]] = {}
    print(
        "| platform | domain | tools | endpoints | world datasets | most rows behind one tool, unfiltered | Python |"
    )
    print("|---|---|---|---|---|---|---|")
    for p in project.platforms:
        tables = sorted({op.source.table for op in p.operations if op.source is not None})
        for table in tables:
            if table not in counts:  # an episode's own table (the workspace's files) starts empty
                episode = table in {e.name for e in project.world.episode}
                counts[table] = 0 if episode else db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
        sized = [(counts[op.source.table], op.tool) for op in p.operations if op.source is not None]
        big = max(sized, default=(0, "-"))
        domain = p.kopa.domain or "-"
        if big > largest.get(domain, (-1, "")):
            largest[domain] = big
        endpoints = {(op.method, op.path) for op in p.operations}
        module = Path(inspect.getsourcefile(type(family(p.kopa.envelope))) or "?")
        shared = sorted(users[str(module)] - {p.id})
        envelope = f"envelope `{module.name}` {lines_of(module)} lines" + (
            f" (shared with {', '.join(shared)})" if shared else ""
        )
        files = {project.world.origin.get(t, "") for t in tables}
        gens = {
            Path(inspect.getsourcefile(registry[t.generator]) or "?")
            for t in project.world.tables
            if t.generator and t.generator != "static" and project.world.origin.get(t.name) in files
        }
        made = sum(lines_of(g) for g in gens)
        python = envelope + (
            f"; generators {made} lines in {len(gens)} modules" if gens else "; no generator"
        )
        print(
            f"| {p.id} | {domain} | {len(p.operations)} | {len(endpoints)} | {len(tables)} | "
            f"{big[0]:,} ({big[1]}) | {python} |"
        )
    total = sum(len(p.operations) for p in project.platforms)
    size = world.path.stat().st_size / 2**20
    print(f"\n{len(project.platforms)} platforms, {total} tools; world seed {world.seed}: {size:.0f} MiB")
    print(
        "largest result per domain: " + "; ".join(f"{d} {n:,} ({t})" for d, (n, t) in sorted(largest.items()))
    )


if __name__ == "__main__":
    main()
