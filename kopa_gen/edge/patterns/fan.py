"""Fan: 2..φ values cross a junction; one call per value, in parallel, and a question over the items."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from kopa_gen.edge.asks import Ask, ask_fan
from kopa_gen.edge.builder import Chain, Focus, GEdge
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import TRIES, first_working, out_edges, small_set, walk_then


@pattern("fan", "Fan: one call for each of 2..φ rows, in one step, and a question over their results")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    return await walk_then(chain, focus, small_set, lambda f: fan_out(chain, f, rng), rng, hops=2)


async def fan_out(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    edges = out_edges(chain, focus)
    rng.shuffle(edges)

    def via(edge: GEdge) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            call, items = await chain.fan(focus, edge)
            return ask_fan(chain, call, items, rng)

        return move

    return await first_working(chain, [via(e) for e in edges[:TRIES]], f"no kept edge out of {focus.tool}")
