"""EDGE Phase A: from tool signatures to the execution-grounded dependency graph G*.

1. Skeleton: for every tool, candidate consumers from the retriever; the edge scorer turns each (producer,
   consumer) pair into bindings and a feasibility score, or nothing.
2. Beta prior per edge from the score (kopa_gen.edge.posterior).
3. Iterations: sample paths by Thompson sampling over the edges still alive (with probability ε, the route from
   a root to the least-tried edge that still lacks its trials), execute each path in a fresh Session with fault
   injection on, update the posteriors (structural failures weigh far more than environmental ones, and an
   inconclusive outcome counts against the edge too), prune, until every live edge has had `trials_per_edge`
   trials and nothing was pruned for `patience` iterations. The budget follows the graph: the paths per
   iteration are set from the skeleton's size so that the trials fit in `max_iterations`.
4. Audit: every skeleton edge executed the same number of times, to compare skeleton, G* and pruned edges.

Everything random comes from one seed: same seed, same G*.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kopa_gen.edge.links import Link, kind_table, links
from kopa_gen.edge.posterior import Posterior, PosteriorConfig
from kopa_gen.edge.probe import ProbeConfig, ProbeResult, edge_id, has_data, root_args, rows_of, run_probe
from kopa_gen.edge.retriever import Retriever, RetrieverConfig
from kopa_gen.edge.scorer import EdgeScorer, Examples, Kinds, Proposal, Samples
from kopa_gen.edge.signatures import ToolSig, load_signatures, spec_hash
from kopa_gen.language.diagnostics import NotFound
from kopa_gen.language.synthesis import GraphDoc
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.runtime.spread import Spread, run_jobs


@dataclass(frozen=True)
class GraphConfig:
    seed: int = 0
    platforms: tuple[str, ...] | None = None  # default: every platform with a benchmark domain
    tools: tuple[str, ...] | None = None  # only these tools of those platforms (default: all of them)
    retriever: RetrieverConfig = field(default_factory=RetrieverConfig)
    posterior: PosteriorConfig = field(default_factory=PosteriorConfig)
    probe: ProbeConfig = field(default_factory=ProbeConfig)
    epsilon: float = (
        0.5  # exploration floor: share of paths routed to the least-tried edge short of its trials
    )
    max_len: int = 3  # edges per sampled path
    trials_per_edge: int = 10  # the budget: every live edge is tried this often before Phase A stops
    paths_per_iteration: int | None = None  # None: from the skeleton's size (see `paths_for`)
    max_iterations: int = 60
    min_iterations: int = 10
    patience: int = 5  # converged: no pruning and every live edge at its trials for this many iterations
    audit_trials: int = 3
    audit_edges: int = (
        400  # audited edges, a seeded sample when the skeleton is larger (the analysis is a rate)
    )
    concurrency: int = 8  # probes at once, per process
    spread: Spread = field(default_factory=Spread)  # where probes run (not part of G*: same graph anywhere)


@dataclass
class Edge:
    proposal: Proposal
    posterior: Posterior
    prior: tuple[float, float]
    pruned_at: int | None = None
    attempts: int = 0  # times in an executed path (a fault upstream can leave it without a trial)

    @property
    def id(self) -> str:
        return edge_id(self.proposal)

    @property
    def alive(self) -> bool:
        return self.pruned_at is None


@dataclass
class IterationLog:
    iteration: int
    paths: int
    passed: int
    steps: int
    step_successes: int
    pruned: list[str]
    exploit_paths: int = 0  # the Thompson-sampled paths (the ε routes to undecided edges left out)
    exploit_passed: int = 0

    @property
    def pass_rate(self) -> float:
        return self.passed / self.paths if self.paths else 0.0

    @property
    def exploit_pass_rate(self) -> float:
        return self.exploit_passed / self.exploit_paths if self.exploit_paths else 0.0

    @property
    def step_success_rate(self) -> float:
        return self.step_successes / self.steps if self.steps else 0.0


@dataclass
class PhaseA:
    config: GraphConfig
    scorer: str
    tools: list[ToolSig]
    edges: dict[str, Edge]
    rejected: list[dict[str, str]]
    starts: dict[str, list[dict[str, Any]]]
    unreachable: list[dict[str, str]] = field(default_factory=list)
    iterations: list[IterationLog] = field(default_factory=list)
    audit: dict[str, dict[str, int]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    probes: int = 0
    calls: int = 0
    world_seed: int = 0
    spec_hash: str = ""

    def alive(self) -> list[Edge]:
        return [e for e in self.edges.values() if e.alive]

    @property
    def paths_per_iteration(self) -> int:
        """The configured number, else enough paths that every edge gets its trials within the iterations (a
        sampled path tries about two edges): at least 32."""
        if self.config.paths_per_iteration is not None:
            return self.config.paths_per_iteration
        budget = self.config.trials_per_edge * len(self.edges) / 2
        return max(32, math.ceil(budget / max(1, self.config.max_iterations - self.config.patience)))


def examples_of(project: Project, sigs: Sequence[ToolSig]) -> dict[str, Examples]:
    """Each tool's sample arguments (kopa_gen.language.platform.Platform.examples), keyed by tool name."""
    return {s.name: project.platform(s.platform).examples(s.name) for s in sigs}


async def sample_tools(
    project: Project,
    sigs: Sequence[ToolSig],
    examples: Mapping[str, Examples],
    seed: int,
    live: bool = False,
    tries: int = 6,
) -> tuple[Samples, dict[str, list[dict[str, Any]]], list[dict[str, str]]]:
    """Run every tool on up to `tries` example-argument combinations (no faults): the values observed per field,
    the combinations that gave data (the starts of probe chains), and why the other tools cannot start one."""
    values: dict[str, dict[str, tuple[str, ...]]] = {}
    starts: dict[str, list[dict[str, Any]]] = {}
    problems: list[dict[str, str]] = []
    rng = random.Random(seed)
    platforms = sorted({s.platform for s in sigs})
    async with Session.open(project, platforms, live=live) as session:
        for sig in sigs:
            per_field: dict[str, list[str]] = {}
            last = ""
            tried: list[dict[str, Any]] = []
            for _ in range(tries):
                args = root_args(sig, examples[sig.name], rng)
                if args is None:
                    missing = [
                        p.name for p in sig.bindable if p.required and not examples[sig.name].get(p.name)
                    ]
                    last = f"no example value for required {missing}"
                    break
                if args in tried:
                    continue
                tried.append(args)
                outcome = await session.call(sig.name, args)
                if not has_data(outcome):
                    last = f"example call {args} gave no data: {outcome.text[:160]}"
                    continue
                starts.setdefault(sig.name, []).append(args)
                for row in rows_of(outcome.structured or {}):
                    for name, value in row.items():
                        seen = per_field.setdefault(name, [])
                        if value not in (None, "") and len(seen) < 50 and str(value) not in seen:
                            seen.append(str(value))
            if sig.name not in starts:
                problems.append({"tool": sig.name, "why": last})
            values[sig.name] = {k: tuple(v) for k, v in sorted(per_field.items())}
    return Samples(values), starts, problems


def candidates(sigs: Sequence[ToolSig], retriever: Retriever, kinds: Kinds) -> dict[str, list[str]]:
    """Per producer, the consumers the scorer is asked about: the retriever's neighbours, and every tool with a
    parameter of a specific kind the producer's fields carry (a typed link the retriever's text similarity may
    miss, such as an address into the legal-district list). Broad kinds (dates, years, people's names) link only
    retrieved pairs: through them every tool would link to every other."""
    out: dict[str, list[str]] = {}
    for producer in sigs:
        names = [n.tool for n in retriever.neighbors(producer.name)]
        names += [
            c.name
            for c in sigs
            if c.name not in names
            and any(not _broad(producer, c, link, kinds) for link in links(producer, c, kinds))
        ]
        out[producer.name] = names
    return out


def _broad(producer: ToolSig, consumer: ToolSig, link: Link, kinds: Kinds) -> bool:
    """A link through a broad kind: the field's or, after a transform, the parameter's."""
    out, param = producer.output(link.field), consumer.param(link.param)
    named = [out.kind if out is not None else None, param.kind if param is not None else None]
    return any(k is None or (k in kinds and kinds[k].broad) for k in named)


async def build_skeleton(
    sigs: Sequence[ToolSig],
    retriever: Retriever,
    scorer: EdgeScorer,
    samples: Samples,
    examples: Mapping[str, Examples],
    kinds: Kinds,
) -> tuple[list[Proposal], list[dict[str, str]]]:
    by_name = {s.name: s for s in sigs}
    proposals: list[Proposal] = []
    rejected: list[dict[str, str]] = []
    pairs = candidates(sigs, retriever, kinds)
    for producer in sigs:
        for name in pairs[producer.name]:
            consumer = by_name[name]
            if consumer.effect != "read":
                continue
            proposal = await scorer.score(producer, consumer, samples, examples[consumer.name], kinds)
            if proposal is None:
                continue
            if not proposal.bindings:
                rejected.append({"edge": edge_id(proposal), "why": proposal.reason})
                continue
            proposals.append(proposal)
    return sorted(proposals, key=edge_id), rejected


class Thompson:
    """One iteration's live edges as arrays, for Thompson sampling: θ for every live edge in one vectorised draw
    from its Beta posterior (numpy's seeded generator), the indices of the edges that leave a root, and each tool's
    outgoing edges. Drawing edge by edge with `random.betavariate` took a third of Phase A at 4,000 edges."""

    def __init__(self, alive: Sequence[Edge], roots: set[str], seed: int) -> None:
        self.alive = list(alive)
        self.consumer = [e.proposal.consumer for e in self.alive]
        self.alpha = np.array([e.posterior.alpha for e in self.alive], dtype=float)
        self.beta = np.array([e.posterior.beta for e in self.alive], dtype=float)
        self.starts = np.array(
            [i for i, e in enumerate(self.alive) if e.proposal.producer in roots], dtype=int
        )
        self.out: dict[str, list[int]] = {}
        for i, e in enumerate(self.alive):
            self.out.setdefault(e.proposal.producer, []).append(i)
        self.rng = np.random.default_rng(seed)

    def draw(self) -> np.ndarray[Any, np.dtype[np.float64]]:
        return self.rng.beta(self.alpha, self.beta)


class Explorer:
    """Thompson sampling over the live edges, executed probes, posterior updates and pruning."""

    def __init__(self, project: Project, phase: PhaseA) -> None:
        self.project = project
        self.phase = phase
        self.config = phase.config
        self.sigs = {s.name: s for s in phase.tools}
        self.examples = examples_of(project, phase.tools)
        self.roots = set(phase.starts)

    def routes(self) -> dict[str, Edge]:
        """Breadth-first tree of live edges from the roots, at most max_len - 1 deep, preferring the edge with the
        highest posterior mean into each tool: the route by which an under-tried edge deeper in the graph is
        reached. Tool -> the edge that reaches it."""
        into: dict[str, Edge] = {}
        seen = set(self.roots)
        frontier = sorted(self.roots)
        by_producer: dict[str, list[Edge]] = {}
        for e in self.phase.alive():
            by_producer.setdefault(e.proposal.producer, []).append(e)
        for _ in range(self.config.max_len - 1):
            nxt: list[str] = []
            for tool in frontier:
                for e in sorted(by_producer.get(tool, []), key=lambda e: (-e.posterior.mean, e.id)):
                    consumer = e.proposal.consumer
                    if consumer in seen:
                        continue
                    seen.add(consumer)
                    into[consumer] = e
                    nxt.append(consumer)
            frontier = sorted(nxt)
        return into

    def route(self, target: Edge, into: Mapping[str, Edge]) -> list[Edge] | None:
        """A path from a root that ends with `target`, or None when its producer cannot be reached."""
        chain: list[Edge] = []
        tool = target.proposal.producer
        while tool not in self.roots:
            if tool not in into:
                return None
            chain.append(into[tool])
            tool = chain[-1].proposal.producer
        chain.reverse()
        tools = {e.proposal.producer for e in chain}
        return None if target.proposal.consumer in tools else [*chain, target]

    def undecided(self, edge: Edge) -> bool:
        """Still owed trials: fewer than n_min, or fewer than the budget (`trials_per_edge`) while the posterior is
        not yet sure the edge is good (P(θ > τ) ≤ 1 − δ). An edge that keeps working is decided early; one that
        keeps failing gets its full budget before the pruning rule judges it."""
        post, c = edge.posterior, self.config.posterior
        if post.trials < c.n_min:
            return True
        return post.trials < self.config.trials_per_edge and post.p_exceeds(c.tau) <= 1 - c.delta

    def targets(self, alive: Sequence[Edge]) -> list[list[Edge]]:
        """The routes to the reachable undecided edges (see `undecided`) with the fewest attempts, not trials: an
        edge that a fault upstream keeps from a trial must not starve the others. Computed once per iteration."""
        into = self.routes()
        routes = [(e, r) for e in alive if self.undecided(e) and (r := self.route(e, into)) is not None]
        fewest = min((e.attempts for e, _ in routes), default=0)
        return [r for e, r in routes if e.attempts == fewest]

    def sample_path(
        self, rng: random.Random, draws: Thompson, targets: Sequence[list[Edge]]
    ) -> tuple[list[Edge], bool]:
        """With probability ε, one of the `targets` routes, so every edge gets the trials the pruning rule needs;
        otherwise a Thompson-sampled path: draw θ from every live edge's posterior, start at the best root edge,
        follow the best outgoing edge. The flag says which."""
        if rng.random() < self.config.epsilon and targets:
            return list(rng.choice(targets)), True
        if not len(draws.starts):
            return [], False
        theta = draws.draw()
        first = int(draws.starts[int(np.argmax(theta[draws.starts]))])
        path = [draws.alive[first]]
        visited = {path[0].proposal.producer, path[0].proposal.consumer}
        length = rng.randint(1, self.config.max_len)
        while len(path) < length:
            options = [
                i for i in draws.out.get(path[-1].proposal.consumer, ()) if draws.consumer[i] not in visited
            ]
            if not options:
                break
            path.append(draws.alive[max(options, key=lambda i: theta[i])])
            visited.add(path[-1].proposal.consumer)
        return path, False

    async def _execute(self, paths: Sequence[list[Edge]], seeds: Sequence[int]) -> list[ProbeResult]:
        """The probes, in this process or spread over workers (same results in the same order either way)."""
        jobs = []
        for path, seed in zip(paths, seeds, strict=True):
            proposals = [e.proposal for e in path]
            tools = {t: self.sigs[t] for t in (proposals[0].producer, *(e.consumer for e in proposals))}
            starts = self.phase.starts[proposals[0].producer]
            jobs.append((tools, self.examples, proposals, starts, seed, self.config.probe))
        results: dict[int, ProbeResult] = {}
        async for index, result in run_jobs(
            self.project, self.config.spread, run_probe, jobs, self.config.concurrency
        ):
            results[index] = result
        return [results[i] for i in range(len(jobs))]

    async def iterate(self, iteration: int) -> IterationLog:
        rng = random.Random(f"{self.config.seed}:iteration:{iteration}")
        alive = self.phase.alive()
        targets = self.targets(alive)
        draws = Thompson(alive, self.roots, rng.randrange(2**63))
        sampled = [self.sample_path(rng, draws, targets) for _ in range(self.phase.paths_per_iteration)]
        paths = [p for p, _ in sampled if p]
        explored = [x for p, x in sampled if p]
        seeds = [rng.randrange(2**31) for _ in paths]
        for path in paths:
            for edge in path:
                edge.attempts += 1
        results = await self._execute(paths, seeds)
        log = IterationLog(iteration, len(results), 0, 0, 0, [])
        for result, exploring in zip(results, explored, strict=True):
            self.phase.probes += 1
            self.phase.calls += len(result.steps)
            log.passed += result.passed
            if not exploring:
                log.exploit_paths += 1
                log.exploit_passed += result.passed
            for eid, outcome in result.outcomes:
                self.phase.edges[eid].posterior.update(outcome, self.config.posterior)
                if outcome != "inconclusive":
                    log.steps += 1
                    log.step_successes += outcome == "success"
        for edge in self.phase.alive():
            if edge.posterior.prunable(self.config.posterior):
                edge.pruned_at = iteration
                log.pruned.append(edge.id)
        self.phase.iterations.append(log)
        return log

    def converged(self) -> bool:
        logs = self.phase.iterations
        c = self.config
        if len(logs) < max(c.min_iterations, c.patience):
            return False
        quiet = all(not log.pruned for log in logs[-c.patience :])
        into = self.routes()
        tried = not any(self.undecided(e) for e in self.phase.alive() if self.route(e, into) is not None)
        return quiet and tried

    async def audit(self) -> None:
        """Every skeleton edge, `audit_trials` probes with faults on, each along the route from a root through G*
        that ends with the edge; only the audited edge's own outcome counts (`not_reached` when a fault upstream
        stopped the route, `unreachable` when no route reaches its producer)."""
        rng = random.Random(f"{self.config.seed}:audit")
        into = self.routes()
        jobs: list[tuple[Edge, list[Edge], int]] = []
        edges = sorted(self.phase.edges.values(), key=lambda e: e.id)
        if len(edges) > self.config.audit_edges:
            edges = sorted(rng.sample(edges, self.config.audit_edges), key=lambda e: e.id)
        for edge in edges:
            path = self.route(edge, into)
            if path is None:
                self.phase.audit[edge.id] = {"unreachable": self.config.audit_trials}
                continue
            jobs.extend((edge, path, rng.randrange(2**31)) for _ in range(self.config.audit_trials))
        results = await self._execute([p for _, p, _ in jobs], [s for _, _, s in jobs])
        for (edge, _, _), result in zip(jobs, results, strict=True):
            self.phase.probes += 1
            self.phase.calls += len(result.steps)
            counts = self.phase.audit.setdefault(edge.id, {})
            mine = [outcome for eid, outcome in result.outcomes if eid == edge.id]
            key = mine[0] if mine else ("root_failed" if result.root_failed else "not_reached")
            counts[key] = counts.get(key, 0) + 1


async def run_phase_a(
    project: Project,
    scorer: EdgeScorer,
    config: GraphConfig,
    progress: Callable[[IterationLog, PhaseA], None] | None = None,
) -> PhaseA:
    t0 = time.perf_counter()
    sigs = load_signatures(project, list(config.platforms) if config.platforms else None)
    if config.tools is not None:
        unknown = sorted(set(config.tools) - {s.name for s in sigs})
        if unknown:
            raise NotFound(f"no tool {', '.join(unknown)} on the platforms of the graph")
        sigs = [s for s in sigs if s.name in config.tools]
    examples = examples_of(project, sigs)
    samples, starts, problems = await sample_tools(project, sigs, examples, config.seed, config.probe.live)
    t1 = time.perf_counter()
    retriever = Retriever(sigs, config.retriever)
    retriever.all_neighbors()
    t2 = time.perf_counter()
    proposals, rejected = await build_skeleton(
        sigs, retriever, scorer, samples, examples, kind_table(project)
    )
    t3 = time.perf_counter()
    edges = {}
    for p in proposals:
        post = Posterior.prior(p.score, config.posterior)
        edges[edge_id(p)] = Edge(p, post, (post.alpha, post.beta))
    phase = PhaseA(config, scorer.name, sigs, edges, rejected, starts, problems)
    phase.world_seed = project.world.seed
    phase.spec_hash = spec_hash(project, sorted({s.platform for s in sigs}))
    explorer = Explorer(project, phase)
    if edges and phase.starts:
        for iteration in range(1, config.max_iterations + 1):
            log = await explorer.iterate(iteration)
            if progress:
                progress(log, phase)
            if explorer.converged():
                break
    t4 = time.perf_counter()
    await explorer.audit()
    t5 = time.perf_counter()
    phase.timings = {
        "samples_s": t1 - t0,
        "retrieval_s": t2 - t1,
        "scoring_s": t3 - t2,
        "iterations_s": t4 - t3,
        "audit_s": t5 - t4,
    }
    return phase


def problems(phase: PhaseA) -> list[str]:
    """What makes a run useless, said plainly (an empty G* is reported, never written silently)."""
    out: list[str] = []
    if not phase.starts:
        out.append(
            "no tool can start a chain: every example call failed or lacks examples "
            + "; ".join(f"{p['tool']}: {p['why']}" for p in phase.unreachable[:5])
        )
    if not phase.edges:
        failed = [r for r in phase.rejected if r["why"].startswith("endpoint ")]
        out.append(
            "the scorer found no candidate edge between these tools (skeleton is empty)"
            + (f"; its endpoint failed on {len(failed)} of the pairs: {failed[0]['why']}" if failed else "")
        )
    elif not phase.alive():
        out.append(f"all {len(phase.edges)} skeleton edges were pruned: no edge executes successfully")
    return out


def _r(x: float) -> float:
    return round(x, 6)


def analysis(phase: PhaseA) -> dict[str, Any]:
    """The paper's Phase A table: execution success of skeleton / G* / pruned edges in the audit, share of edges
    that never succeeded, and trajectory pass rate / step success rate over the iterations."""

    def group(edges: list[Edge]) -> dict[str, Any]:
        def runs(c: Mapping[str, int]) -> int:
            return c.get("success", 0) + c.get("structural", 0) + c.get("environmental", 0)

        counted = [c for c in (phase.audit.get(e.id, {}) for e in edges) if runs(c)]
        ok = sum(c.get("success", 0) for c in counted)
        total = sum(runs(c) for c in counted)
        never = sum(1 for c in counted if c.get("success", 0) == 0)
        return {
            "edges": len(edges),
            "audited": len(counted),
            "unreachable": sum(1 for e in edges if "unreachable" in phase.audit.get(e.id, {})),
            "executions": total,
            "success_rate": _r(ok / total) if total else None,
            "never_succeeded": _r(never / len(counted)) if counted else None,
        }

    all_edges = list(phase.edges.values())
    logs = phase.iterations
    window = max(1, min(10, len(logs) // 4)) if logs else 1

    def mean(values: list[float]) -> float | None:
        return _r(sum(values) / len(values)) if values else None

    return {
        "skeleton": group(all_edges),
        "g_star": group([e for e in all_edges if e.alive]),
        "pruned": group([e for e in all_edges if not e.alive]),
        "iterations": len(logs),
        "trajectory_pass_rate": {
            "first": mean([x.pass_rate for x in logs[:window]]),
            "last": mean([x.pass_rate for x in logs[-window:]]),
            "window": window,
        },
        "thompson_pass_rate": {  # the sampled paths only: what the posteriors have learned
            "first": mean([x.exploit_pass_rate for x in logs[:window] if x.exploit_paths]),
            "last": mean([x.exploit_pass_rate for x in logs[-window:] if x.exploit_paths]),
            "window": window,
        },
        "step_success_rate": {
            "first": mean([x.step_success_rate for x in logs[:window]]),
            "last": mean([x.step_success_rate for x in logs[-window:]]),
            "window": window,
        },
    }


def to_json(phase: PhaseA) -> str:
    """G* as reviewable, deterministic JSON (no timings: same seed, same bytes)."""
    c = phase.config
    edges = []
    for edge in sorted(phase.edges.values(), key=lambda e: e.id):
        p, post = edge.proposal, edge.posterior
        edges.append(
            {
                "id": edge.id,
                "producer": p.producer,
                "consumer": p.consumer,
                "status": "kept" if edge.alive else "pruned",
                "pruned_at": edge.pruned_at,
                "bindings": [
                    {"param": b.param, "field": b.field, "score": _r(b.score), "pipe": b.pipe}
                    for b in p.bindings
                ],
                "defaults": {k: list(v) for k, v in sorted(p.defaults.items())},
                "score": _r(p.score),
                "prior": {"alpha": _r(edge.prior[0]), "beta": _r(edge.prior[1])},
                "trials": post.trials,
                "successes": post.successes,
                "failures": dict(sorted(post.failures.items())),
                "posterior": {
                    "alpha": _r(post.alpha),
                    "beta": _r(post.beta),
                    "mean": _r(post.mean),
                    "p_exceeds_tau": _r(post.p_exceeds(c.posterior.tau)),
                },
                "audit": dict(sorted(phase.audit.get(edge.id, {}).items())),
                "reason": p.reason,
            }
        )
    doc = {
        "generated_by": "kopa-gen edge graph",
        "seed": c.seed,
        "world_seed": phase.world_seed,
        "spec_hash": phase.spec_hash,
        "scorer": phase.scorer,
        "config": {
            "platforms": sorted({t.platform for t in phase.tools}),
            "retriever": vars(c.retriever),
            "posterior": vars(c.posterior),
            "fault_rate": c.probe.fault_rate,
            "epsilon": c.epsilon,
            "max_len": c.max_len,
            "trials_per_edge": c.trials_per_edge,
            "paths_per_iteration": phase.paths_per_iteration,
            "max_iterations": c.max_iterations,
            "audit_trials": c.audit_trials,
        },
        "tools": [{"name": t.name, "platform": t.platform, "domain": t.domain} for t in phase.tools],
        "roots": sorted(phase.starts),
        "starts": {k: v for k, v in sorted(phase.starts.items())},
        "unreachable": phase.unreachable,
        "rejected": phase.rejected,
        "analysis": analysis(phase),
        "iterations": [
            {
                "iteration": x.iteration,
                "paths": x.paths,
                "pass_rate": _r(x.pass_rate),
                "thompson_pass_rate": _r(x.exploit_pass_rate),
                "step_success_rate": _r(x.step_success_rate),
                "pruned": x.pruned,
            }
            for x in phase.iterations
        ],
        "edges": edges,
    }
    GraphDoc.model_validate(doc)  # what `edge synth` reads back: a field renamed here fails here
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
