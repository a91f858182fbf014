"""Seq: one value crosses every junction. The looked-up entity hands its id on, one to three times; the question is
asked of the last result (a value of its one row, or a question over every row of a set)."""

from __future__ import annotations

import random

from kopa_gen.edge.asks import Ask, ask_one, ask_set
from kopa_gen.edge.builder import Chain, Focus, NotInstantiable
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import hop_any


@pattern("seq", "Seq: the entity's id handed on one to three times, the question asked of the last result")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    hops = rng.choices([1, 2, 3], weights=[3, 5, 2])[0]
    for k in range(hops):
        if not focus.single:
            break
        try:
            focus = await hop_any(chain, focus, rng)
        except NotInstantiable:
            if k == 0:
                raise
            break
    avoid = set(chain.starts)
    return ask_one(chain, focus, rng, avoid) if focus.single else ask_set(chain, focus, rng, avoid)
