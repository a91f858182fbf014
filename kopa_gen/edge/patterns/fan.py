"""Fan: 2..φ values cross a junction; one call per value, in parallel, and a question over the items."""

from __future__ import annotations

import random

from kopa_gen.edge.asks import Ask, ask_fan
from kopa_gen.edge.builder import Chain, Focus, NotInstantiable
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import out_edges, small_set, walk_to


@pattern("fan", "Fan: one call for each of 2..φ rows, in one step, and a question over their results")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    focus = await walk_to(chain, focus, small_set, rng, hops=2)
    return await fan_out(chain, focus, rng)


async def fan_out(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    edges = out_edges(chain, focus)
    rng.shuffle(edges)
    last = f"no kept edge out of {focus.tool}"
    for edge in edges[:3]:
        try:
            call, items = await chain.fan(focus, edge)
            return ask_fan(chain, call, items, rng)
        except NotInstantiable as exc:
            last = str(exc)
    raise NotInstantiable(last)
