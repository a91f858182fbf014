"""`kopa-gen edge graph` and `edge synth`: EDGE's execution-grounded tool graph and the trajectories drawn from
it. Every default lives in the edge config classes (GraphConfig, ProbeConfig, RetrieverConfig, SynthConfig)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kopa_gen.cli.options import (
    Choices,
    ConfigDefault,
    Endpoint,
    Subparsers,
    UsageError,
    default_of,
    fraction,
    load,
    parse,
    positive_int,
    spread,
    spread_arguments,
)

if TYPE_CHECKING:
    from kopa_gen.language.settings import EndpointSettings

_GRAPH = "kopa_gen.edge.graph:GraphConfig"
_SYNTH = "kopa_gen.edge.dataset:SynthConfig"
_RETRIEVER = "kopa_gen.edge.retriever:RetrieverConfig"


def _scorer_names() -> list[str]:
    from kopa_gen.edge.scorer import SCORERS

    return SCORERS.names()


@dataclass(frozen=True, kw_only=True)
class GraphOptions:
    """`kopa-gen edge graph`."""

    root: str | None = None
    out: str = "runs/edge"
    platforms: list[str] | None = None  # None: every platform with a domain
    seed: int
    iterations: int
    paths: int | None
    trials: int
    epsilon: float
    fault_rate: float
    audit: int
    retriever_model: str
    same_domain: int
    cross_domain: int
    scorer: str = "offline"
    scorer_endpoint: EndpointSettings | None = field(default=None, metadata={"endpoint": "scorer"})
    live: bool = False
    workers: int
    ray: str | None = None


@dataclass(frozen=True, kw_only=True)
class SynthOptions:
    """`kopa-gen edge synth`."""

    root: str | None = None
    graph: str = "runs/edge/graph.json"
    out: str = "runs/edge/tasks"
    seed: int
    tasks: int
    attempts: int
    exclude_platforms: list[str] = field(default_factory=list)
    include_held_out: bool = False
    max_rows: int
    max_guess: float
    max_domain_share: float
    max_ending_share: float
    max_first_page_share: float
    writer: EndpointSettings | None = field(default=None, metadata={"endpoint": "writer"})
    judge: EndpointSettings | None = field(default=None, metadata={"endpoint": "judge"})
    second_judge: EndpointSettings | None = field(default=None, metadata={"endpoint": "second-judge"})
    resolver: EndpointSettings | None = field(
        default=None, metadata={"endpoint": "resolver"}
    )  # None: no re-solve stage
    verifier: EndpointSettings | None = field(
        default=None, metadata={"endpoint": "verifier"}
    )  # None: nothing replaced
    workers: int
    ray: str | None = None

    def __post_init__(self) -> None:
        if (self.judge is None) != (self.second_judge is None):
            raise UsageError(
                "the LLM static filter needs two judges that must agree: give both --judge-base-url/--judge-model "
                "and --second-judge-base-url/--second-judge-model, or neither"
            )


def cmd_edge_graph(o: GraphOptions) -> int:
    from kopa_gen.edge.commands import edge_graph, make_scorer
    from kopa_gen.edge.graph import GraphConfig
    from kopa_gen.edge.probe import ProbeConfig
    from kopa_gen.edge.retriever import RetrieverConfig

    project = load(o.root)
    config = GraphConfig(
        seed=o.seed,
        platforms=tuple(o.platforms) if o.platforms else None,
        retriever=RetrieverConfig(
            model=o.retriever_model, same_domain=o.same_domain, cross_domain=o.cross_domain
        ),
        probe=ProbeConfig(fault_rate=o.fault_rate, live=o.live),
        epsilon=o.epsilon,
        paths_per_iteration=o.paths,
        trials_per_edge=o.trials,
        max_iterations=o.iterations,
        min_iterations=min(o.iterations, GraphConfig.min_iterations),
        audit_trials=o.audit,
        spread=spread(o.workers, o.ray),
    )
    scorer = make_scorer(o.scorer, o.scorer_endpoint)
    return asyncio.run(edge_graph(project, config, scorer, Path(o.out)))


def cmd_edge_synth(o: SynthOptions) -> int:
    from kopa_gen.edge.commands import edge_synth
    from kopa_gen.edge.dataset import SynthConfig

    project = load(o.root)
    judges = tuple(j for j in (o.judge, o.second_judge) if j is not None)
    config = SynthConfig(
        seed=o.seed,
        tasks=o.tasks,
        attempts=o.attempts,
        exclude=tuple(
            dict.fromkeys([*([] if o.include_held_out else project.held_out), *o.exclude_platforms])
        ),
        max_rows=o.max_rows,
        max_guess=o.max_guess,
        max_domain_share=o.max_domain_share,
        max_ending_share=o.max_ending_share,
        max_first_page_share=o.max_first_page_share,
        judges=judges,
        resolver=o.resolver,
        verifier=o.verifier,
    )
    writer = None
    if o.writer:
        from kopa_gen.edge.writer import LLMWriter

        writer = LLMWriter(o.writer)
    return asyncio.run(
        edge_synth(project, Path(o.graph), Path(o.out), config, writer, spread(o.workers, o.ray))
    )


def add_commands(sub: Subparsers) -> None:
    ed = sub.add_parser("edge", help="EDGE: execution-grounded tool graph and trajectory synthesis")
    eds = ed.add_subparsers(dest="edge_command", required=True)
    eg = eds.add_parser("graph", help="Phase A: skeleton, Thompson-sampled probes, pruning -> G*")
    eg.add_argument(
        "--out",
        default=default_of(GraphOptions, "out"),
        help="writes graph.json, graph.svg, graph.dot, analysis.md",
    )
    eg.add_argument("--platforms", nargs="*", help="platforms (default: every platform with a domain)")
    eg.add_argument(
        "--seed", type=int, default=ConfigDefault(f"{_GRAPH}.seed"), help="sampling and fault seed"
    )
    eg.add_argument(
        "--iterations",
        type=positive_int,
        default=ConfigDefault(f"{_GRAPH}.max_iterations"),
        help="at most this many iterations",
    )
    eg.add_argument(
        "--paths",
        type=positive_int,
        default=None,
        help="sampled paths per iteration (default: from the skeleton's size, so every edge gets its trials)",
    )
    eg.add_argument(
        "--trials",
        type=positive_int,
        default=ConfigDefault(f"{_GRAPH}.trials_per_edge"),
        help="trials an edge gets before Phase A stops trying it (fewer when it keeps working)",
    )
    eg.add_argument(
        "--epsilon", type=fraction, default=ConfigDefault(f"{_GRAPH}.epsilon"), help="exploration floor"
    )
    eg.add_argument(
        "--fault-rate",
        type=fraction,
        default=ConfigDefault("kopa_gen.edge.probe:ProbeConfig.fault_rate"),
        help="sandbox fault injection during probes",
    )
    eg.add_argument(
        "--audit",
        type=int,
        default=ConfigDefault(f"{_GRAPH}.audit_trials"),
        help="audit executions per skeleton edge",
    )
    eg.add_argument(
        "--retriever-model",
        default=ConfigDefault(f"{_RETRIEVER}.model"),
        help="sentence-transformers model (default: the offline packaged MiniLM); 'none' = lexical only",
    )
    eg.add_argument(
        "--same-domain",
        type=int,
        default=ConfigDefault(f"{_RETRIEVER}.same_domain"),
        help="retrieved consumers per tool, same domain",
    )
    eg.add_argument(
        "--cross-domain",
        type=int,
        default=ConfigDefault(f"{_RETRIEVER}.cross_domain"),
        help="retrieved consumers per tool, other domains",
    )
    eg.add_argument(
        "--scorer",
        choices=Choices(_scorer_names),
        default=default_of(GraphOptions, "scorer"),
        help="offline (deterministic rules) or llm",
    )
    Endpoint.add(eg, "scorer", url_help="OpenAI-compatible endpoint for --scorer llm")
    eg.add_argument("--live", action="store_true", help="probe the real services (keys from the environment)")
    spread_arguments(eg, "probes")
    eg.set_defaults(func=lambda args: cmd_edge_graph(parse(GraphOptions, args)))

    es = eds.add_parser("synth", help="Phase B: typed trajectories from G* -> tasks in the KOPA-Bench schema")
    es.add_argument(
        "--graph", default=default_of(SynthOptions, "graph"), help="what `kopa-gen edge graph` wrote"
    )
    es.add_argument("--out", default=default_of(SynthOptions, "out"), help="the task set folder to write")
    es.add_argument("--seed", type=int, default=ConfigDefault(f"{_SYNTH}.seed"), help="synthesis seed")
    es.add_argument(
        "--tasks",
        type=positive_int,
        default=ConfigDefault(f"{_SYNTH}.tasks"),
        help="tasks to keep, over all types in the paper's mix",
    )
    es.add_argument(
        "--attempts",
        type=positive_int,
        default=ConfigDefault(f"{_SYNTH}.attempts"),
        help="starts tried per task before its slot is given up",
    )
    es.add_argument(
        "--exclude-platforms",
        nargs="*",
        default=[],
        help="platforms no chain may touch, besides the held-out split of specs/domains.yaml",
    )
    es.add_argument(
        "--include-held-out",
        action="store_true",
        help="let chains touch the held-out platforms of specs/domains.yaml (their tasks then test nothing unseen)",
    )
    es.add_argument(
        "--max-rows",
        type=positive_int,
        default=ConfigDefault(f"{_SYNTH}.max_rows"),
        help="a result with more rows is too large to read whole; chains avoid it",
    )
    es.add_argument(
        "--max-guess",
        type=fraction,
        default=ConfigDefault(f"{_SYNTH}.max_guess"),
        help="drop a task that guessing from its answer pool passes more often than this",
    )
    es.add_argument(
        "--max-domain-share",
        type=fraction,
        default=ConfigDefault(f"{_SYNTH}.max_domain_share"),
        help="no domain keeps more than this share of --tasks (the others are tried on)",
    )
    es.add_argument(
        "--max-ending-share",
        type=fraction,
        default=ConfigDefault(f"{_SYNTH}.max_ending_share"),
        help="no ending (last tool and question) and no chain shape (every step's tools and the question) has "
        "more than this share of --tasks",
    )
    es.add_argument(
        "--max-first-page-share",
        type=fraction,
        default=ConfigDefault(f"{_SYNTH}.max_first_page_share"),
        help="tasks the first-page policy solves (no call needs a second page) are at most this share of those kept",
    )
    Endpoint.add(es, "writer", url_help="OpenAI-compatible endpoint that rewords the composed questions")
    Endpoint.add(es, "judge", url_help="first judge of the LLM static filter (needs --second-judge-*)")
    Endpoint.add(es, "second-judge", url_help="second judge of the LLM static filter; both must keep a task")
    Endpoint.add(
        es, "resolver", url_help="OpenAI-compatible model that re-solves every task (off by default)"
    )
    Endpoint.add(
        es,
        "verifier",
        url_help="OpenAI-compatible judge that verifies a re-solver's different answer before it replaces the "
        "stored one (without it nothing is replaced)",
    )
    spread_arguments(es, "shards of a run over 200 tasks (the same tasks wherever they run)")
    es.set_defaults(func=lambda args: cmd_edge_synth(parse(SynthOptions, args)))
