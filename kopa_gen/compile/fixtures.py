"""Gold fixtures: every task's gold chain executed against the sandbox, written to
generated/fixtures/<domain>/<id>.json (resolved arguments, result digests, gold answer, gold state hash,
statistics), so that a data change that moves a gold answer shows up in the diff.

A declared answer that the executed chain does not give, or a gold call that fails, is a build error."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.answers import ListAnswer
from kopa_gen.evaluate.response import score_response
from kopa_gen.project import Project
from kopa_gen.runtime.answer import derive_answer, source_value
from kopa_gen.runtime.paths import PathError, evaluate, inner_path, select
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.spec.diagnostics import Diagnostics
from kopa_gen.spec.task import From, Task, answer_sources
from kopa_gen.world.build import world_hash

HERE = Path(__file__).parent


def digest(data: Any) -> str:
    canonical = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def task_platforms(project: Project, task: Task) -> list[str]:
    tools = {c.tool for c in task.calls()} | set(task.tools or [])
    return sorted({project.platform_of(t).id for t in tools})


def fixture_input(project: Project, file: str, seed: int) -> str:
    h = hashlib.sha256((project.root / file).read_bytes())
    h.update(world_hash(project.world, seed).encode())
    runtime = HERE.parent / "runtime"
    for path in sorted([HERE / "fixtures.py", runtime / "paths.py", runtime / "answer.py"]):
        h.update(path.read_bytes())
    for p in sorted(project.platforms, key=lambda x: x.id):
        h.update(p.sha256.encode())
    return h.hexdigest()


async def run_gold(
    project: Project, file: str, task: Task, seed: int, diags: Diagnostics
) -> dict[str, Any] | None:
    """Execute one gold chain in a fresh session; None (with diagnostics) when it cannot be executed."""
    results: dict[str, dict[str, Any]] = {}
    steps: list[list[dict[str, Any]]] = []
    handoffs: list[dict[str, Any]] = []
    config = SandboxConfig(limits=False)
    async with Session.open(
        project, task_platforms(project, task), sandbox=config, world_seed=seed
    ) as session:
        for i, step in enumerate(task.gold):
            resolved_step: list[tuple[str, str, dict[str, Any]]] = []
            for j, call in enumerate(step.calls):
                args: dict[str, Any] = {}
                for name, value in call.args.items():
                    if not isinstance(value, From):
                        args[name] = value
                        continue
                    source = results[value.call]
                    try:
                        args[name] = evaluate(source, value.path)
                        picked = select(source, value.path) if "(" not in value.path else None
                    except PathError as exc:
                        diags.error(file, f"gold[{i}].calls[{j}].args.{name}", str(exc))
                        return None
                    total = source.get("total_count", picked.candidates if picked else 1)
                    handoffs.append({"from": value.call, "to": call.id, "arg": name, "cardinality": total})
                resolved_step.append((call.id, call.tool, args))
            outcomes = await asyncio.gather(*(session.call(tool, args) for _, tool, args in resolved_step))
            record: list[dict[str, Any]] = []
            for j, ((cid, tool, args), outcome) in enumerate(zip(resolved_step, outcomes, strict=True)):
                if outcome.is_error or outcome.structured is None:
                    diags.error(
                        file, f"gold[{i}].calls[{j}]", f"gold call {cid} ({tool}) failed: {outcome.text}"
                    )
                    return None
                results[cid] = outcome.structured
                total = outcome.structured.get("total_count")
                record.append(
                    {
                        "id": cid,
                        "tool": tool,
                        "args": args,
                        "result_sha256": digest(outcome.structured),
                        "total_count": total,
                    }
                )
            steps.append(record)
        state = session.state_hash()
    answer_value: Any = None
    if task.answer is not None and task.answer_from is not None:
        combined = not isinstance(task.answer_from, From)
        for k, origin in enumerate(answer_sources(task.answer_from)):
            result = results[origin.call]
            try:
                source_value(results, origin)
                picked = select(result, inner_path(origin.path))
            except PathError as exc:
                diags.error(file, f"answer_from.of[{k}].path" if combined else "answer_from.path", str(exc))
                return None
            # The last junctions: each value chosen or reduced from a result (a list handed to the answer).
            handoffs.append(
                {
                    "from": origin.call,
                    "to": "answer",
                    "arg": "answer",
                    "cardinality": result.get("total_count", picked.candidates),
                }
            )
        try:
            answer_value = derive_answer(results, task.answer_from)
        except PathError as exc:
            diags.error(file, "answer_from", str(exc))
            return None
        shown = ", ".join(map(str, answer_value)) if isinstance(answer_value, list) else str(answer_value)
        verdict = score_response(shown, task.answer, task.system.today.year)
        if not verdict.passed:
            declared = task.answer.model_dump(mode="json")
            diags.error(
                file,
                "answer",
                f"declared answer {declared} disagrees with the gold chain, which gives {shown!r} ({verdict.reason}); "
                "fix the answer or the chain",
            )
            return None
        if isinstance(task.answer, ListAnswer) and not isinstance(answer_value, list):
            diags.error(
                file, "answer_from", "a list answer needs a list value: a path to a list, or op: list"
            )
            return None
    calls = sum(len(s) for s in steps)
    stats = {
        "steps": len(steps),
        "calls": calls,
        "parallel_calls": sum(len(s) for s in steps if len(s) > 1),
        "max_calls": task.max_calls,
        "headroom": round(task.max_calls / calls, 3),
        "handoffs": handoffs,
        "one_to_many": sum(1 for h in handoffs if (h["cardinality"] or 0) > 1),
    }
    return {
        "id": task.id,
        "domain": task.domain.value,
        "spec": file,
        "world_seed": seed,
        "reward": task.reward,
        "platforms": task_platforms(project, task),
        "steps": steps,
        "answer": task.answer.model_dump(mode="json") if task.answer else None,
        "answer_value": answer_value,
        "state_hash": state,
        "stats": stats,
    }


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
        target = folder / task.domain.value / f"{task.id}.json"
        old = manifest.get(task.id)
        on_disk = target.exists() and old is not None and digest_file(target) == old.get("sha256")
        if old and old.get("input") == wanted and on_disk:
            entries[task.id] = old
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
