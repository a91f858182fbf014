"""Mixed: two features in one chain, composed from the others' moves: a reduction that keeps a few rows and a
fan-out over them, a reduction followed by a Sem pair, a Cmp pair or a branch, on the chosen row itself or on
what the row it chose is handed to (the 40th stop of a route, then the routes and the buses of that stop). The
second feature is drawn by weight, and the others are tried in turn (each from the same place) when the drawn
one cannot be built there."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from functools import partial

from kopa_gen.edge.asks import Ask
from kopa_gen.edge.builder import PHI, Chain, Focus, GEdge, NotInstantiable
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.patterns.cmp import compare
from kopa_gen.edge.patterns.cond import branch
from kopa_gen.edge.patterns.drv import distinct
from kopa_gen.edge.patterns.fan import fan_out
from kopa_gen.edge.patterns.sem import semantic_pair
from kopa_gen.edge.walks import TRIES, first_working, out_edges, paged_set, small_set, walk_then

WEIGHTS = {"fan": 4, "sem": 3, "cmp": 2, "cond": 1}


@pattern("mixed", "Mixed: a reduction composed with a fan-out, a Sem pair, a Cmp pair or a branch")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    return await walk_then(
        chain, focus, paged_set(chain), lambda rows: compose(chain, rows, rng), rng, hops=2
    )


async def compose(chain: Chain, rows: Focus, rng: random.Random) -> Ask:
    # a weighted order without replacement (Efraimidis-Spirakis keys): each feature first as often as its weight says
    order = sorted(WEIGHTS, key=lambda k: rng.random() ** (1 / WEIGHTS[k]), reverse=True)

    moves = [partial(on_row, chain, rows, s, rng) for s in order]
    moves += [partial(after_hop, chain, rows, s, rng) for s in order]
    return await first_working(chain, moves, f"nothing to compose after {rows.tool}")


ON_ONE_ROW: dict[str, Callable[[Chain, Focus, random.Random], Awaitable[Ask]]] = {
    "sem": semantic_pair,
    "cmp": compare,
    "cond": branch,
}
"""The second features built from one row (a fan-out needs 2..φ)."""


async def on_row(chain: Chain, rows: Focus, second: str, rng: random.Random) -> Ask:
    """The second feature on the reduction's own result: a fan-out over the few rows it keeps, or a Sem pair, a
    Cmp pair or a branch from the one row it chooses."""
    if second == "fan":
        return await fan_out(chain, chain.narrow(rows, "few"), rng)
    return await ON_ONE_ROW[second](chain, chain.narrow(rows, "one"), rng)


async def after_hop(chain: Chain, rows: Focus, second: str, rng: random.Random) -> Ask:
    """The reduction's row handed on (a Drv junction), and the second feature built on what that call found: a
    fan-out over its 2..φ rows, or a Sem pair, a Cmp pair or a branch from its one row."""
    edges = [e for e in out_edges(chain, rows) if distinct(rows, e.bindings[0].field) > PHI]
    rng.shuffle(edges)

    def via(edge: GEdge) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            found = await chain.hop(chain.narrow(rows, "one", edge), edge)
            if second == "fan":
                if not small_set(found):
                    raise NotInstantiable(
                        f"{edge.consumer} found {len(found.rows)} rows, not 2..{PHI} to fan out over"
                    )
                return await fan_out(chain, found, rng)
            if not found.single:
                raise NotInstantiable(f"{edge.consumer} found {len(found.rows)} rows, not one")
            return await ON_ONE_ROW[second](chain, found, rng)

        return move

    return await first_working(
        chain, [via(e) for e in edges[:TRIES]], f"no edge hands {rows.tool}'s chosen row on"
    )
