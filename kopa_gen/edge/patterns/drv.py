"""Drv: more than φ values could cross a junction; a reduction over the rows (the extreme of a measure or a date,
a threshold, a category) keeps one, which is handed on."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from kopa_gen.edge.asks import Ask
from kopa_gen.edge.builder import PHI, Chain, Focus, GEdge
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import TRIES, ask_last, first_working, out_edges, paged_set, walk_then


@pattern(
    "drv", "Drv: a set of more than φ rows reduced to one row by a measure, date or category, then handed on"
)
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    return await walk_then(
        chain, focus, paged_set(chain), lambda rows: reduce_and_hop(chain, rows, rng), rng, hops=2
    )


async def reduce_and_hop(chain: Chain, rows: Focus, rng: random.Random) -> Ask:
    """The reduction to one row and the hop after it, along an edge whose field differs from row to row (a
    reduction decides something only there)."""
    edges = [e for e in out_edges(chain, rows) if distinct(rows, e.bindings[0].field) > PHI]
    rng.shuffle(edges)

    def via(edge: GEdge) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            return ask_last(chain, await chain.hop(chain.narrow(rows, "one", edge), edge), rng)

        return move

    return await first_working(
        chain,
        [via(e) for e in edges[:TRIES]],
        f"no field of {rows.tool} that differs row to row feeds a kept edge",
    )


def distinct(focus: Focus, field: str) -> int:
    """How many different values of `field` the focus rows hold (blanks left out)."""
    return len({str(r[field]) for r in focus.rows if r.get(field) not in (None, "")})
