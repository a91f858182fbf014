"""The import graph of kopa_gen, drawn from the code (every import, function-local ones included): circles between
modules, arrows from a lower floor to a higher one (kopa_gen/layers.py gives the floors), the largest modules.

  python scripts/import_graph.py [--modules]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kopa_gen.layers import cycles, import_graph, upward  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", action="store_true", help="list the 15 largest modules too")
    args = ap.parse_args()
    graph = import_graph(ROOT / "kopa_gen")
    found = cycles(graph)
    print(f"{len(graph)} modules, {sum(len(v) for v in graph.values())} imports")
    print(f"circles: {len(found)}")
    for c in found:
        print("  " + " -> ".join([*c, c[0]]))
    arrows = upward(graph)
    print(f"upward arrows: {len(arrows)}")
    for a, b in arrows:
        print(f"  {a} -> {b}")
    if args.modules:
        sizes = sorted(
            (
                (len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT)))
                for p in (ROOT / "kopa_gen").rglob("*.py")
            ),
            reverse=True,
        )
        print("largest modules:")
        for n, name in sizes[:15]:
            print(f"  {n:5d} {name}")


if __name__ == "__main__":
    main()
