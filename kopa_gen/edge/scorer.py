"""Edge scorers: given a producer tool, a candidate consumer and what executing them looked like, say how
feasible it is to feed the producer's output into the consumer (a score in [0, 1]), through which bindings
(consumer argument ← producer field), and which default values fill the consumer's unbound arguments.

Two scorers behind one Protocol:
- `offline` (default): a deterministic rule scorer over names, descriptions, types and the value formats
  observed in sandbox samples. It is an algorithm, named as one; it is not a model.
- `llm`: any OpenAI-compatible chat-completions endpoint, asked for the same three things as JSON.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kopa_gen.edge.chat import ChatClient
from kopa_gen.edge.signatures import OutField, Param, ToolSig
from kopa_gen.language.settings import EndpointSettings
from kopa_gen.plugins import Registry
from kopa_gen.policies.openai import EndpointError

Examples = Mapping[str, Sequence[str | int]]


@dataclass(frozen=True)
class Binding:
    param: str  # consumer argument
    field: str  # producer result field
    score: float


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


class EdgeScorer(Protocol):
    name: str

    async def score(
        self, producer: ToolSig, consumer: ToolSig, samples: Samples, examples: Examples
    ) -> Proposal | None:
        """None when nothing of the producer can feed the consumer."""
        ...


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
    """Deterministic rules. For each consumer argument, the best producer field by

        fit = 0.45·name + 0.25·description + 0.30·format,   × 0.15 when the observed values do not fit
        name        1 for the same normalized name, else 0.8 × Jaccard of name tokens
        description Jaccard of the Korean words of the two descriptions (법인등록번호 ↔ 법인등록번호)
        format      share of observed producer values the argument accepts (enum, pattern, example shapes);
                    0.5 when nothing was observed
        + 0.2 when the argument's description names the producer tool (the tool descriptions say which tool to
          call first), capped at 1

    A binding needs fit ≥ `threshold`. The pair's score is the best binding's fit, × 0.3 when a required
    argument is neither bound nor has example values (the consumer cannot be called)."""

    name = "offline"

    def __init__(self, threshold: float = 0.45) -> None:
        self.threshold = threshold

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
        self, producer: ToolSig, consumer: ToolSig, samples: Samples, examples: Examples
    ) -> Proposal | None:
        if producer.name == consumer.name or not producer.outputs:
            return None
        bindings: list[Binding] = []
        for param in consumer.bindable:
            fits = [(self.fit(producer, out, param, samples, examples), out.name) for out in producer.outputs]
            best, field = max(fits, key=lambda f: (f[0], f[1]))
            if best >= self.threshold:
                bindings.append(Binding(param.name, field, best))
        if not bindings:
            return None
        bindings.sort(key=lambda b: (-b.score, b.param))
        bound = {b.param for b in bindings}
        defaults: dict[str, tuple[str | int, ...]] = {}
        callable_ = True
        for param in consumer.bindable:
            if param.required and param.name not in bound:
                values = tuple(examples.get(param.name, ()))
                if values:
                    defaults[param.name] = values
                else:
                    callable_ = False
        score = bindings[0].score * (1.0 if callable_ else 0.3)
        reason = ", ".join(f"{b.param}←{b.field} {b.score:.2f}" for b in bindings)
        return Proposal(producer.name, consumer.name, round(score, 6), tuple(bindings), defaults, reason)


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
        self, producer: ToolSig, consumer: ToolSig, samples: Samples, examples: Examples
    ) -> Proposal | None:
        if producer.name == consumer.name:
            return None
        try:
            text = await self.chat.ask(self.prompt(producer, consumer, samples), seed=0)
        except EndpointError as exc:
            return Proposal(producer.name, consumer.name, 0.0, (), {}, str(exc))
        return parse_proposal(text, producer, consumer)


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
