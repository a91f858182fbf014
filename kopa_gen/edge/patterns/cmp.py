"""Cmp: one tool, two values of one literal argument (two years, two report types, two categories); the
difference of one quantity between them."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from kopa_gen.edge.asks import Ask, ask_pair
from kopa_gen.edge.builder import Chain, Focus, GEdge, NotInstantiable
from kopa_gen.edge.korean import arg_words
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import TRIES, first_working, one_row, out_edges, walk_to


@pattern("cmp", "Cmp: one tool called with two values of a literal argument, the difference asked")
async def build(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    focus = await walk_to(chain, focus, one_row, rng, hops=1)
    return await compare(chain, focus, rng)


async def compare(chain: Chain, focus: Focus, rng: random.Random) -> Ask:
    options: list[tuple[GEdge, str, list[str | int]]] = []
    for edge in out_edges(chain, focus):
        sig = chain.sigs[edge.consumer]
        for name, values in sorted(edge.defaults.items()):
            param = sig.param(name)
            sayable = [v for v in values if param is not None and arg_words(v, param.meaning)]
            if len(set(map(str, sayable))) >= 2:
                options.append((edge, name, sayable))
    if not options:
        raise NotInstantiable(f"no tool after {focus.tool} takes two literal values of one argument")
    rng.shuffle(options)

    def via(edge: GEdge, name: str, sayable_values: list[str | int]) -> Callable[[], Awaitable[Ask]]:
        async def move() -> Ask:
            return await _compare_on(chain, focus, edge, name, sayable_values, rng)

        return move

    # another tool or argument when one has no data for both values or nothing to compare
    return await first_working(
        chain, [via(*o) for o in options[:TRIES]], f"nothing to compare after {focus.tool}"
    )


async def _compare_on(
    chain: Chain, focus: Focus, edge: GEdge, name: str, sayable_values: list[str | int], rng: random.Random
) -> Ask:
    a, b = rng.sample(sorted(set(sayable_values), key=str), 2)
    sig = chain.sigs[edge.consumer]
    base = chain.literals(sig, {k: v for k, v in edge.defaults.items() if k != name})
    order = [p.name for p in sig.params]
    sides_args = [
        dict(
            sorted(
                {**base, name: v}.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)
            )
        )
        for v in (a, b)
    ]
    # each side in the tool's own order of words ('2024 사업연도 반기보고서'), said before the calls carry them
    labels = [
        " ".join(f"{focus.phrase}의 {chain.context(sig, chain._new_words(x))}".split()) for x in sides_args
    ]
    sides = await chain.pair(focus, edge, edge, sides_args)
    chain.features.add("cmp")
    return ask_pair(chain, sides[0], sides[1], rng, "diff", labels)
