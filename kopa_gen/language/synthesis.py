"""The records EDGE writes and reads back: the G* document of Phase A (`graph.json`, what `kopa-gen edge synth`
starts from) and the provenance of every synthesized task (`synth.json`: the pattern, the junctions, the edges it
used with their posterior and trials, the world seed and the spec hash). Both are validated where they are read,
so a file of another shape fails naming its field; their JSON Schemas are in generated/schemas/."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kopa_gen.language.kopa import StrictModel

TaskType = Literal["seq", "fan", "drv", "sem", "cmp", "cond", "mixed"]

Scalar = str | int


class BindingDoc(StrictModel):
    param: str = Field(description="The consumer's argument.")
    field: str = Field(description="The producer's response field.")
    score: float = Field(description="The scorer's fit of this binding.")
    pipe: str = Field(default="", description="The typed transform the value goes through ('' = as is).")


class PriorDoc(StrictModel):
    alpha: float
    beta: float


class PosteriorDoc(StrictModel):
    alpha: float
    beta: float
    mean: float
    p_exceeds_tau: float


class EdgeDoc(StrictModel):
    """One skeleton edge and what Phase A learnt of it."""

    id: str = Field(description="producer->consumer")
    producer: str
    consumer: str
    status: Literal["kept", "pruned"]
    pruned_at: int | None = Field(description="The iteration that pruned it.")
    bindings: list[BindingDoc] = Field(
        min_length=1, description="Best first: the first is the junction EDGE types."
    )
    defaults: dict[str, list[Scalar]] = Field(description="Literal values for unbound required arguments.")
    score: float = Field(description="The scorer's feasibility score (the Beta prior's mean).")
    prior: PriorDoc
    trials: int
    successes: int
    failures: dict[str, int] = Field(description="By kind: structural, environmental, inconclusive.")
    posterior: PosteriorDoc
    audit: dict[str, int] = Field(description="Outcomes of the audit's probes.")
    reason: str = ""


class GroupDoc(StrictModel):
    edges: int
    audited: int
    unreachable: int
    executions: int
    success_rate: float | None
    never_succeeded: float | None


class RateDoc(StrictModel):
    first: float | None
    last: float | None
    window: int


class AnalysisDoc(StrictModel):
    """The paper's Phase A table."""

    skeleton: GroupDoc
    g_star: GroupDoc
    pruned: GroupDoc
    iterations: int
    trajectory_pass_rate: RateDoc
    thompson_pass_rate: RateDoc
    step_success_rate: RateDoc


class IterationDoc(StrictModel):
    iteration: int
    paths: int
    pass_rate: float
    thompson_pass_rate: float
    step_success_rate: float
    pruned: list[str]


class ToolRef(StrictModel):
    name: str
    platform: str
    domain: str


class GraphDoc(StrictModel):
    """graph.json: the execution-grounded tool-dependency graph G* (`kopa-gen edge graph`)."""

    generated_by: str
    seed: int
    world_seed: int = Field(description="The world the probes ran in.")
    spec_hash: str = Field(
        description="sha256 over the platform specs and meaning files the graph was built from."
    )
    scorer: str
    config: dict[str, object] = Field(description="The Phase A settings (retriever, posterior, budget).")
    tools: list[ToolRef]
    roots: list[str] = Field(description="Tools whose example calls gave data: where probe chains start.")
    starts: dict[str, list[dict[str, Scalar]]]
    unreachable: list[dict[str, str]]
    rejected: list[dict[str, str]] = Field(
        description="Pairs the scorer (or the type check) turned down, and why."
    )
    analysis: AnalysisDoc
    iterations: list[IterationDoc]
    edges: list[EdgeDoc]

    def kept(self) -> list[EdgeDoc]:
        return [e for e in self.edges if e.status == "kept"]


class JunctionDoc(StrictModel):
    """A hand-off as EDGE typed it."""

    kind: Literal["seq", "fan", "drv"]
    cardinality: int = Field(description="Distinct values that could cross.")
    crossed: int = Field(
        description="Values that crossed (1 for Seq; 2..φ for Fan; what the reduction kept)."
    )
    rows: int = Field(description="Rows behind the step.")
    field: str = Field(description="The producer field handed on.")
    reduction: str = Field(default="", description="Drv: max, min, gte, lte, latest, after, eq.")
    pivot: str = Field(default="", description="Drv: the threshold or category, as the query says it.")


class UsedEdge(StrictModel):
    id: str
    posterior_mean: float
    trials: int


class Provenance(StrictModel):
    """Where one synthesized task came from."""

    type: TaskType = Field(description="The paper's type, read from what the chain did (features).")
    recipe: str = Field(description="The pattern module that built it.")
    features: list[str]
    start: str = Field(description="The lookup tool and the name it was given.")
    junctions: list[JunctionDoc]
    edges: list[UsedEdge]
    platforms: list[str]
    calls: int = Field(description="Logical calls: gold calls and fan-out items, pages apart.")
    pages: int = Field(description="Calls with every page of the gold page size.")
    ask: str = Field(
        description="What the question asks (value, count, sum, avg, max, min, argmax, list, diff)."
    )
    world_seed: int
    spec_hash: str
    graph_seed: int
    writer: str = Field(
        description="Who worded the query: composed (the offline writer), or llm when a rewrite was kept."
    )
    first_page: bool = Field(
        default=False,
        description="The first-page policy (never asks for a second page) solves it: no call of the chain needs "
        "more than the first page. Kept within `--max-first-page-share`.",
    )
