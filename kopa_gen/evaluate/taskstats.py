"""`kopa-gen stats`: the benchmark table of the paper (per domain: tasks, mean steps, mean calls, headroom,
available tools, parallel %) and the handoff statistics (share of one-to-many junctions, median / p90 / max
handoff cardinality), computed from the gold fixtures."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from typing import Any

from kopa_gen.project import Project


def fixtures(project: Project) -> list[tuple[Any, dict[str, Any]]]:
    out = []
    for _, task in project.tasks:
        path = project.root / "generated" / "fixtures" / task.domain / f"{task.id}.json"
        out.append((task, json.loads(path.read_text(encoding="utf-8"))))
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


def benchmark_table(project: Project) -> str:
    groups: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
    for task, fixture in fixtures(project):
        groups[task.domain].append((task, fixture))
        groups["all"].append((task, fixture))
    lines = [
        "| domain | tasks | mean steps | mean calls | headroom | available tools | parallel % |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in [*sorted(k for k in groups if k != "all"), "all"]:
        items = groups[name]
        steps = statistics.mean(f["stats"]["steps"] for _, f in items)
        calls = statistics.mean(f["stats"]["calls"] for _, f in items)
        headroom = statistics.mean(f["stats"]["headroom"] for _, f in items)
        tools = statistics.mean(available_tools(project, t, f) for t, f in items)
        parallel = 100 * sum(1 for _, f in items if f["stats"]["parallel_calls"] > 0) / len(items)
        lines.append(
            f"| {name} | {len(items)} | {steps:.2f} | {calls:.2f} | {headroom:.2f} | {tools:.1f} | {parallel:.0f}% |"
        )
    return "\n".join(lines)


def handoff_table(project: Project) -> str:
    cards = [h["cardinality"] or 0 for _, f in fixtures(project) for h in f["stats"]["handoffs"]]
    if not cards:
        return "no handoffs yet"
    many = 100 * sum(1 for c in cards if c > 1) / len(cards)
    return "\n".join(
        [
            "| junctions | one-to-many | median cardinality | p90 | max |",
            "|---|---|---|---|---|",
            f"| {len(cards)} | {many:.1f}% | {percentile(cards, 0.5):g} | {percentile(cards, 0.9):g} | {max(cards)} |",
        ]
    )
