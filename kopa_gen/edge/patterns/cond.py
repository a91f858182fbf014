"""Cond: a branch on an intermediate value. The focus row's measure is compared with a threshold near it; one
tool is called when it holds and another when it does not, and the question asks what the taken branch finds.
Only the taken branch is executed (a policy that takes the other one fails)."""

from __future__ import annotations

import random
from decimal import Decimal

from kopa_gen.edge.asks import Ask, ask_one, ask_set, asked_fields
from kopa_gen.edge.builder import Chain, Focus, NotInstantiable
from kopa_gen.edge.korean import number_words
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import one_row, out_edges, walk_to
from kopa_gen.language.functions import maybe_number


@pattern("cond", "Cond: a threshold on the focus row's measure picks which of two tools answers")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    focus = await walk_to(chain, focus, one_row, rng, hops=1)
    return await branch(chain, focus, rng)


def _pivot(value: Decimal, rng: random.Random) -> tuple[Decimal, bool]:
    """A round threshold near the value, above or below it at random (either branch as likely)."""
    magnitude = Decimal(10) ** max(0, len(str(int(abs(value)))) - 2)
    below = (abs(value) // magnitude) * magnitude * (1 if value >= 0 else -1)
    holds = rng.random() < 0.5
    pivot = below if holds and below != value else below + magnitude
    return pivot, value >= pivot


async def branch(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    sig = chain.sigs[focus.tool]
    measures = [
        o for o in asked_fields(sig, ("measure",)) if maybe_number(focus.rows[0].get(o.name)) is not None
    ]
    edges = {e.consumer: e for e in out_edges(chain, focus)}
    if not measures or len(edges) < 2:
        raise NotInstantiable(f"no measure to branch on in {focus.tool}, or fewer than two tools after it")
    measure = rng.choice(measures)
    m = measure.meaning
    assert m is not None and m.ask is not None
    value = maybe_number(focus.rows[0].get(measure.name))
    assert value is not None
    pivot, holds = _pivot(value, rng)
    then_edge, else_edge = rng.sample(sorted(edges.values(), key=lambda e: e.id), 2)
    taken, other = (then_edge, else_edge) if holds else (else_edge, then_edge)
    result = await chain.hop(focus, taken)
    ask = (
        ask_one(chain, result, rng, set(chain.starts))
        if result.single
        else ask_set(chain, result, rng, set(chain.starts))
    )
    other_sig = chain.sigs[other.consumer]
    other_fields = asked_fields(other_sig)
    if not other_fields:
        raise NotInstantiable(f"{other.consumer} has nothing to ask about")
    of = rng.choice(other_fields)
    assert of.meaning is not None
    # the branch not taken is named as a hop along its edge would name it ('X의 도로명 주소가 속한 시군구의
    # 자치법규'), not as the focus's own topic ('학원의 학교 기본정보')
    other_q = f"{chain.phrase_after(focus, other)}에서 {of.meaning.ask}을(를) 알려 주세요"
    taken_q = ask.question
    words = number_words(pivot, m.unit)
    chain.keep.append(words)
    chain.features.add("cond")
    first, second = (taken_q, other_q) if holds else (other_q, taken_q)
    question = (
        f"{focus.phrase}의 {m.ask}이(가) {words} 이상이면 다음을 답해 주세요: {first} "
        f"그렇지 않으면 다음을 답해 주세요: {second}"
    )
    return Ask(ask.kind, ask.answer_from, ask.answer, ask.value, question, ask.what)
