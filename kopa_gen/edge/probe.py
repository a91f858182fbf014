"""Executing EDGE probes: a chain of tool calls along candidate edges in one fresh Session, each edge's outcome
classified from the platform's result-code categories (kopa_gen.language.kopa.Category):

- success: the consumer answered with data;
- structural: the call was wrong — arguments rejected, a bad-parameter or auth code, the bound field empty in
  every producer row, or no data *caused by the binding* (a control call with the argument's example value
  instead of the handed-over one finds data);
- environmental: quota, rate, server error, time-out (the same call may work later);
- inconclusive: no data, and the control call found none either (the defaults, not the binding, are to blame).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kopa_gen.client.client import RetryPolicy
from kopa_gen.edge.links import apply
from kopa_gen.edge.posterior import Outcome
from kopa_gen.edge.scorer import Examples, Proposal
from kopa_gen.edge.signatures import ToolSig
from kopa_gen.language.functions import coerce_arg
from kopa_gen.mcp.toolbox import ToolOutcome
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import Faults, SandboxConfig

STRUCTURAL = frozenset({"bad_param", "auth"})


@dataclass(frozen=True)
class ProbeConfig:
    fault_rate: float = 0.1  # the sandbox's seeded fault injection, on during Phase A
    live: bool = False


@dataclass(frozen=True)
class Step:
    """One executed call of a probe."""

    tool: str
    args: dict[str, Any]
    outcome: Outcome | None  # None for the root call
    detail: str
    result: dict[str, Any] | None


@dataclass
class ProbeResult:
    steps: list[Step] = field(default_factory=list)
    outcomes: list[tuple[str, Outcome]] = field(default_factory=list)  # (edge id, outcome) in path order
    root_failed: str | None = None

    @property
    def passed(self) -> bool:
        return self.root_failed is None and all(o == "success" for _, o in self.outcomes)


def rows_of(result: Any) -> list[dict[str, Any]]:
    """The rows of a tool's structured result (a one-record result as one row; anything else: none)."""
    if not isinstance(result, Mapping):
        return []
    rows = result.get("rows")
    if isinstance(rows, list):
        return [r for r in rows if isinstance(r, dict)]
    record = result.get("record")
    return [record] if isinstance(record, dict) else []


def has_data(outcome: ToolOutcome) -> bool:
    return not outcome.is_error and outcome.structured is not None and bool(rows_of(outcome.structured))


def coerce(value: Any, sig: ToolSig, name: str) -> Any:
    """A handed-over value in the type the consumer's argument takes (kopa_gen.language.functions.coerce_arg, the
    gold walker's rule)."""
    param = sig.param(name)
    return coerce_arg(param.type if param is not None else None, value)


def root_args(sig: ToolSig, examples: Examples, rng: random.Random) -> dict[str, Any] | None:
    """Starting arguments from the platform's examples: every required argument, or (when none is required)
    the first argument that has examples, so the root names one entity. None when a required one has none."""
    args: dict[str, Any] = {}
    for param in sig.bindable:
        values = examples.get(param.name, ())
        if param.required:
            if not values:
                return None
            args[param.name] = rng.choice(list(values))
    if not any(p.required for p in sig.bindable):
        for param in sig.bindable:
            values = examples.get(param.name, ())
            if values:
                args[param.name] = rng.choice(list(values))
                break
    return {**sig.start, **args}


def classify(outcome: ToolOutcome) -> Outcome | None:
    """The outcome of a consumer call, or None when it needs a control call (no data)."""
    if has_data(outcome):
        return "success"
    if not outcome.is_error or outcome.category == "no_data":
        return None
    if outcome.category in STRUCTURAL:
        return "structural"
    return "environmental"


def open_probe_session(project: Project, tools: Sequence[ToolSig], seed: int, config: ProbeConfig) -> Session:
    faults = Faults(rate=config.fault_rate, timeout_s=0.05)
    sandbox = SandboxConfig(seed=seed, limits=False, faults=faults)
    platforms = sorted({t.platform for t in tools})
    return Session.open(project, platforms, sandbox=sandbox, retry=RetryPolicy(attempts=1), live=config.live)


async def run_probe(
    project: Project,
    sigs: Mapping[str, ToolSig],
    examples: Mapping[str, Examples],  # per platform
    path: Sequence[Proposal],
    starts: Sequence[dict[str, Any]],
    seed: int,
    config: ProbeConfig,
) -> ProbeResult:
    """Execute a chain root → consumer → consumer … along `path` (consecutive edges share a tool), starting
    from one of the root's argument combinations that gave data when sampled. An argument the edge does not bind
    keeps the value an earlier call of the chain gave it (the city a route was looked up in), else takes one of
    the edge's defaults: drawn afresh, a route of 청주 was asked for in 부산 and the edge pruned."""
    rng = random.Random(seed)
    tools = [sigs[path[0].producer], *(sigs[e.consumer] for e in path)]
    result = ProbeResult()
    root = tools[0]
    if not starts:
        result.root_failed = f"{root.name}: no example arguments that give data"
        return result
    args = dict(rng.choice(list(starts)))
    async with open_probe_session(project, tools, seed, config) as session:
        outcome = await session.call(root.name, args)
        result.steps.append(Step(root.name, args, None, outcome.text[:200], outcome.structured))
        if not has_data(outcome):
            result.root_failed = f"{root.name}: {outcome.text[:200]}"
            return result
        current = outcome.structured or {}
        said = dict(args)  # literal arguments so far: a route's city is the city its lookup was asked in
        for edge in path:
            consumer = sigs[edge.consumer]
            rows = [
                r for r in rows_of(current) if all(r.get(b.field) not in (None, "") for b in edge.bindings)
            ]
            if not rows:
                result.outcomes.append((edge_id(edge), "structural"))
                result.steps.append(
                    Step(consumer.name, {}, "structural", "bound field empty in every row", None)
                )
                return result
            row = rng.choice(rows)
            try:
                call_args = {
                    b.param: coerce(apply(row[b.field], b.pipe), consumer, b.param) for b in edge.bindings
                }
            except ValueError as exc:  # the transform does not fit the value: the link is wrong
                result.outcomes.append((edge_id(edge), "structural"))
                result.steps.append(Step(consumer.name, {}, "structural", str(exc), None))
                return result
            for name, values in sorted(edge.defaults.items()):
                call_args.setdefault(name, said[name] if name in said else rng.choice(list(values)))
            for name, value in consumer.start.items():
                call_args.setdefault(name, value)
            bound = {b.param for b in edge.bindings}
            said.update({k: v for k, v in call_args.items() if k not in bound})
            outcome = await session.call(consumer.name, call_args)
            verdict = classify(outcome)
            detail = outcome.text[:200]
            if verdict is None:
                verdict, detail = await control(session, consumer, edge, call_args, examples, rng)
            result.outcomes.append((edge_id(edge), verdict))
            result.steps.append(Step(consumer.name, call_args, verdict, detail, outcome.structured))
            if verdict != "success":
                return result
            current = outcome.structured or {}
    return result


async def control(
    session: Session,
    consumer: ToolSig,
    edge: Proposal,
    call_args: dict[str, Any],
    examples: Mapping[str, Examples],
    rng: random.Random,
) -> tuple[Outcome, str]:
    """No data: was it the handed-over value? Call again with the junction argument's example value."""
    key = edge.bindings[0].param
    values = [v for v in examples[consumer.name].get(key, ()) if str(v) != str(call_args[key])]
    if not values:
        return "structural", f"no data for {key}={call_args[key]!r} and no example value to compare with"
    probe = dict(call_args, **{key: rng.choice(values)})
    outcome = await session.call(consumer.name, probe)
    if has_data(outcome):
        return "structural", f"no data for {key}={call_args[key]!r}, but data for the example {probe[key]!r}"
    if outcome.is_error and outcome.category not in ("no_data", None):
        return "inconclusive", f"control call failed: {outcome.text[:120]}"
    return "inconclusive", "no data with the example value either"


def edge_id(edge: Proposal) -> str:
    return f"{edge.producer}->{edge.consumer}"
