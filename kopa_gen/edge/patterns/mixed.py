"""Mixed: two features in one chain, composed from the others' moves: a reduction that keeps a few rows and a
fan-out over them, a reduction followed by a Sem pair, a Cmp pair or a branch."""

from __future__ import annotations

import random

from kopa_gen.edge.asks import Ask
from kopa_gen.edge.builder import Chain, Focus
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.patterns.cmp import compare
from kopa_gen.edge.patterns.cond import branch
from kopa_gen.edge.patterns.fan import fan_out
from kopa_gen.edge.patterns.sem import semantic_pair
from kopa_gen.edge.walks import big_set, walk_to


@pattern("mixed", "Mixed: a reduction composed with a fan-out, a Sem pair, a Cmp pair or a branch")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    focus = await walk_to(chain, focus, big_set, rng, hops=2)
    second = rng.choices(["fan", "sem", "cmp", "cond"], weights=[4, 3, 2, 1])[0]
    if second == "fan":
        return await fan_out(chain, chain.narrow(focus, "few"), rng)
    focus = chain.narrow(focus, "one")
    if second == "sem":
        return await semantic_pair(chain, focus, rng)
    if second == "cmp":
        return await compare(chain, focus, rng)
    return await branch(chain, focus, rng)
