"""Drv: more than φ values could cross a junction; a reduction over the rows (the extreme of a measure or a date,
a threshold, a category) keeps one, which is handed on."""

from __future__ import annotations

import random

from kopa_gen.edge.asks import Ask, ask_one, ask_set
from kopa_gen.edge.builder import Chain, Focus
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import big_set, hop_any, walk_to


@pattern(
    "drv", "Drv: a set of more than φ rows reduced to one row by a measure, date or category, then handed on"
)
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    focus = await walk_to(chain, focus, big_set, rng, hops=2)
    focus = chain.narrow(focus, "one")
    focus = await hop_any(chain, focus, rng)
    avoid = set(chain.starts)
    return ask_one(chain, focus, rng, avoid) if focus.single else ask_set(chain, focus, rng, avoid)
