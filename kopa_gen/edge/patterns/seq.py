"""Seq: one value crosses every junction. The looked-up entity hands its id on, one to three times; the question is
asked of the last result (a question over every row of a set, or a value of a row chosen among several). A chain
that cannot go as far as drawn goes as far as it can."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from kopa_gen.edge.asks import Ask
from kopa_gen.edge.builder import Chain, Focus
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import first_working, hop_and_ask, one_row, walk_to


@pattern("seq", "Seq: the entity's id handed on one to three times, the question asked of the last result")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    hops = rng.choices([1, 2, 3], weights=[3, 5, 2])[0]

    def going(h: int) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            # the hops before the last keep one row (a set cannot be handed on whole); the last may give a set
            before = len(chain.steps)
            there = await walk_to(
                chain, focus, lambda f: one_row(f) and len(chain.steps) >= before + h - 1, rng, h - 1
            )
            return await hop_and_ask(chain, there, rng)

        return move

    return await first_working(chain, [going(h) for h in range(hops, 0, -1)], "no hop out of " + focus.tool)
