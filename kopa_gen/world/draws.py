"""Fast deterministic draws for world tables that make millions of them (the education generators, declared
tables): integers, days and weighted choices, each costing exactly one `rng.random()` call."""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import random
from collections.abc import Sequence
from typing import Generic, TypeVar


def below(rng: random.Random, n: int) -> int:
    """A uniform integer in [0, n): rng.randrange without its overhead (called millions of times)."""
    return int(rng.random() * n)


def some_day(rng: random.Random, first: dt.date, last: dt.date) -> dt.date:
    return first + dt.timedelta(days=below(rng, max(1, (last - first).days + 1)))


T = TypeVar("T")


class Picker(Generic[T]):
    """Weighted choice over a fixed list, by bisect on cumulative weights (fast for many draws)."""

    def __init__(self, items: Sequence[T], weights: Sequence[float]) -> None:
        self.items = list(items)
        self.cum = list(itertools.accumulate(weights))

    def pick(self, rng: random.Random) -> T:
        return self.items[bisect.bisect_right(self.cum, rng.random() * self.cum[-1])]
