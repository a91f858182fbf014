"""Sem: two different tools take the same value, in one step; both answers are asked for."""

from __future__ import annotations

import random

from kopa_gen.edge.asks import Ask, ask_pair
from kopa_gen.edge.builder import Chain, Focus, NotInstantiable
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import one_row, out_edges, walk_to


@pattern("sem", "Sem: two tools on one value in parallel, both answers asked")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    focus = await walk_to(chain, focus, one_row, rng, hops=1)
    return await semantic_pair(chain, focus, rng)


async def semantic_pair(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    edges = out_edges(chain, focus)
    rng.shuffle(edges)
    by_tool = {e.consumer: e for e in edges}
    if len(by_tool) < 2:
        raise NotInstantiable(f"{focus.tool} feeds fewer than two tools")
    first, second = rng.sample(sorted(by_tool.values(), key=lambda e: e.id), 2)
    sides = await chain.pair(
        focus,
        first,
        second,
        [
            chain.literals(chain.sigs[first.consumer], first.defaults),
            chain.literals(chain.sigs[second.consumer], second.defaults),
        ],
    )
    chain.features.add("sem")
    return ask_pair(chain, sides[0], sides[1], rng, "list", [s.phrase for s in sides])
