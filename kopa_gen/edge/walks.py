"""Shared moves of EDGE's patterns (kopa_gen/edge/patterns/): hop along kept edges until the focus is what a
pattern needs, and choose edges and literal values the chain has not used yet."""

from __future__ import annotations

import random
from collections.abc import Callable

from kopa_gen.edge.builder import PHI, Chain, Focus, GEdge, NotInstantiable

Want = Callable[[Focus], bool]


def one_row(focus: Focus) -> bool:
    return focus.single


def big_set(focus: Focus) -> bool:
    """More than φ rows: a Drv reduction has something to choose among."""
    return len(focus.rows) > PHI


def small_set(focus: Focus) -> bool:
    """2..φ rows: a fan-out over every one of them."""
    return 2 <= len(focus.rows) <= PHI


def any_set(focus: Focus) -> bool:
    return len(focus.rows) >= 2


def out_edges(chain: Chain, focus: Focus) -> list[GEdge]:
    """The kept edges the focus rows can feed, to tools the chain has not called."""
    return chain.edges_from(focus.tool, focus.rows, chain.tools())


async def walk_to(chain: Chain, focus: Focus, want: Want, rng: random.Random, hops: int) -> Focus:
    """Up to `hops` Seq hops from a one-row focus until `want` holds (zero hops when it holds already). Each hop
    tries up to three edges; a focus that is a set cannot hop on."""
    for _ in range(hops + 1):
        if want(focus):
            return focus
        if not focus.single:
            break
        edges = out_edges(chain, focus)
        rng.shuffle(edges)
        for edge in edges[:3]:
            try:
                focus = await chain.hop(focus, edge)
                break
            except NotInstantiable:
                continue
        else:
            break
    if want(focus):
        return focus
    raise NotInstantiable(f"no walk of at most {hops} hops reaches the focus this pattern needs")


async def hop_any(chain: Chain, focus: Focus, rng: random.Random, tries: int = 3) -> Focus:
    """One Seq hop along some edge (the first of `tries` shuffled edges that executes)."""
    edges = out_edges(chain, focus)
    rng.shuffle(edges)
    last = "no kept edge out of " + focus.tool
    for edge in edges[:tries]:
        try:
            return await chain.hop(focus, edge)
        except NotInstantiable as exc:
            last = str(exc)
    raise NotInstantiable(last)
