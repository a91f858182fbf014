"""Gold fixtures: every task's gold chain (kopa_gen/gold/run.py) written to generated/fixtures/<domain>/<id>.json,
with a manifest of the input each was made from (kopa_gen/gold/freshness.py); what a fixture holds is said in
kopa_gen/gold/run.py."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from kopa_gen.gold.freshness import fixture_input
from kopa_gen.gold.run import bypass_warnings, pool_warning, reading_warnings, run_gold
from kopa_gen.language.diagnostics import Diagnostics
from kopa_gen.project import Project


def compile_fixtures(
    project: Project, seed: int | None = None, check_only: bool = False
) -> tuple[list[str], Diagnostics]:
    """Write (or, with check_only, compare) every task's fixture. Returns the ids written or drifted."""
    seed = project.world.seed if seed is None else seed
    diags = Diagnostics()
    folder = project.root / "generated" / "fixtures"
    manifest_path = folder / "manifest.json"
    manifest: dict[str, Any] = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    entries: dict[str, Any] = {}
    changed: list[str] = []
    for file, task in project.tasks:
        wanted = fixture_input(project, file, seed)
        target = folder / task.domain / f"{task.id}.json"
        old = manifest.get(task.id)
        on_disk = target.exists() and old is not None and digest_file(target) == old.get("sha256")
        if old and old.get("input") == wanted and on_disk:
            entries[task.id] = old
            kept = json.loads(target.read_text("utf-8"))
            pool_warning(diags, project, file, task, kept.get("answer_pool") or [])
            reading_warnings(diags, project, file, task)
            bypass_warnings(diags, project, file, task, kept.get("steps") or [])
            continue
        changed.append(task.id)
        if check_only:
            continue
        fixture = asyncio.run(run_gold(project, file, task, seed, diags))
        if fixture is None:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        entries[task.id] = {"input": wanted, "sha256": digest_file(target)}
    known = {t.id for _, t in project.tasks}
    for stale in sorted(folder.glob("*/*.json")):
        if stale.stem not in known:
            changed.append(stale.stem)
            if not check_only:
                stale.unlink()
    if not check_only and not diags.errors:
        folder.mkdir(parents=True, exist_ok=True)
        manifest_path.write_text(json.dumps(dict(sorted(entries.items())), indent=1) + "\n", encoding="utf-8")
    return changed, diags


def digest_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
