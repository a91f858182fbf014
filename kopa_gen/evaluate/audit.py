"""`kopa-gen audit contamination`: how much of the benchmark a synthesized training set has already shown a model.

Three overlaps between the benchmark's tasks and a task set (what `kopa-gen edge synth` wrote):
- **queries**: a benchmark query whose normalized text equals a training query, or shares most of its character
  trigrams with one (Jaccard >= NEAR); the paper reports none;
- **tools**: the benchmark's gold tools (distinct, over all gold calls) that some training task also calls; the
  paper: 62.2% (135 of 217);
- **dependency edges**: each hand-off of the benchmark's gold chains, as (producing tool, consuming tool, argument),
  counted per occurrence, and whether some training chain hands over along the same edge; the paper: 178
  occurrences, all unseen in training.
The held-out split (specs/domains.yaml) is reported apart: a platform withheld from synthesis shows no overlap."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kopa_gen.language.normalize import normalize_text
from kopa_gen.language.task import From, Task, Template
from kopa_gen.project import Project

NEAR = 0.8
"""Trigram Jaccard at or above which two queries count as near-duplicates."""

Edge = tuple[str, str, str]  # (producing tool, consuming tool, argument)


def edges(task: Task) -> list[Edge]:
    """Every hand-off between two calls of a gold chain, once per occurrence: a reference in a call's argument
    (or its fan-out list) to an earlier call (the answer's own reads are not edges between tools)."""
    tools = {c.id: c.tool for c in task.calls()}
    out: list[Edge] = []

    def refs(value: Any) -> list[From]:
        return value.sources() if isinstance(value, From | Template) else []

    for call in task.calls():
        for name, value in call.args.items():
            out += [(tools[r.call], call.tool, name) for r in refs(value) if r.call in tools]
        if call.for_each is not None and call.for_each.call in tools:
            out.append((tools[call.for_each.call], call.tool, "for_each"))
    return out


def _grams(text: str) -> set[str]:
    t = normalize_text(text).replace(" ", "")
    return {t[i : i + 3] for i in range(max(len(t) - 2, 1))}


@dataclass
class Audit:
    benchmark: int
    training: int
    exact: list[tuple[str, str]] = field(default_factory=list)  # (benchmark id, training id)
    near: list[tuple[str, str, float]] = field(default_factory=list)
    gold_tools: list[str] = field(default_factory=list)
    seen_tools: list[str] = field(default_factory=list)
    edge_occurrences: int = 0
    seen_edge_occurrences: int = 0
    seen_edges: list[Edge] = field(default_factory=list)
    held_out: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        tools = len(self.gold_tools)
        return {
            "benchmark_tasks": self.benchmark,
            "training_tasks": self.training,
            "queries": {
                "exact": [list(p) for p in self.exact],
                "near": [[a, b, round(j, 3)] for a, b, j in self.near],
                "near_threshold": NEAR,
            },
            "tools": {
                "gold": tools,
                "seen": len(self.seen_tools),
                "share": len(self.seen_tools) / tools if tools else 0.0,
                "unseen": sorted(set(self.gold_tools) - set(self.seen_tools)),
            },
            "edges": {
                "occurrences": self.edge_occurrences,
                "seen": self.seen_edge_occurrences,
                "seen_edges": [list(e) for e in self.seen_edges],
            },
            "held_out": self.held_out,
        }

    def lines(self) -> str:
        d = self.as_dict()
        q, t, e = d["queries"], d["tools"], d["edges"]
        out = [
            f"benchmark {self.benchmark} tasks against {self.training} training tasks",
            f"queries: {len(q['exact'])} identical, {len(q['near'])} near-duplicates (trigram Jaccard >= {NEAR})"
            + " (the paper: none)",
            f"tools: {t['seen']} of {t['gold']} gold tools also in training ({100 * t['share']:.1f}%; the paper "
            "62.2%, 135 of 217)",
            f"dependency edges: {e['seen']} of {e['occurrences']} hand-off occurrences along an edge training "
            "also uses (the paper: 0 of 178)",
        ]
        out += [f"  identical: {a} = {b}" for a, b in self.exact[:10]]
        out += [f"  near: {a} ~ {b} ({j:.2f})" for a, b, j in self.near[:10]]
        out += [f"  seen edge: {p} -> {c}.{a}" for p, c, a in self.seen_edges[:10]]
        held = self.held_out
        if held.get("platforms"):
            out.append(
                f"held-out split ({', '.join(held['platforms'])}): {held['tasks']} tasks, "
                f"{held['seen_tools']} of their gold tools and {held['seen_edges']} of their hand-offs seen in "
                "training"
            )
        return "\n".join(out)


def audit(project: Project, training: list[Task]) -> Audit:
    """The overlaps of the project's benchmark tasks with a training set."""
    bench = [t for _, t in project.tasks]
    result = Audit(len(bench), len(training))
    train_text = {normalize_text(t.query): t.id for t in training}
    train_grams = [(t.id, _grams(t.query)) for t in training]
    for task in bench:
        key = normalize_text(task.query)
        if key in train_text:
            result.exact.append((task.id, train_text[key]))
            continue
        mine = _grams(task.query)
        best = max(
            ((tid, len(mine & g) / len(mine | g)) for tid, g in train_grams if g),
            key=lambda x: x[1],
            default=None,
        )
        if best is not None and best[1] >= NEAR:
            result.near.append((task.id, best[0], best[1]))
    train_tools = {c.tool for t in training for c in t.calls()}
    gold = sorted({c.tool for t in bench for c in t.calls()})
    result.gold_tools = gold
    result.seen_tools = [t for t in gold if t in train_tools]
    train_edges = {e for t in training for e in edges(t)}
    occurrences = Counter(e for t in bench for e in edges(t))
    result.edge_occurrences = sum(occurrences.values())
    result.seen_edge_occurrences = sum(n for e, n in occurrences.items() if e in train_edges)
    result.seen_edges = sorted(e for e in occurrences if e in train_edges)
    if project.held_out:
        held = [t for t in bench if project.touches_held_out(t)]
        held_tools = {c.tool for t in held for c in t.calls()}
        result.held_out = {
            "platforms": list(project.held_out),
            "tasks": len(held),
            "seen_tools": len(held_tools & train_tools),
            "seen_edges": sum(1 for t in held for e in edges(t) if e in train_edges),
        }
    return result
