"""Mixed: two features in one chain, composed from the others' moves: a reduction that keeps a few rows and a
fan-out over them, a reduction followed by a Sem pair, a Cmp pair or a branch. The second feature is drawn by
weight, and the others are tried in turn (each from the same place) when the drawn one cannot be built there."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from kopa_gen.edge.asks import Ask
from kopa_gen.edge.builder import Chain, Focus
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.patterns.cmp import compare
from kopa_gen.edge.patterns.cond import branch
from kopa_gen.edge.patterns.fan import fan_out
from kopa_gen.edge.patterns.sem import semantic_pair
from kopa_gen.edge.walks import first_working, paged_set, walk_then

WEIGHTS = {"fan": 4, "sem": 3, "cmp": 2, "cond": 1}


@pattern("mixed", "Mixed: a reduction composed with a fan-out, a Sem pair, a Cmp pair or a branch")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    return await walk_then(
        chain, focus, paged_set(chain), lambda rows: compose(chain, rows, rng), rng, hops=2
    )


async def compose(chain: Chain, rows: Focus, rng: random.Random) -> Ask:
    # a weighted order without replacement (Efraimidis-Spirakis keys): each feature first as often as its weight says
    order = sorted(WEIGHTS, key=lambda k: rng.random() ** (1 / WEIGHTS[k]), reverse=True)

    def then(second: str) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            if second == "fan":
                return await fan_out(chain, chain.narrow(rows, "few"), rng)
            one = chain.narrow(rows, "one")
            if second == "sem":
                return await semantic_pair(chain, one, rng)
            if second == "cmp":
                return await compare(chain, one, rng)
            return await branch(chain, one, rng)

        return move

    return await first_working(chain, [then(s) for s in order], f"nothing to compose after {rows.tool}")
