"""`kopa-gen task show`: one task on one page, for review: the query, every call the gold chain made with its
arguments (a handed-over value beside the reference it came from), its row count and first rows, the hand-offs,
the answer and the pool it was chosen from, the build's problems, and what every reference and adversarial policy
scores on it. The chain runs fresh in the sandbox (nothing is read from or written to generated/), so a draft task
is reviewed before it is built."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from kopa_gen.evaluate.guess import guess_task
from kopa_gen.evaluate.runner import EvalConfig, run_episode
from kopa_gen.gold.run import run_gold, task_platforms
from kopa_gen.language.diagnostics import Diagnostics
from kopa_gen.language.functions import to_text
from kopa_gen.language.task import Combine, From, Task, Template
from kopa_gen.project import Project
from kopa_gen.runtime.chain import Walker, walk_chain
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig

POLICIES = (
    "oracle",
    "do-nothing",
    "no-lookup",
    "first-page",
    "list-all",
    "dump",
    "all-candidates",
    "first-row",
    "last-row",
    "shortcut",
)
"""The reference policy (oracle: 1 on a sound task) and the adversarial ones (0 on a sound task); pool-guess is
shown as its exact expectation."""

CELL = 40  # characters of one value in a row line


def _cell(value: Any) -> str:
    text = to_text(value).replace("\n", " ")
    return text if len(text) <= CELL else text[: CELL - 1] + "…"


def _row(row: Any, width: int = 160) -> str:
    if not isinstance(row, dict):
        return _cell(row)
    parts = [f"{k}={_cell(v)}" for k, v in row.items() if v not in (None, "", [], {})]
    line = " · ".join(parts)
    return line if len(line) <= width else line[: width - 1] + "…"


def _ref(ref: From) -> str:
    extra = ", ".join(f"{n}={_ref(r)}" for n, r in ref.with_.items())
    return f"{ref.call}:{ref.path or '(whole)'}" + (f" with {extra}" if extra else "")


def _arg(value: Any, sent: Any) -> str:
    if isinstance(value, From):
        return f"{_cell(sent)}  ← {_ref(value)}"
    if isinstance(value, Template):
        return f"{_cell(sent)}  ← template {value.template!r}"
    return _cell(sent)


async def _walk(project: Project, task: Task, seed: int) -> Any:
    async with Session.open(
        project, task_platforms(project, task), sandbox=SandboxConfig(limits=False), world_seed=seed
    ) as session:
        return await walk_chain(project, task, session, Walker())


async def show_task(
    project: Project, file: str, task: Task, rows: int = 3, policies: bool = True, seed: int | None = None
) -> tuple[str, bool]:
    """The page and whether the task builds (no error)."""
    seed = project.world.seed if seed is None else seed
    out = [
        f"{task.id} · {task.domain} · {file}",
        f"query: {task.query}",
        f"reward {', '.join(task.reward)} · {len(task.tools or [])} tools exposed · max_calls {task.max_calls} · "
        f"keys {', '.join(task.system.keys)}",
    ]
    walk = await _walk(project, task, seed)
    by_call: dict[str, list[Any]] = {}
    for unit in walk.units:
        by_call.setdefault(unit.call.id, []).append(unit)
    for i, step in enumerate(task.gold, 1):
        out.append(f"\nstep {i}")
        for call in step.calls:
            units = by_call.get(call.id, [])
            marks = [m for m in ("pages: all" if call.pages == "all" else "",) if m]
            if call.for_each is not None:
                marks.append(f"for each {_ref(call.for_each)} ({len({u.item_index for u in units})} items)")
            out.append(f"  {call.id} = {call.tool}" + (f"   [{'; '.join(marks)}]" if marks else ""))
            if not units:
                out.append("    (not reached)")
                continue
            first = units[0]
            for name, value in call.args.items():
                out.append(f"    {name} = {_arg(value, first.args.get(name))}")
            for name in first.args.keys() - call.args.keys():
                out.append(f"    {name} = {_cell(first.args[name])}  (page)")
            shown_items = 0
            for unit in units:
                if unit.page not in (None, 1) or (unit.item_index or 0) >= 2:
                    continue
                shown_items += 1
                result = unit.merged or unit.result or {}
                head = f"    → {unit.key}: " if call.for_each is not None else "    → "
                if unit.is_error:
                    out.append(f"{head}error: {unit.text[:300]}")
                    continue
                if isinstance(result.get("rows"), list):
                    pages = sum(1 for u in units if u.item_index == unit.item_index)
                    total = result.get("total_count")
                    out.append(
                        f"{head}{len(result['rows'])} rows read"
                        + (f" of total_count {total}" if total is not None else "")
                        + (f" over {pages} pages" if pages > 1 else "")
                    )
                    out += [f"      [{k}] {_row(r)}" for k, r in enumerate(result["rows"][:rows])]
                elif "record" in result:
                    out.append(f"{head}record: {_row(result['record'], 400)}")
                else:
                    out.append(f"{head}{_row(result, 400)}")
            if call.for_each is not None and len({u.item_index for u in units}) > 2:
                out.append(f"    … {len({u.item_index for u in units}) - 2} more items")
    diags = Diagnostics()
    fixture = await run_gold(project, file, task, seed, diags)
    if fixture is not None:
        handoffs = fixture["stats"]["handoffs"]
        out.append("\nhand-offs (distinct values offered / rows behind)")
        out += [f"  {h['from']} → {h['to']}.{h['arg']}: {h['distinct']} / {h['rows']}" for h in handoffs]
        stats = fixture["stats"]
        out.append(
            f"\ngold: {stats['steps']} steps, {stats['calls']} calls ({stats['pages']} further pages), "
            f"{stats['parallel_calls']} in parallel turns; budget headroom {stats['headroom']}x"
        )
    if task.answer is not None and task.answer_from is not None:
        how = (
            _ref(task.answer_from)
            if isinstance(task.answer_from, From)
            else f"{task.answer_from.op} of "
            + ", ".join(_ref(r) for r in task.answer_from.of)
            + (
                f" (digits {task.answer_from.digits})"
                if isinstance(task.answer_from, Combine) and task.answer_from.digits is not None
                else ""
            )
        )
        out.append(f"answer: {json.dumps(task.answer.model_dump(mode='json'), ensure_ascii=False)}")
        out.append(f"  ← {how}")
        if fixture is not None:
            pool = fixture["answer_pool"]
            listed = ", ".join(_cell(v) for v in pool[:20]) + (
                f", … ({len(pool) - 20} more)" if len(pool) > 20 else ""
            )
            out.append(f"  chosen among {len(pool)}: {listed}")
    if diags.items:
        out.append("\nbuild:")
        out += [f"  {d.render()}" for d in diags.items]
    if policies and fixture is not None:
        out.append("\npolicies (reward, 1 rollout, seed 0)")
        cells = []
        with tempfile.TemporaryDirectory(
            prefix="kopa-show-"
        ) as scratch:  # EvalConfig's out; nothing is written
            folder = Path(scratch)
            for name in POLICIES:
                config = EvalConfig(policy=name, out=folder, rollouts=1)
                record = await run_episode(project, config, task, fixture, 0, 0)
                cells.append(f"{name} {record['reward']:g}")
        guess = guess_task(task, fixture, "submit")
        cells.append(f"pool-guess {float(guess.p):.3f} (exact expectation)")
        out.append("  " + " · ".join(cells))
    return "\n".join(out), not diags.errors
