"""A digest of every table of a built world (its rows in rowid order, its columns and their types), to prove that a
change to the world's code or declarations left the data as it was:

  python scripts/table_hashes.py [--world FILE] [--json OUT]    # default: the world of the project's seed

Two runs' JSON files compare with `diff`; any line that differs names a table whose rows changed."""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kopa_gen.world.build import MANIFEST  # noqa: E402


def table_hashes(path: Path) -> dict[str, tuple[int, str]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = [
        r[0]
        for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        if not r[0].startswith("sqlite_") and r[0] != MANIFEST
    ]
    out: dict[str, tuple[int, str]] = {}
    for name in names:
        h = hashlib.sha256()
        columns = [(c[1], c[2]) for c in db.execute(f'PRAGMA table_xinfo("{name}")')]
        h.update(json.dumps(columns).encode())
        count = 0
        for row in db.execute(f'SELECT * FROM "{name}" ORDER BY rowid'):
            h.update(repr(row).encode())
            count += 1
        out[name] = (count, h.hexdigest())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", type=Path, help="a world SQLite file (default: build or reuse the project's)")
    ap.add_argument("--json", type=Path, help="write the digests here")
    args = ap.parse_args()
    path = args.world
    if path is None:
        from kopa_gen.project import load_project
        from kopa_gen.world.build import ensure_world

        path = ensure_world(load_project().world).path
    found = table_hashes(path)
    for name, (rows, digest) in found.items():
        print(f"{name}\t{rows}\t{digest[:16]}")
    print(f"{len(found)} tables, {sum(rows for rows, _ in found.values())} rows")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
