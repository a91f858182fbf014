"""Sem: two different tools take the same value, in one step; both answers are asked for."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from kopa_gen.edge.asks import Ask, ask_pair
from kopa_gen.edge.builder import Chain, Focus, GEdge, NotInstantiable
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import TRIES, first_working, one_row, out_edges, walk_to


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
    ordered = sorted(by_tool.values(), key=lambda e: e.id)
    pairs = [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]
    rng.shuffle(pairs)

    def via(first: GEdge, second: GEdge) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            if rng.random() < 0.5:
                first_, second_ = second, first
            else:
                first_, second_ = first, second
            sides = await chain.pair(
                focus,
                first_,
                second_,
                [
                    chain.literals(chain.sigs[first_.consumer], first_.defaults),
                    chain.literals(chain.sigs[second_.consumer], second_.defaults),
                ],
            )
            chain.features.add("sem")
            return ask_pair(chain, sides[0], sides[1], rng, "list", [s.phrase for s in sides])

        return move

    # another pair when one has no data for this row or no two questions of one kind
    return await first_working(chain, [via(a, b) for a, b in pairs[:TRIES]], f"no pair out of {focus.tool}")
