"""Per-key daily quotas, per-second rate limits and seeded faults: the environmental noise of real platforms."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kopa_gen.sandbox.config import Faults


@dataclass
class Meter:
    """Counts calls per (platform, key): today's total and the current one-second window."""

    clock: Callable[[], float] = time.monotonic
    _day: dict[tuple[str, str], int] = field(default_factory=dict)
    _second: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    def over_rate(self, platform: str, key: str, per_second: int | None) -> bool:
        now = int(self.clock())
        window, count = self._second.get((platform, key), (now, 0))
        count = count + 1 if window == now else 1
        self._second[(platform, key)] = (now, count)
        return per_second is not None and count > per_second

    def over_quota(self, platform: str, key: str, daily: int | None) -> bool:
        used = self._day.get((platform, key), 0) + 1
        self._day[(platform, key)] = used
        return daily is not None and used > daily


@dataclass
class FaultPlan:
    """Draws, in request order, whether a request fails and how. Same seed and order, same faults."""

    faults: Faults
    seed: int
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(f"{self.seed}:faults")

    def draw(self) -> str | None:
        if self.faults.rate <= 0:
            return None
        if self._rng.random() >= self.faults.rate:
            return None
        kinds = sorted(self.faults.kinds)
        return self._rng.choices(kinds, weights=[self.faults.kinds[k] for k in kinds])[0]
