"""Aggregate statistics over episodes: pass@k, pass^k, Student-t confidence intervals, per-domain tables.

pass@k (`pass_at_k`)
    The unbiased estimator of "at least one of k rollouts passes" from n rollouts with c passes
    (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), exactly 1.0 when n - c < k. Computed with exact integers.
pass^k (`pass_hat_k`)
    τ-bench's "all of k rollouts pass": C(c, k) / C(n, k).
Confidence interval (`mean_ci`)
    mean ± t(1 - α/2, n - 1) · s / √n over per-seed scores, with the sample standard deviation s. The t
    quantile is computed here (regularized incomplete beta by continued fraction, inverted by bisection), so
    there is no scipy dependency. One value has no spread: the bounds are NaN.
Tables (`summarize`)
    One row per domain (sorted by name) and a last row `all`. Tasks weigh equally: a row's pass@1, pass@k,
    pass^k and ACTION are means over its tasks. A task's pass@k and pass^k are computed per seed, over that
    seed's rollouts, then averaged over seeds (the paper's pass@4 is over the 4 rollouts of a seed; pooling the
    rollouts of 8 seeds would turn it into a pass@4 of 32 draws); its pass@1 and ACTION are means over all its
    episodes. The 95% CI is over seeds: per seed, the mean over tasks of the task's pass rate in that seed.
    Episodes that failed for infrastructure (the environment failed, not the policy) are not given to it
    (report.results): the report counts them apart, and a resume runs them again.
    k defaults to the rollouts per seed (`rollouts_per_seed`: the fewest episodes of any task in any seed).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

OVERALL = "all"
"""The domain name of the overall row in `summarize`."""

_CF_EPS = 1e-16
_CF_TINY = 1e-300
_CF_MAX_ITER = 100_000


# ---------------------------------------------------------------------------------------------- pass@k


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k rollouts drawn without replacement from n (c passing) passes."""
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all of k rollouts drawn without replacement from n (c passing) pass (τ-bench pass^k)."""
    _check_counts(n, c, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


# ---------------------------------------------------------------------------------------------- Student t


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz), good for x < (a+1)/(a+b+2)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
    h = d
    for m in range(1, _CF_MAX_ITER + 1):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        delta = 1.0
        for aa in (even, odd):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _CF_TINY else _CF_TINY
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < _CF_EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a}, b={b}, x={x})")


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta I_x(a, b); y = 1 - x, passed separately to keep its precision."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_cf(b, a, y) / b


def _t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0: I_{df/(df+t²)}(df/2, 1/2) / 2."""
    ratio = t * t / df  # may overflow to inf for huge t: then x = 0, y = 1, tail 0
    x = 1.0 / (1.0 + ratio)
    y = 1.0 / (1.0 + 1.0 / ratio) if ratio > 0 else 0.0
    return 0.5 * _betainc(df / 2.0, 0.5, x, y)


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom."""
    if df <= 0 or math.isnan(t):
        raise ValueError(f"need df > 0 and a number t, got df={df}, t={t}")
    tail = _t_upper_tail(abs(t), df)
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t with df > 0 degrees of freedom (0 < p < 1), to about 1e-12 relative."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"need 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    target = 1.0 - p  # find t > 0 with P(T > t) = target; the tail falls monotonically in t
    lo, hi = 0.0, 1.0
    while _t_upper_tail(hi, df) > target:
        lo, hi = hi, hi * 2.0
        if math.isinf(hi):
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if _t_upper_tail(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return (lo + hi) / 2.0


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of a Student-t interval over per-seed scores. One value: (value, nan, nan)."""
    if not values:
        raise ValueError("mean_ci needs at least one value")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    mean = statistics.fmean(values)
    n = len(values)
    if n == 1:
        return mean, math.nan, math.nan
    half = t_quantile((1.0 + confidence) / 2.0, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean, mean - half, mean + half


# ---------------------------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class EpisodeResult:
    """One scored rollout of one task."""

    task_id: str
    domain: str
    seed: int
    rollout: int
    passed: bool
    action: float


@dataclass(frozen=True)
class SummaryRow:
    """One line of the results table: a domain, or `all`.

    pass_at_k and pass_hat_k are NaN when some task in the row has fewer than k episodes in a seed; ci_low and
    ci_high are NaN with a single seed."""

    domain: str
    tasks: int
    episodes: int
    solved: int
    """Tasks that passed in at least one episode."""
    pass_at_1: float
    k: int
    pass_at_k: float
    pass_hat_k: float
    action: float
    """Mean ACTION over tasks (each task's mean over its episodes)."""
    seeds: int
    ci_low: float
    """Lower bound of the 95% Student-t interval of pass@1 over seeds."""
    ci_high: float


def _row(domain: str, results: Sequence[EpisodeResult], k: int) -> SummaryRow:
    per_task: dict[str, list[EpisodeResult]] = defaultdict(list)
    per_seed_task: dict[int, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        per_task[r.task_id].append(r)
        per_seed_task[r.seed][r.task_id].append(r.passed)

    at_1: list[float] = []
    at_k: list[float] = []
    hat_k: list[float] = []
    actions: list[float] = []
    solved = 0
    for episodes in per_task.values():
        n, c = len(episodes), sum(e.passed for e in episodes)
        solved += c > 0
        at_1.append(c / n)
        by_seed: dict[int, list[bool]] = defaultdict(list)
        for e in episodes:
            by_seed[e.seed].append(e.passed)
        counts = [(len(p), sum(p)) for p in by_seed.values()]
        fits = all(n_s >= k for n_s, _ in counts)
        at_k.append(statistics.fmean(pass_at_k(n_s, c_s, k) for n_s, c_s in counts) if fits else math.nan)
        hat_k.append(statistics.fmean(pass_hat_k(n_s, c_s, k) for n_s, c_s in counts) if fits else math.nan)
        actions.append(statistics.fmean(e.action for e in episodes))

    seed_scores = [
        statistics.fmean(sum(passes) / len(passes) for passes in per_seed_task[seed].values())
        for seed in sorted(per_seed_task)
    ]
    _, low, high = mean_ci(seed_scores)
    return SummaryRow(
        domain=domain,
        tasks=len(per_task),
        episodes=len(results),
        solved=solved,
        pass_at_1=statistics.fmean(at_1),
        k=k,
        pass_at_k=statistics.fmean(at_k),
        pass_hat_k=statistics.fmean(hat_k),
        action=statistics.fmean(actions),
        seeds=len(seed_scores),
        ci_low=low,
        ci_high=high,
    )


def rollouts_per_seed(results: Iterable[EpisodeResult]) -> int:
    """The default k: the fewest episodes any task has in any seed (1 without episodes)."""
    counts: dict[tuple[str, int], int] = defaultdict(int)
    for r in results:
        counts[(r.task_id, r.seed)] += 1
    return min(counts.values(), default=1)


def summarize(results: Iterable[EpisodeResult], k: int = 4) -> list[SummaryRow]:
    """Per-domain rows (sorted by domain) and a final `all` row. Raises ValueError on a repeated
    (task, seed, rollout), on a task listed under two domains, or on a domain named `all`."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    episodes = list(results)
    seen: set[tuple[str, int, int]] = set()
    domain_of: dict[str, str] = {}
    for r in episodes:
        key = (r.task_id, r.seed, r.rollout)
        if key in seen:
            raise ValueError(f"episode {r.task_id} seed {r.seed} rollout {r.rollout} appears twice")
        seen.add(key)
        if domain_of.setdefault(r.task_id, r.domain) != r.domain:
            raise ValueError(f"task {r.task_id} is listed under {domain_of[r.task_id]!r} and {r.domain!r}")
        if r.domain == OVERALL:
            raise ValueError(f"domain name {OVERALL!r} is reserved for the overall row")
    if not episodes:
        return []
    by_domain: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in episodes:
        by_domain[r.domain].append(r)
    rows = [_row(domain, by_domain[domain], k) for domain in sorted(by_domain)]
    rows.append(_row(OVERALL, episodes, k))
    return rows
