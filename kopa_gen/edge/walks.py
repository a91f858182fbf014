"""Shared moves of EDGE's patterns (kopa_gen/edge/patterns/): hop along kept edges until the focus is what a
pattern needs, and choose edges and literal values the chain has not used yet. A move that leads nowhere is taken
back (`Chain.mark` / `Chain.rollback`) and the next one tried from the same place, so one dead edge does not
spend a whole start."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from kopa_gen.edge.asks import Ask, ask_named, ask_one, ask_set, items
from kopa_gen.edge.builder import PHI, Chain, Focus, GEdge, NotInstantiable

Want = Callable[[Focus], bool]
T = TypeVar("T")

TRIES = 10
"""Edges tried at each hop before a walk gives up there. On 60 starts over every domain of the full G*, 3 / 6 / 10
tries built Drv 3 / 7 / 9 chains and Seq 12 / 17 / 25, in 6 to 10 s per 60 starts."""


def one_row(focus: Focus) -> bool:
    return focus.single


def big_set(focus: Focus) -> bool:
    """More than φ rows: a Drv reduction has something to choose among."""
    return len(focus.rows) > PHI


def paged_set(chain: Chain) -> Want:
    """More than φ rows, and more than the call's first page: a reduction there needs every page."""
    return lambda focus: big_set(focus) and chain.paged(focus)


def small_set(focus: Focus) -> bool:
    """2..φ rows: a fan-out over every one of them."""
    return 2 <= len(focus.rows) <= PHI


def any_set(focus: Focus) -> bool:
    return len(focus.rows) >= 2


def out_edges(chain: Chain, focus: Focus) -> list[GEdge]:
    """The kept edges the focus rows can feed, to tools the chain has not called."""
    return chain.edges_from(focus.tool, focus.rows, chain.tools())


async def first_working(chain: Chain, moves: Sequence[Callable[[], Awaitable[T]]], none: str) -> T:
    """The first move that works, each tried from the same place: the chain is rolled back after a move that
    raised NotInstantiable. `none` is said when there is no move; otherwise the last move's reason."""
    last = NotInstantiable(none)
    for move in moves:
        mark = chain.mark()
        try:
            return await move()
        except NotInstantiable as exc:
            chain.rollback(mark)
            last = exc
    raise last


async def walk_to(
    chain: Chain, focus: Focus, want: Want, rng: random.Random, hops: int, tries: int = TRIES
) -> Focus:
    """Up to `hops` Seq hops from a one-row focus until `want` holds (zero hops when it holds already)."""

    async def here(f: Focus) -> Focus:
        return f

    return await walk_then(chain, focus, want, here, rng, hops, tries)


async def walk_then(
    chain: Chain,
    focus: Focus,
    want: Want,
    then: Callable[[Focus], Awaitable[T]],
    rng: random.Random,
    hops: int,
    tries: int = TRIES,
) -> T:
    """Up to `hops` Seq hops from a one-row focus to a focus where `want` holds, and `then` from there: a search
    depth first over up to `tries` shuffled edges at each hop, every dead end taken back. A `then` that fails
    sends the search on (a set the pattern cannot reduce, a result with nothing to ask), so a pattern finds the
    place it can be built rather than the first place that looks like one. A set cannot hop on. The reason
    given is the last `then`'s, or that no walk reached a wanted focus."""
    failed = f"no walk of at most {hops} hops reaches the focus this pattern needs"
    reasons: list[str] = []

    async def search(f: Focus, left: int) -> T:
        moves: list[Callable[[], Awaitable[T]]] = []
        if want(f):

            async def finish() -> T:
                try:
                    return await then(f)
                except NotInstantiable as exc:
                    reasons.append(str(exc))
                    raise

            moves.append(finish)
        if left > 0 and f.single:
            edges = out_edges(chain, f)
            rng.shuffle(edges)
            moves += [via(e, f, left) for e in edges[:tries]]
        return await first_working(chain, moves, failed)

    def via(edge: GEdge, f: Focus, left: int) -> Callable[[], Awaitable[T]]:
        async def move() -> T:
            return await search(await chain.hop(f, edge), left - 1)

        return move

    try:
        return await search(focus, hops)
    except NotInstantiable:
        raise NotInstantiable(reasons[-1] if reasons else failed) from None


async def hop_any(chain: Chain, focus: Focus, rng: random.Random, tries: int = TRIES) -> Focus:
    """One Seq hop along some edge (the first of `tries` shuffled edges that executes)."""
    edges = out_edges(chain, focus)
    rng.shuffle(edges)

    def via(edge: GEdge) -> Callable[[], Awaitable[Focus]]:
        async def move() -> Focus:
            return await chain.hop(focus, edge)

        return move

    return await first_working(chain, [via(e) for e in edges[:tries]], "no kept edge out of " + focus.tool)


def ask_last(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    """The question of a finished chain: over the rows of a set, or a value of its one row when that row was
    chosen among several, here or at a Drv junction upstream. A row that is the call's whole result, on a chain
    that chose nothing, offers its value as the only candidate: whoever makes the calls and guesses solves it
    (the shortcut filter's pool-guess), so it is refused here rather than after the filters' gold run."""
    avoid = set(chain.starts)
    if not focus.single:
        if items(chain, focus):  # account lines: one line's amount, read by its name
            try:
                return ask_named(chain, focus, rng)
            except NotInstantiable:
                pass
        return ask_set(chain, focus, rng, avoid, counts=False)
    chose = focus.pool is not None or any(j.kind == "drv" for j in chain.junctions)
    if focus.total <= 1 and not chose:
        raise NotInstantiable(f"{focus.tool}: one row, so its value is the only candidate an answer has")
    return ask_one(chain, focus, rng, avoid)


async def hop_and_ask(
    chain: Chain, focus: Focus, rng: random.Random, edges: Sequence[GEdge] | None = None, tries: int = TRIES
) -> Ask:
    """A last hop and its question, along the first of `tries` edges (shuffled) for which both work."""
    options = list(out_edges(chain, focus) if edges is None else edges)
    rng.shuffle(options)

    def via(edge: GEdge) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            return ask_last(chain, await chain.hop(focus, edge), rng)

        return move

    return await first_working(chain, [via(e) for e in options[:tries]], "no kept edge out of " + focus.tool)
