"""The Bayesian bookkeeping of one skeleton edge: a Beta prior from the scorer's feasibility score, updates from
executed probes where a structural failure weighs far more than an environmental one, and the pruning rule
P(θ > τ) < δ after at least n_min trials.

    prior        α₀ = 1 + κ·s,  β₀ = 1 + κ·(1 − s)          (s: feasibility score in [0, 1], κ: prior strength)
    success      α += 1
    structural   β += w_structural    (wrong binding, bad parameter, no data caused by the binding)
    environment  β += w_environmental (5xx, time-out, quota, rate: the same call may work later)
    inconclusive β += w_inconclusive  (no data, and none with the argument's example value either: the edge does
                                       not deliver; ten of them in a row prune it)
    prune        trials ≥ n_min  and  P(θ > τ | α, β) < δ

P(θ > τ) = 1 − I_τ(α, β), the regularized incomplete beta function, computed by its continued fraction
(modified Lentz), accurate to ~1e-12 for the α, β that occur here; numpy has no betainc and scipy is not a
dependency."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["success", "structural", "environmental", "inconclusive"]


@dataclass(frozen=True)
class PosteriorConfig:
    kappa: float = 1.0  # prior strength: the scorer's opinion is worth one probe (execution decides)
    w_structural: float = 3.0  # thirty times an environmental failure
    w_environmental: float = 0.1
    w_inconclusive: float = 1.5  # no data either way: the edge does not deliver (ten in a row prune it)
    tau: float = 0.3  # an edge worth keeping succeeds more often than this
    delta: float = 0.05  # prune when the posterior belief in that falls below this
    n_min: int = 5  # never prune on fewer trials


def _betacf(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 1e-14
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1."""
    if a <= 0 or b <= 0:
        raise ValueError(f"Beta parameters must be positive, got α={a}, β={b}")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


@dataclass
class Posterior:
    alpha: float
    beta: float
    successes: int = 0
    failures: dict[str, int] = field(
        default_factory=dict
    )  # by kind: structural / environmental / inconclusive

    @classmethod
    def prior(cls, score: float, config: PosteriorConfig) -> Posterior:
        s = min(max(score, 0.0), 1.0)
        return cls(1.0 + config.kappa * s, 1.0 + config.kappa * (1.0 - s))

    @property
    def trials(self) -> int:
        """Executions of the edge, whatever their outcome."""
        return self.successes + sum(self.failures.values())

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    def p_exceeds(self, tau: float) -> float:
        """P(θ > τ) under Beta(α, β)."""
        return 1.0 - betainc(self.alpha, self.beta, tau)

    def update(self, outcome: Outcome, config: PosteriorConfig) -> None:
        if outcome == "success":
            self.alpha += 1.0
            self.successes += 1
            return
        self.failures[outcome] = self.failures.get(outcome, 0) + 1
        if outcome == "structural":
            self.beta += config.w_structural
        elif outcome == "environmental":
            self.beta += config.w_environmental
        else:
            self.beta += config.w_inconclusive

    def prunable(self, config: PosteriorConfig) -> bool:
        return self.trials >= config.n_min and self.p_exceeds(config.tau) < config.delta
