"""Cmp: one tool, two values of one literal argument (two years, two report types, two categories); the
difference of one quantity between them."""

from __future__ import annotations

import random

from kopa_gen.edge.asks import Ask, ask_pair
from kopa_gen.edge.builder import Chain, Focus, GEdge, NotInstantiable
from kopa_gen.edge.korean import arg_words
from kopa_gen.edge.patterns import pattern
from kopa_gen.edge.walks import one_row, out_edges, walk_to


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
    edge, name, sayable_values = rng.choice(options)
    a, b = rng.sample(sorted(set(sayable_values), key=str), 2)
    base = chain.literals(chain.sigs[edge.consumer], {k: v for k, v in edge.defaults.items() if k != name})
    sides = await chain.pair(focus, edge, edge, [{**base, name: a}, {**base, name: b}])
    chain.features.add("cmp")
    param = chain.sigs[edge.consumer].param(name)
    labels = [f"{focus.phrase}의 {arg_words(v, param.meaning if param else None)}" for v in (a, b)]
    return ask_pair(chain, sides[0], sides[1], rng, "diff", labels)
