"""SCALE FIXTURE (synthetic copies, not real APIs): a project of >= 2,318 tools for start-up benchmarks.

Every operation of this repository's real platform specs is replicated `copies` times into one synthetic
platform per real one (`dart` -> `dartx`, ...): each copy gets its own path (`/r007/company.json`), operationId
(`companyR007`) and tool name (`dartx_company_r007`). Parameters, row schemas, envelopes and world bindings are
the real ones unchanged, so the copies build, serve and answer like the originals; only their number is fake.
The world and domains are this repository's own.

Usage: python scripts/scale_fixture.py DIR [--copies 47] [--build]
"""

from __future__ import annotations

import argparse
import copy
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
LABEL = "SCALE FIXTURE (synthetic copies of real operations)"
TARGET_TOOLS = 2318  # the size of the tool catalogue the start-up goal is stated for
SUFFIX = "x"  # synthetic platform id = real id + SUFFIX


def _load(path: Path) -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    return data


def real_specs() -> dict[str, dict[str, Any]]:
    """The real platform specs of this repository with hand-written operations, by platform id (a platform built
    from a bulk catalog is left out: its operations exist only once the catalog is expanded)."""
    specs = {p.parent.name: _load(p) for p in sorted((REPO / "specs" / "platforms").glob("*/openapi.yaml"))}
    return {pid: doc for pid, doc in specs.items() if not doc["x-kopa"].get("catalog")}


def operation_count(specs: dict[str, dict[str, Any]]) -> int:
    return sum(
        1
        for doc in specs.values()
        for item in doc["paths"].values()
        for op in item.values()
        if "x-kopa" in op
    )


def copies_for(target: int = TARGET_TOOLS) -> int:
    """How many copies of every real operation reach `target` tools."""
    return math.ceil(target / operation_count(real_specs()))


def replicate(doc: dict[str, Any], copies: int) -> dict[str, Any]:
    """One real platform spec with every operation copied `copies` times under a synthetic platform id."""
    out = copy.deepcopy(doc)
    old = doc["x-kopa"]["platform"]
    new = old + SUFFIX
    out["x-kopa"]["platform"] = new
    out["info"]["title"] = f"[{LABEL}] {doc['info']['title']}"
    paths: dict[str, Any] = {}
    for path, item in doc["paths"].items():
        for r in range(1, copies + 1):
            tag = f"r{r:03d}"
            clone = copy.deepcopy(item)
            for op in clone.values():
                if not isinstance(op, dict) or "x-kopa" not in op:
                    continue
                op["operationId"] = f"{op['operationId']}R{r:03d}"
                op["x-kopa"]["tool"] = new + op["x-kopa"]["tool"][len(old) :] + "_" + tag
                assert len(op["x-kopa"]["tool"]) <= 64, op["x-kopa"]["tool"]
            paths[f"/{tag}{path}"] = clone
    out["paths"] = paths
    # the entry tools (search mode's pinned ones) are the first copy's
    out["x-kopa"]["entry"] = [new + t[len(old) :] + "_r001" for t in doc["x-kopa"].get("entry", [])]
    return out


def write_scale_project(root: Path, copies: int | None = None) -> int:
    """Write the scale fixture into `root` (specs/world, specs/domains.yaml, specs/platforms/<id>x/); return the
    number of tools it defines."""
    copies = copies or copies_for()
    specs = root / "specs"
    if specs.exists():
        shutil.rmtree(specs)
    shutil.copytree(REPO / "specs" / "world", specs / "world")
    domains = _load(REPO / "specs" / "domains.yaml")
    held = domains.get("held_out") or {}
    copied = real_specs()
    if held.get("platforms"):  # the held-out platforms' synthetic copies (a catalog platform is not copied)
        held["platforms"] = [pid + SUFFIX for pid in held["platforms"] if pid in copied]
        if not held["platforms"]:
            del domains["held_out"]
    (specs / "domains.yaml").write_text(yaml.safe_dump(domains, allow_unicode=True), encoding="utf-8")
    total = 0
    for pid, doc in copied.items():
        scaled = replicate(doc, copies)
        folder = specs / "platforms" / (pid + SUFFIX)
        folder.mkdir(parents=True)
        text = f"# {LABEL}; written by scripts/scale_fixture.py from specs/platforms/{pid}/openapi.yaml\n"
        text += yaml.safe_dump(scaled, allow_unicode=True, sort_keys=False, width=120)
        (folder / "openapi.yaml").write_text(text, encoding="utf-8")
        total += operation_count({pid: scaled})
    return total


def build_scale_project(root: Path, world: bool = True) -> None:
    """`kopa-gen --root DIR build` (the world is this repository's, so a cached one is reused; listing tools needs
    none, hence `world=False` for start-up benchmarks)."""
    command = [sys.executable, "-m", "kopa_gen", "--root", str(root), "build"]
    subprocess.run(command if world else [*command, "--no-world"], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="folder to write the project into (its specs/ is replaced)")
    parser.add_argument("--copies", type=int, default=None, help="copies of every real operation")
    parser.add_argument("--build", action="store_true", help="run `kopa-gen build` on it afterwards")
    args = parser.parse_args()
    root = Path(args.root)
    tools = write_scale_project(root, args.copies)
    print(f"{LABEL}: {tools} tools written to {root}")
    if args.build:
        build_scale_project(root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
