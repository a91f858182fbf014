"""Edge scorers: given a producer tool, a candidate consumer and what executing them looked like, say how
feasible it is to feed the producer's output into the consumer (a score in [0, 1]), through which bindings
(consumer argument ← producer field), and which default values fill the consumer's unbound arguments.

Two scorers behind one Protocol:
- `offline` (default): a deterministic rule scorer. Bindings are the typed links (kopa_gen/edge/links.py: same
  kind of value, or a declared transform); the score weighs names, descriptions and the value formats observed in
  sandbox samples. It is an algorithm, named as one; it is not a model.
- `llm`: any OpenAI-compatible chat-completions endpoint, asked for the same three things as JSON; a binding it
  proposes between values of different kinds is rejected by type, with the reason.

A consumer's required argument that no binding fills needs literal values a query can state (its labels, or the
platform's examples where the meaning says how to phrase them); without them the pair is no edge.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kopa_gen.edge.chat import ChatClient
from kopa_gen.edge.links import fits, links, literal_values
from kopa_gen.edge.signatures import OutField, Param, ToolSig
from kopa_gen.language.meaning import Kind
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.plugins import Registry
from kopa_gen.policies.openai import EndpointError

Examples = Mapping[str, Sequence[str | int]]


@dataclass(frozen=True)
class Binding:
    param: str  # consumer argument
    field: str  # producer result field
    score: float
    pipe: str = ""  # the typed transform the value goes through ('' = as is; kopa_gen/edge/links.py)


@dataclass(frozen=True)
class Proposal:
    """A scorer's verdict on one (producer → consumer) pair."""

    producer: str
    consumer: str
    score: float
    bindings: tuple[Binding, ...]  # best first; bindings[0] is the junction whose cardinality EDGE types
    defaults: dict[str, tuple[str | int, ...]]  # unbound required arguments -> candidate values
    reason: str = ""


@dataclass(frozen=True)
class Samples:
    """Values observed per (tool, field) when each tool ran on the platform's example arguments."""

    values: dict[str, dict[str, tuple[str, ...]]]

    def of(self, tool: str, field: str) -> tuple[str, ...]:
        return self.values.get(tool, {}).get(field, ())


Kinds = Mapping[str, Kind]


class EdgeScorer(Protocol):
    name: str

    async def score(
        self, producer: ToolSig, consumer: ToolSig, samples: Samples, examples: Examples, kinds: Kinds
    ) -> Proposal | None:
        """None when nothing of the producer can feed the consumer."""
        ...


def defaults_for(
    consumer: ToolSig, bound: set[str], examples: Examples
) -> dict[str, tuple[str | int, ...]] | None:
    """Literal values for the consumer's unbound required arguments; None when one of them has none (the consumer
    cannot be called from a query)."""
    out: dict[str, tuple[str | int, ...]] = {}
    for param in consumer.bindable:
        if param.required and param.name not in bound:
            values = literal_values(param, examples)
            if not values:
                return None
            out[param.name] = values
    return out


_HANGUL = re.compile(r"[가-힣]{2,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def name_tokens(name: str) -> frozenset[str]:
    return frozenset(t for t in re.split(r"[_\W]+", _CAMEL.sub("_", name).lower()) if t)


def words(text: str) -> frozenset[str]:
    """Korean words of a description (two syllables or more), a crude but deterministic bag."""
    return frozenset(_HANGUL.findall(text))


def shape(value: str) -> str:
    """A value's format: digit runs become D<n>, letters A, Hangul H, punctuation kept (e.g. '00126380' → D8)."""
    out = re.sub(r"\d+", lambda m: f"D{len(m.group())}", value)
    out = re.sub(r"[A-Za-z]+", "A", out)
    return re.sub(r"[가-힣]+", "H", out)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def format_fit(values: Sequence[str], param: Param, examples: Sequence[str | int]) -> float | None:
    """Share of observed values the argument would accept: its enum, its pattern, else the shapes of its example
    values. None when nothing is known either way."""
    if not values:
        return None
    if param.enum:
        return sum(v in param.enum for v in values) / len(values)
    if param.pattern:
        rx = re.compile(param.pattern)
        return sum(bool(rx.search(v)) for v in values) / len(values)
    if param.type == "integer":
        return sum(v.lstrip("-").isdigit() for v in values) / len(values)
    if examples:
        shapes = {shape(str(e)) for e in examples}
        return sum(shape(v) in shapes for v in values) / len(values)
    return None


class OfflineScorer:
    """Deterministic rules over the typed links (kopa_gen/edge/links.py). For each consumer argument the linked
    producer fields are ranked by

        fit = 0.45·name + 0.25·description + 0.30·format,   × 0.15 when the observed values do not fit
        name        1 for the same normalized name, else 0.8 × Jaccard of name tokens
        description Jaccard of the Korean words of the two descriptions (법인등록번호 ↔ 법인등록번호)
        format      share of observed producer values the argument accepts (enum, pattern, example shapes);
                    0.5 when nothing was observed
        + 0.2 when the argument's description names the producer tool, capped at 1

    and the best becomes the binding. The pair's score is 0.5 + 0.5 × the first binding's fit: a typed link is
    feasible by construction, the fit says how plainly. A consumer whose unbound required argument has no literal
    value is no edge."""

    name = "offline"

    def fit(
        self, producer: ToolSig, out: OutField, param: Param, samples: Samples, examples: Examples
    ) -> float:
        a, b = name_tokens(out.name), name_tokens(param.name)
        name = 1.0 if a == b else 0.8 * _jaccard(a, b)
        desc = _jaccard(words(out.description), words(param.description))
        observed = format_fit(samples.of(producer.name, out.name), param, examples.get(param.name, ()))
        fmt = 0.5 if observed is None else observed
        score = 0.45 * name + 0.25 * desc + 0.30 * fmt
        if observed is not None and observed < 0.5:
            score *= 0.15
        if producer.name in param.description:
            score += 0.2
        return round(min(score, 1.0), 6)

    async def score(
        self, producer: ToolSig, consumer: ToolSig, samples: Samples, examples: Examples, kinds: Kinds
    ) -> Proposal | None:
        found = links(producer, consumer, kinds)
        if not found:
            return None
        best: dict[str, Binding] = {}
        for link in found:
            out, param = producer.output(link.field), consumer.param(link.param)
            assert out is not None and param is not None
            fit = self.fit(producer, out, param, samples, examples)
            if link.param not in best or fit > best[link.param].score:
                best[link.param] = Binding(link.param, link.field, fit, link.pipe)
        bindings = _fewest(
            sorted(best.values(), key=lambda b: (-b.score, b.param)), producer, consumer, kinds
        )
        if not bindings:
            return None
        defaults = defaults_for(consumer, {b.param for b in bindings}, examples)
        if defaults is None:
            return None
        score = 0.5 + 0.5 * bindings[0].score
        reason = ", ".join(
            f"{b.param}←{b.field}{' | ' + b.pipe if b.pipe else ''} {b.score:.2f}" for b in bindings
        )
        return Proposal(producer.name, consumer.name, round(score, 6), tuple(bindings), defaults, reason)


def _fewest(bindings: list[Binding], producer: ToolSig, consumer: ToolSig, kinds: Kinds) -> list[Binding]:
    """The fewest arguments that carry the dependency: every required argument a field fills, and an optional one
    only when no required argument is filled (the best one, of a kind that is not broad: a company's
    establishment date is no base date to filter by, and its name no affiliate's name)."""
    required = [b for b in bindings if (p := consumer.param(b.param)) is not None and p.required]
    if required:
        return required
    for b in bindings:  # best first
        out = producer.output(b.field)
        kind = kinds.get(out.kind) if out is not None and out.kind else None
        if kind is not None and not kind.broad:
            return [b]
    return []


_PROMPT = """You judge whether the output of one API tool can feed the input of another.
Producer tool {producer} ({ptitle}) returns fields:
{outputs}
Consumer tool {consumer} ({ctitle}) takes arguments:
{inputs}
Answer with one JSON object and nothing else:
{{"score": <0..1 how feasible it is to call the consumer with values from the producer's result>,
  "bindings": [{{"param": "<consumer argument>", "field": "<producer field>"}}, ...],
  "defaults": {{"<unbound required consumer argument>": ["<value>", ...]}}}}"""


class LLMScorer:
    """Asks an OpenAI-compatible chat-completions endpoint. Bindings naming an argument or field that does not
    exist are dropped (and said so in the reason); an unparsable reply scores the pair 0 with the reason."""

    name = "llm"

    def __init__(self, endpoint: EndpointSettings) -> None:
        self.chat = ChatClient(endpoint)

    async def aclose(self) -> None:
        await self.chat.aclose()

    def prompt(self, producer: ToolSig, consumer: ToolSig, samples: Samples) -> str:
        outputs = "\n".join(
            f"- {f.name}: {f.description} (e.g. {', '.join(samples.of(producer.name, f.name)[:3]) or '-'})"
            for f in producer.outputs
        )
        inputs = "\n".join(
            f"- {p.name}{' (required)' if p.required else ''}: {p.description}"
            + (f" pattern {p.pattern}" if p.pattern else "")
            + (f" one of {', '.join(p.enum)}" if p.enum else "")
            for p in consumer.bindable
        )
        return _PROMPT.format(
            producer=producer.name,
            ptitle=producer.title,
            outputs=outputs,
            consumer=consumer.name,
            ctitle=consumer.title,
            inputs=inputs,
        )

    async def score(
        self, producer: ToolSig, consumer: ToolSig, samples: Samples, examples: Examples, kinds: Kinds
    ) -> Proposal | None:
        if producer.name == consumer.name:
            return None
        try:
            text = await self.chat.ask(self.prompt(producer, consumer, samples), seed=0)
        except EndpointError as exc:
            return Proposal(producer.name, consumer.name, 0.0, (), {}, str(exc))
        proposal = parse_proposal(text, producer, consumer)
        return None if proposal is None else typed(proposal, producer, consumer, examples, kinds)


def typed(
    proposal: Proposal, producer: ToolSig, consumer: ToolSig, examples: Examples, kinds: Kinds
) -> Proposal:
    """The proposal with every binding between values of different kinds dropped (and named in the reason), the
    kept ones carrying their transform, and the defaults completed with literal values; no bindings left: a
    rejected pair."""
    kept: list[Binding] = []
    wrong: list[str] = []
    for b in proposal.bindings:
        out, param = producer.output(b.field), consumer.param(b.param)
        pipe = fits(out, param, kinds) if out is not None and param is not None else None
        if pipe is None:
            wrong.append(f"{b.param}←{b.field} ({out.kind if out else '?'} → {param.kind if param else '?'})")
        else:
            kept.append(Binding(b.param, b.field, b.score, pipe))
    reasons = [r for r in (proposal.reason, f"rejected by type: {', '.join(wrong)}" if wrong else "") if r]
    defaults = defaults_for(consumer, {b.param for b in kept}, examples)
    if not kept or defaults is None:
        why = "; ".join(reasons) or f"a required argument of {consumer.name} has no literal value"
        return Proposal(producer.name, consumer.name, 0.0, (), {}, why)
    for name, values in proposal.defaults.items():  # the scorer's values, where a query can state them
        param = consumer.param(name)
        labels = param.meaning.labels if param is not None and param.meaning is not None else {}
        sayable = tuple(v for v in values if not labels or str(v) in labels)
        if name in defaults and sayable:
            defaults[name] = tuple(dict.fromkeys((*sayable, *defaults[name])))
    return Proposal(producer.name, consumer.name, proposal.score, tuple(kept), defaults, "; ".join(reasons))


def parse_proposal(text: str, producer: ToolSig, consumer: ToolSig) -> Proposal | None:
    """The scorer reply as a Proposal; None when it binds nothing; a zero-score Proposal naming the problem when
    the reply is not the JSON asked for."""
    match = re.search(r"\{.*\}", text, re.S)
    try:
        data: Any = json.loads(match.group(0) if match else text)
        score = float(data["score"])
        raw = data.get("bindings") or []
        if not math.isfinite(score):
            raise ValueError(f"score {score} is not a finite number")
    except (ValueError, KeyError, TypeError) as exc:
        return Proposal(producer.name, consumer.name, 0.0, (), {}, f"unparsable scorer reply: {exc}")
    params = {p.name for p in consumer.bindable}
    fields = {f.name for f in producer.outputs}
    kept: list[tuple[str, str]] = []
    dropped: list[tuple[str, str]] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            dropped.append((str(item), ""))
            continue
        param, field = str(item.get("param", "")), str(item.get("field", ""))
        (kept if param in params and field in fields else dropped).append((param, field))
    if not kept:
        return None
    s = round(min(max(score, 0.0), 1.0), 6)
    raw_defaults = data.get("defaults")
    bound = {p for p, _ in kept}
    defaults = {  # only for unbound arguments: a default must never override the hand-off
        str(k): tuple(v if isinstance(v, int) else str(v) for v in vs)
        for k, vs in (raw_defaults.items() if isinstance(raw_defaults, dict) else [])
        if k in params and k not in bound and isinstance(vs, list) and vs
    }
    reason = f"dropped unknown bindings {dropped}" if dropped else ""
    return Proposal(
        producer.name,
        consumer.name,
        s,
        tuple(Binding(p, f, s) for p, f in dict(kept).items()),
        defaults,
        reason,
    )


ScorerFactory = Callable[[EndpointSettings | None], EdgeScorer]
"""The endpoint's settings (None: none given) -> a scorer; an offline scorer ignores the endpoint."""

SCORERS: Registry[ScorerFactory] = Registry(
    "EDGE scorer", hint="register a factory in kopa_gen/edge/scorer.py"
)


@SCORERS.register("offline")
def _offline(endpoint: EndpointSettings | None) -> EdgeScorer:
    return OfflineScorer()


@SCORERS.register("llm")
def _llm(endpoint: EndpointSettings | None) -> EdgeScorer:
    if endpoint is None:
        raise ValueError("the llm scorer needs an endpoint: --scorer-base-url URL and --scorer-model NAME")
    return LLMScorer(endpoint)
