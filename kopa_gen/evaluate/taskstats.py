"""`kopa-gen stats`: the benchmark table of the paper, per domain, with the paper's figures beside ours, and the
hand-off statistics, computed from the gold fixtures (docs/evaluation.md defines every column).

    steps       logical steps: the task's gold steps (a step is a set of calls that may run in parallel); the
                pages of a paging call are not steps
    calls       executed calls, pages and fan-out items included (`calls w/o pages` beside it)
    headroom    the call budget over the calls
    tools       tools exposed per task (the task's `tools`, else every tool of its platforms)
    parallel    share of tasks with a step of two or more calls
    one-to-many share of multi-step tasks (2+ logical steps) with at least one hand-off between calls (not to the
                answer) that chose among more than one distinct value; beside it, that share over all hand-offs
    distinct    per hand-off, the distinct values the receiving reference chose from (median, p90, max)
    rows        per hand-off, the rows behind the producing step (median, p90, max)
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from typing import Any

from kopa_gen.project import Project

PAPER: dict[str, dict[str, float]] = {
    "traffic": {"tasks": 22, "steps": 3.64, "calls": 5.14, "headroom": 2.21, "tools": 7.5, "parallel": 0.55},
    "finance": {"tasks": 29, "steps": 3.69, "calls": 5.65, "headroom": 2.24, "tools": 6.6, "parallel": 0.83},
    "education": {
        "tasks": 30,
        "steps": 2.93,
        "calls": 4.30,
        "headroom": 2.79,
        "tools": 7.7,
        "parallel": 0.57,
    },
    "law": {"tasks": 22, "steps": 3.00, "calls": 3.55, "headroom": 3.63, "tools": 6.7, "parallel": 0.27},
    "politics": {"tasks": 25, "steps": 3.72, "calls": 5.48, "headroom": 2.10, "tools": 8.7, "parallel": 0.52},
    "district": {"tasks": 17, "steps": 2.76, "calls": 5.41, "headroom": 1.55, "tools": 8.0, "parallel": 0.82},
    "all": {"tasks": 145, "steps": 3.32, "calls": 4.92, "headroom": 2.45, "tools": 7.5, "parallel": 0.59},
}
"""The paper's table (../shared/reference/paper-facts.md), the district domain being its 'district admin'."""
PAPER_HANDOFFS = {"one_to_many": 0.812, "median": 27, "p90": 157, "max": 224958}


def fixtures(project: Project) -> list[tuple[Any, dict[str, Any]]]:
    """Each task with its gold fixture; a task of a set without one (drafts under `--task-dir`) has its gold
    chain run now, and one that does not build is left out with a line on stderr saying why."""
    import asyncio
    import sys

    from kopa_gen.gold.run import run_gold
    from kopa_gen.language.diagnostics import Diagnostics

    out = []
    for file, task in project.tasks:
        path = project.fixtures_dir / task.domain / f"{task.id}.json"
        if path.exists():
            out.append((task, json.loads(path.read_text(encoding="utf-8"))))
            continue
        diags = Diagnostics()
        fixture = asyncio.run(run_gold(project, file, task, project.world.seed, diags))
        if fixture is None:
            print(f"left out {task.id}: it does not build ({len(diags.errors)} error(s))", file=sys.stderr)
            continue
        out.append((task, fixture))
    return out


def available_tools(project: Project, task: Any, fixture: dict[str, Any]) -> int:
    if task.tools is not None:
        return len(task.tools)
    return sum(len(project.platform(pid).operations) for pid in fixture["platforms"])


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = q * (len(ordered) - 1)
    low, high = int(rank), min(int(rank) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _row(project: Project, items: list[tuple[Any, dict[str, Any]]]) -> dict[str, Any]:
    stats = [f["stats"] for _, f in items]
    return {
        "tasks": len(items),
        "steps": statistics.mean(s["steps"] for s in stats),
        "calls": statistics.mean(s["calls"] for s in stats),
        "calls_without_pages": statistics.mean(s["calls"] - s.get("pages", 0) for s in stats),
        "headroom": statistics.mean(s["headroom"] for s in stats),
        "tools": statistics.mean(available_tools(project, t, f) for t, f in items),
        "parallel": sum(1 for s in stats if s["parallel_calls"] > 0) / len(items),
    }


def _handoffs(items: list[tuple[Any, dict[str, Any]]]) -> dict[str, Any]:
    between = [h for _, f in items for h in f["stats"]["handoffs"] if h["to"] != "answer"]
    multi = [f for _, f in items if f["stats"]["steps"] >= 2]
    with_many = [
        f for f in multi if any(h["to"] != "answer" and h["distinct"] > 1 for h in f["stats"]["handoffs"])
    ]
    distinct = [h["distinct"] for h in between]
    rows = [h["rows"] for h in between]
    matched = [h.get("matched") or h["rows"] for h in between]
    return {
        "junctions": len(between),
        "one_to_many": len(with_many) / len(multi) if multi else float("nan"),
        "one_to_many_junctions": sum(1 for d in distinct if d > 1) / len(distinct)
        if distinct
        else float("nan"),
        "distinct": {
            "median": percentile(distinct, 0.5),
            "p90": percentile(distinct, 0.9),
            "max": max(distinct, default=0),
        },
        "rows": {"median": percentile(rows, 0.5), "p90": percentile(rows, 0.9), "max": max(rows, default=0)},
        # a bulk file's filter matches in place of its rows: the figure before bulk files counted their rows
        "rows_matched": {
            "median": percentile(matched, 0.5),
            "p90": percentile(matched, 0.9),
            "max": max(matched, default=0),
        },
        "bulk_file_handoffs": sum(1 for h in between if h.get("matched") is not None),
    }


BIG_STEP = 50_000
"""Rows behind one hand-off that make a step "very large" (the issue's bar: 5 tasks or more)."""

_FUNC = re.compile(r"([A-Za-z_]+)\(|\|\s*([A-Za-z_]+)")


def ending(task: Any) -> str:
    """What a task ends in: the tool the answer is read from and the reduction (`count`, `@max`, `group+argmax`,
    an answer op such as `percent`; `value` when the answer is read as it is). Tasks sharing one ending test the
    same last move."""
    from kopa_gen.language.task import Combine

    answer_from = task.answer_from
    if answer_from is None:
        return "(writes)"
    calls = {c.id: c.tool for c in task.calls()}
    sources = answer_from.of if isinstance(answer_from, Combine) else [answer_from]
    tools = sorted({calls.get(s.call, s.call) for s in sources})
    if isinstance(answer_from, Combine):
        return f"{'+'.join(tools)} {answer_from.op}"
    path = answer_from.path
    moves = [a or b for a, b in _FUNC.findall(path)]
    moves += [m for m in ("@max", "@min") if m in path]
    moves = [m for m in moves if m not in ("number", "text", "strip", "round", "fixed", "list")]
    return f"{tools[0]} {'+'.join(dict.fromkeys(moves)) or 'value'}"


def profile(project: Project, every: list[tuple[Any, dict[str, Any]]]) -> dict[str, Any]:
    """The set's shape beyond the table: cross-platform share per domain, the tasks with a very large step, the
    endings shared most, the most calls, and the held-out split."""
    by_domain: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
    for task, fixture in every:
        by_domain[task.domain].append((task, fixture))

    def crossing(items: list[tuple[Any, dict[str, Any]]]) -> float:
        local = {p.id for p in project.platforms if p.kopa.local}
        return sum(1 for _, f in items if len(set(f["platforms"]) - local) > 1) / len(items) if items else 0.0

    big = sorted(
        t.id
        for t, f in every
        if any(h["to"] != "answer" and (h.get("rows") or 0) > BIG_STEP for h in f["stats"]["handoffs"])
    )
    endings = Counter(ending(t) for t, _ in every)
    held = [t.id for t, _ in every if project.held_out and project.touches_held_out(t)]
    return {
        "cross_platform": {name: crossing(items) for name, items in sorted(by_domain.items())}
        | {"all": crossing(every)},
        "big_steps": {"rows": BIG_STEP, "tasks": big},
        "endings": dict(endings.most_common()),
        "top_ending_share": max(endings.values()) / len(every) if every else 0.0,
        "max_calls": max((f["stats"]["calls"] for _, f in every), default=0),
        "held_out": {"platforms": list(project.held_out), "tasks": held},
    }


def stats_document(project: Project) -> dict[str, Any]:
    """`kopa-gen stats --json`: {"domains": {domain: {tasks, steps, calls, calls_without_pages, headroom, tools,
    parallel}}, "all": {...}, "handoffs": {...}, "profile": {...}, "paper": {...}}."""
    groups: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
    every = fixtures(project)
    for task, fixture in every:
        groups[task.domain].append((task, fixture))
    return {
        "domains": {name: _row(project, groups[name]) for name in sorted(groups)},
        "all": _row(project, every),
        "handoffs": _handoffs(every),
        "profile": profile(project, every),
        "paper": {"domains": PAPER, "handoffs": PAPER_HANDOFFS},
    }


def profile_lines(project: Project, doc: dict[str, Any] | None = None) -> str:
    """The profile as a few lines under the tables."""
    p = (doc or stats_document(project))["profile"]
    cross = ", ".join(f"{d} {100 * v:.0f}%" for d, v in p["cross_platform"].items())
    top = list(p["endings"].items())[:5]
    held = p["held_out"]
    return "\n".join(
        [
            f"cross-platform tasks: {cross}",
            f"tasks with over {p['big_steps']['rows']:,} rows behind one hand-off: {len(p['big_steps']['tasks'])} "
            f"({', '.join(p['big_steps']['tasks']) or 'none'})",
            "most shared endings (tool + reduction): "
            + "; ".join(f"{e} x{n}" for e, n in top)
            + f" (top share {100 * p['top_ending_share']:.1f}%, the bar 10%)",
            f"most calls in one task: {p['max_calls']} (the bar 14)",
            f"held-out split: {len(held['tasks'])} tasks on {', '.join(held['platforms']) or 'no platform'}"
            " (the paper: 31)",
        ]
    )


def _beside(name: str, key: str, fmt: str) -> str:
    paper = PAPER.get(name)
    return f" ({fmt.format(paper[key])})" if paper else ""


def benchmark_table(project: Project, doc: dict[str, Any] | None = None) -> str:
    doc = doc or stats_document(project)
    lines = [
        "| domain | tasks | steps | calls | calls w/o pages | headroom | available tools | parallel |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in [*doc["domains"].items(), ("all", doc["all"])]:
        lines.append(
            f"| {name} | {r['tasks']}{_beside(name, 'tasks', '{:.0f}')} | {r['steps']:.2f}"
            f"{_beside(name, 'steps', '{:.2f}')} | {r['calls']:.2f}{_beside(name, 'calls', '{:.2f}')} "
            f"| {r['calls_without_pages']:.2f} | {r['headroom']:.2f}{_beside(name, 'headroom', '{:.2f}')} "
            f"| {r['tools']:.1f}{_beside(name, 'tools', '{:.1f}')} | {r['parallel']:.0%}"
            f"{_beside(name, 'parallel', '{:.0%}')} |"
        )
    lines.append("")
    lines.append("(the paper's figure in parentheses; steps are logical steps: pages are calls, not steps)")
    return "\n".join(lines)


def handoff_table(project: Project, doc: dict[str, Any] | None = None) -> str:
    h = (doc or stats_document(project))["handoffs"]
    if not h["junctions"]:
        return "no handoffs yet"
    d, r, m = h["distinct"], h["rows"], h["rows_matched"]
    return "\n".join(
        [
            "| hand-offs | one-to-many tasks (paper) | one-to-many hand-offs | distinct values handed on: median / p90 / max "
            "| rows behind: median / p90 / max (paper) |",
            "|---|---|---|---|---|",
            f"| {h['junctions']} | {100 * h['one_to_many']:.1f}% (81.2%) | {100 * h['one_to_many_junctions']:.1f}% "
            f"| {d['median']:g} / {d['p90']:g} / {d['max']} | {r['median']:g} / {r['p90']:g} / {r['max']} "
            f"(27 / 157 / 224,958) |",
            "",
            f"rows behind: {h['bulk_file_handoffs']} hand-offs filter a downloaded bulk file (DART's CORPCODE.xml, "
            "which has no search API) and count the file's rows; with their filter's matches instead: "
            f"{m['median']:g} / {m['p90']:g} / {m['max']}",
        ]
    )
