"""pass@k, pass^k, the Student-t quantile, confidence intervals and per-domain tables.

Every expected value below is written out by hand (binomial coefficients, t tables, closed forms for df 1 and
2); none is computed by the code under test.
"""

from __future__ import annotations

import math

import pytest

from kopa_gen.evaluate.stats import (
    EpisodeResult,
    SummaryRow,
    mean_ci,
    pass_at_k,
    pass_hat_k,
    rollouts_per_seed,
    summarize,
    t_cdf,
    t_quantile,
)

# ---------------------------------------------------------------------------------------------- pass@k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 1, 1, 0.25),
        (4, 1, 4, 1.0),
        (4, 0, 1, 0.0),
        (4, 0, 4, 0.0),
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (4, 2, 2, 5 / 6),  # 1 - C(2,2)/C(4,2) = 1 - 1/6
        (4, 4, 1, 1.0),
        (10, 3, 1, 0.3),
        (32, 1, 4, 0.125),  # 1 - C(31,4)/C(32,4) = 1 - 28/32
    ],
)
def test_pass_at_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 2, 2, 1 / 6),  # C(2,2)/C(4,2)
        (4, 4, 4, 1.0),
        (4, 3, 4, 0.0),
        (4, 3, 1, 0.75),
        (5, 3, 2, 0.3),  # C(3,2)/C(5,2) = 3/10
        (4, 0, 1, 0.0),
    ],
)
def test_pass_hat_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(("n", "c", "k"), [(4, 5, 1), (4, -1, 1), (4, 1, 0), (4, 1, 5)])
def test_pass_counts_are_checked(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


# ---------------------------------------------------------------------------------------------- Student t


@pytest.mark.parametrize(
    ("df", "table"), [(1, 12.7062), (2, 4.3027), (3, 3.1824), (7, 2.3646), (10, 2.2281), (30, 2.0423)]
)
def test_t_quantile_matches_printed_tables(df: int, table: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(table, abs=5e-5)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.975, 1, 12.706204736174696),  # tan(0.475 pi)
        (0.975, 2, 4.302652729749464),  # (2p - 1) / sqrt(2 p (1 - p))
        (0.95, 2, 2.919985580353726),
        (0.975, 3, 3.182446305284263),
        (0.975, 5, 2.570581835636314),
        (0.975, 7, 2.364624251592785),
        (0.975, 30, 2.042272456301238),
        (0.9995, 1, 636.6192487687196),
        (0.75, 1, 1.0),
    ],
)
def test_t_quantile_precise(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, rel=1e-10)


def test_t_quantile_large_df_is_normal() -> None:
    assert t_quantile(0.975, 10**6) == pytest.approx(1.9600, abs=1e-3)
    assert t_quantile(0.975, 10**8) == pytest.approx(1.959963984540054, abs=1e-6)


def test_t_quantile_symmetry_and_centre() -> None:
    assert t_quantile(0.5, 4) == 0.0
    assert t_quantile(0.025, 7) == pytest.approx(-2.364624251592785, rel=1e-10)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError):
        t_quantile(0.9, 0)


def test_t_cdf() -> None:
    assert t_cdf(0.0, 5) == 0.5
    assert t_cdf(1.0, 1) == pytest.approx(0.75, abs=1e-14)  # 1/2 + atan(1)/pi
    assert t_cdf(2.0, 2) == pytest.approx(0.9082482904638630, abs=1e-14)  # 1/2 + 1/sqrt(6)
    assert t_cdf(-2.0, 2) == pytest.approx(0.0917517095361370, abs=1e-14)


def test_mean_ci_three_values() -> None:
    # mean 0.3, s = 0.1, n = 3: half-width = t(0.975, 2) * 0.1 / sqrt(3) = 4.302652729749464 * 0.1 / 1.7320508...
    # = 0.24841377117503 (4.3027 / sqrt(3) = 2.4842 is the factor in front of s).
    mean, low, high = mean_ci([0.2, 0.3, 0.4])
    assert mean == pytest.approx(0.3, abs=1e-15)
    assert low == pytest.approx(0.3 - 0.24841377117503, abs=1e-12)
    assert high == pytest.approx(0.3 + 0.24841377117503, abs=1e-12)
    # 90%: t(0.95, 2) = 2.919985580353726 -> half-width 0.16858544608470
    _, low, high = mean_ci([0.2, 0.3, 0.4], confidence=0.90)
    assert (high - low) / 2 == pytest.approx(0.16858544608470, abs=1e-12)


def test_mean_ci_edge_cases() -> None:
    mean, low, high = mean_ci([0.4])
    assert mean == 0.4
    assert math.isnan(low)
    assert math.isnan(high)
    assert mean_ci([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError):
        mean_ci([])
    with pytest.raises(ValueError):
        mean_ci([0.1, 0.2], confidence=1.0)


# ---------------------------------------------------------------------------------------------- tables


def episodes(task: str, domain: str, outcomes: dict[int, list[tuple[bool, float]]]) -> list[EpisodeResult]:
    return [
        EpisodeResult(task, domain, seed, rollout, passed, action)
        for seed, runs in outcomes.items()
        for rollout, (passed, action) in enumerate(runs)
    ]


T, F = True, False
RESULTS = [
    # f1: passes 3 of 4 (seed 0: 1 of 2, seed 1: 2 of 2); ACTION mean (1 + 0.5 + 1 + 1) / 4 = 0.875
    *episodes("fin-001", "finance", {0: [(T, 1.0), (F, 0.5)], 1: [(T, 1.0), (T, 1.0)]}),
    # f2: passes 1 of 4 (seed 0: 0 of 2, seed 1: 1 of 2); ACTION mean (0 + 0 + 0.5 + 0.5) / 4 = 0.25
    *episodes("fin-002", "finance", {0: [(F, 0.0), (F, 0.0)], 1: [(F, 0.5), (T, 0.5)]}),
    # l1: never passes; ACTION 0.25 throughout
    *episodes("law-001", "law", {0: [(F, 0.25), (F, 0.25)], 1: [(F, 0.25), (F, 0.25)]}),
]


def test_summarize_rows() -> None:
    finance, law, overall = summarize(reversed(RESULTS), k=2)
    # finance: pass@1 (0.75 + 0.25) / 2; pass@2 (1 + (1 - C(3,2)/C(4,2))) / 2 = (1 + 0.5) / 2;
    # pass^2 (C(3,2)/C(4,2) + 0) / 2 = 0.25; per seed 0: (0.5 + 0) / 2, seed 1: (1 + 0.5) / 2 -> [0.25, 0.75],
    # s = 0.35355339, half-width t(0.975, 1) * s / sqrt(2) = 12.706204736174696 * 0.25 = 3.176551184043674
    assert (finance.domain, finance.tasks, finance.episodes, finance.solved, finance.seeds) == (
        "finance",
        2,
        8,
        2,
        2,
    )
    assert finance.k == 2
    assert finance.pass_at_1 == pytest.approx(0.5)
    assert finance.pass_at_k == pytest.approx(0.75)
    assert finance.pass_hat_k == pytest.approx(0.25)
    assert finance.action == pytest.approx(0.5625)
    assert finance.ci_low == pytest.approx(0.5 - 3.176551184043674, abs=1e-9)
    assert finance.ci_high == pytest.approx(0.5 + 3.176551184043674, abs=1e-9)

    assert law == SummaryRow("law", 1, 4, 0, 0.0, 2, 0.0, 0.0, 0.25, 2, 0.0, 0.0)

    # all: 3 tasks; pass@1 (0.75 + 0.25 + 0) / 3; pass@2 (1 + 0.5 + 0) / 3; pass^2 (0.5 + 0 + 0) / 3;
    # ACTION (0.875 + 0.25 + 0.25) / 3; seeds [(0.5 + 0 + 0) / 3, (1 + 0.5 + 0) / 3] = [1/6, 1/2],
    # s = sqrt(2) / 6, half-width 12.706204736174696 / 6 = 2.117700789362449
    assert (overall.domain, overall.tasks, overall.episodes, overall.solved) == ("all", 3, 12, 2)
    assert overall.pass_at_1 == pytest.approx(1 / 3)
    assert overall.pass_at_k == pytest.approx(0.5)
    assert overall.pass_hat_k == pytest.approx(1 / 6)
    assert overall.action == pytest.approx(1.375 / 3)
    assert overall.ci_low == pytest.approx(1 / 3 - 2.117700789362449, abs=1e-9)
    assert overall.ci_high == pytest.approx(1 / 3 + 2.117700789362449, abs=1e-9)


def test_summarize_k_is_over_one_seeds_rollouts() -> None:
    """pass@k and pass^k are computed per seed over its rollouts, then averaged over seeds; a k past the
    rollouts of a seed has no value, even where a task has that many episodes over all its seeds."""
    assert rollouts_per_seed(RESULTS) == 2  # each task: 2 seeds of 2 rollouts
    rows = summarize(RESULTS, k=2)
    # pass@2 per seed: f1 seed 0 (1 of 2) 1, seed 1 (2 of 2) 1 -> 1; f2 seed 0 (0 of 2) 0, seed 1 (1 of 2) 1
    # -> 0.5; finance (1 + 0.5) / 2; l1 0; all (1 + 0.5 + 0) / 3
    assert [r.pass_at_k for r in rows] == pytest.approx([0.75, 0.0, 0.5])
    # pass^2 per seed: f1 seed 0 0, seed 1 1 -> 0.5; f2 0, 0 -> 0; finance 0.25; all 0.5 / 3
    assert [r.pass_hat_k for r in rows] == pytest.approx([0.25, 0.0, 0.5 / 3])
    for k in (3, 4):  # 4 episodes a task, 2 a seed: pooling the seeds would give a value
        short = summarize(RESULTS, k=k)
        assert all(math.isnan(r.pass_at_k) and math.isnan(r.pass_hat_k) for r in short)


def test_summarize_single_seed_has_no_interval() -> None:
    (row, overall) = summarize(episodes("fin-001", "finance", {3: [(T, 1.0), (F, 0.0), (T, 1.0), (T, 1.0)]}))
    assert (row.pass_at_1, row.pass_at_k, row.seeds) == (0.75, 1.0, 1)
    assert math.isnan(row.ci_low)
    assert math.isnan(row.ci_high)
    assert overall.domain == "all"


def test_summarize_rejects_inconsistent_records() -> None:
    assert summarize([]) == []
    with pytest.raises(ValueError, match="appears twice"):
        summarize([RESULTS[0], RESULTS[0]])
    with pytest.raises(ValueError, match="listed under"):
        summarize([RESULTS[0], EpisodeResult("fin-001", "law", 9, 0, True, 1.0)])
    with pytest.raises(ValueError, match="reserved"):
        summarize([EpisodeResult("x-001", "all", 0, 0, True, 1.0)])
    with pytest.raises(ValueError):
        summarize(RESULTS, k=0)
