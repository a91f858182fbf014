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
    default_of,
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


def _patterns() -> tuple[str, ...]:
    from kopa_gen.edge.synth import PATTERNS

    return PATTERNS


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
    paths: int
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
    per_pattern: int
    patterns: list[str]
    max_starts: int
    writer: EndpointSettings | None = field(default=None, metadata={"endpoint": "writer"})
    resolver: EndpointSettings | None = field(
        default=None, metadata={"endpoint": "resolver"}
    )  # None: the oracle re-solves
    verifier: EndpointSettings | None = field(
        default=None, metadata={"endpoint": "verifier"}
    )  # None: nothing is replaced


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
    config = SynthConfig(
        seed=o.seed,
        per_pattern=o.per_pattern,
        patterns=tuple(o.patterns),  # type: ignore[arg-type]  # argparse checked the choices
        max_starts=o.max_starts,
        resolver="openai" if o.resolver else "oracle",
        resolver_endpoint=o.resolver,
        verifier=o.verifier,
    )
    writer = None
    if o.writer:
        from kopa_gen.edge.writer import LLMWriter

        writer = LLMWriter(o.writer)
    return asyncio.run(edge_synth(project, Path(o.graph), Path(o.out), config, writer))


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
        default=ConfigDefault(f"{_GRAPH}.paths_per_iteration"),
        help="sampled paths per iteration",
    )
    eg.add_argument(
        "--epsilon", type=float, default=ConfigDefault(f"{_GRAPH}.epsilon"), help="exploration floor"
    )
    eg.add_argument(
        "--fault-rate",
        type=float,
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
        "--per-pattern",
        type=positive_int,
        default=ConfigDefault(f"{_SYNTH}.per_pattern"),
        help="tasks kept per pattern",
    )
    es.add_argument(
        "--patterns",
        nargs="+",
        choices=Choices(_patterns),
        default=ConfigDefault(f"{_SYNTH}.patterns", convert=list),
        help="trajectory patterns",
    )
    es.add_argument(
        "--max-starts",
        type=positive_int,
        default=ConfigDefault(f"{_SYNTH}.max_starts"),
        help="starting arguments tried per root tool",
    )
    Endpoint.add(es, "writer", url_help="OpenAI-compatible endpoint for the LLM query writer")
    Endpoint.add(
        es,
        "resolver",
        url_help="OpenAI-compatible endpoint of the re-solve model (default: the oracle re-solves)",
    )
    Endpoint.add(
        es,
        "verifier",
        url_help="OpenAI-compatible judge that verifies a re-solver's different answer before it replaces the "
        "stored one (without it nothing is replaced)",
    )
    es.set_defaults(func=lambda args: cmd_edge_synth(parse(SynthOptions, args)))
