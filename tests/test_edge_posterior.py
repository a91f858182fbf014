"""EDGE Phase A bookkeeping against hand-computed cases: the incomplete beta, the Beta prior, the update weights,
the pruning rule, and junction typing / reductions on constructed cardinalities."""

from __future__ import annotations

import random

import pytest

from kopa_gen.edge.junction import choose_reduction, junction_kind, reductions
from kopa_gen.edge.posterior import Posterior, PosteriorConfig, betainc
from kopa_gen.runtime.paths import select


@pytest.mark.parametrize(
    ("a", "b", "x", "want"),
    [
        (1, 1, 0.3, 0.3),  # uniform: I_x = x
        (2, 1, 0.3, 0.09),  # I_x(2,1) = x^2
        (1, 2, 0.3, 0.51),  # I_x(1,2) = 1-(1-x)^2
        (2, 2, 0.5, 0.5),  # symmetric
        (3, 2, 0.4, 0.1792),  # 4x^3 - 3x^4 = 0.256 - 0.0768
    ],
)
def test_betainc_hand_computed(a: float, b: float, x: float, want: float) -> None:
    assert betainc(a, b, x) == pytest.approx(want, abs=1e-12)


def test_prior_and_updates() -> None:
    c = PosteriorConfig(kappa=2.0, w_structural=3.0, w_environmental=0.1, w_inconclusive=0.5)
    p = Posterior.prior(0.75, c)
    assert (p.alpha, p.beta) == (2.5, 1.5)
    p.update("success", c)
    p.update("structural", c)
    p.update("environmental", c)
    p.update("inconclusive", c)
    assert (p.alpha, p.beta) == pytest.approx((3.5, 1.5 + 3.0 + 0.1 + 0.5))
    assert p.trials == 4 and p.successes == 1
    assert p.failures == {"structural": 1, "environmental": 1, "inconclusive": 1}


def test_pruning_rule_hand_computed() -> None:
    # Beta(1, 1+3k) after k structural failures from a neutral-ish prior s=0: P(θ > 0.3) = 0.7^(1+3k)
    c = PosteriorConfig(kappa=2.0, w_structural=3.0, tau=0.3, delta=0.05, n_min=3)
    p = Posterior.prior(0.0, c)  # Beta(1, 3)
    assert p.p_exceeds(0.3) == pytest.approx(0.7**3)
    p.update("structural", c)  # Beta(1, 6): 0.7^6 = 0.1176 > δ
    assert not p.prunable(c)
    p.update("structural", c)  # Beta(1, 9): 0.7^9 = 0.0404 < δ, but only 2 trials < n_min
    assert p.p_exceeds(0.3) == pytest.approx(0.7**9)
    assert not p.prunable(c)
    p.update("structural", c)  # 3 trials, Beta(1, 12): 0.7^12 = 0.0138
    assert p.prunable(c)


def test_structural_failures_prune_environmental_ones_do_not() -> None:
    c = PosteriorConfig()
    env, bad = Posterior.prior(0.8, c), Posterior.prior(0.8, c)
    for _ in range(30):
        env.update("environmental", c)
    for _ in range(6):
        bad.update("structural", c)
    assert not env.prunable(c), env.p_exceeds(c.tau)
    assert bad.prunable(c), bad.p_exceeds(c.tau)


@pytest.mark.parametrize(("n", "kind"), [(1, "seq"), (2, "fan"), (5, "fan"), (6, "drv"), (500, "drv")])
def test_junction_kind(n: int, kind: str) -> None:
    assert junction_kind(n) == kind


def test_junction_kind_needs_a_value() -> None:
    with pytest.raises(ValueError):
        junction_kind(0)


ROWS = [
    {"code": f"C{i:02d}", "amount": str(100 * i), "kind": "A" if i % 3 else "B", "day": f"202401{i + 10:02d}"}
    for i in range(1, 13)
]


def test_reductions_keep_one_to_phi_values_and_agree_with_the_path_language() -> None:
    found = reductions(ROWS, "code")
    kinds = {r.kind for r in found}
    assert {"max", "min", "gte", "lte", "eq", "after"} <= kinds
    for r in found:
        assert 1 <= len(r.kept) <= 5
        # the gold path the synthesizer writes selects exactly the kept values
        assert tuple(select({"rows": ROWS}, f"rows{r.selector}[*].code").values) == r.kept
    top = next(r for r in found if r.kind == "max")
    assert top.kept == ("C12",) and top.selector == "[amount=@max]"
    eq_b = next(r for r in found if r.kind == "eq" and r.pivot == "B")
    assert eq_b.kept == ("C03", "C06", "C09", "C12")


def test_mode_reduction_on_text() -> None:
    rows = [
        {"id": str(i), "city": c} for i, c in enumerate(["서울 중구"] * 3 + [f"부산 {i}구" for i in range(7)])
    ]
    modes = [r for r in reductions(rows, "id") if r.kind == "mode"]
    assert modes and modes[0].pivot == "서울 중구" and modes[0].kept == ("0", "1", "2")


def test_choose_reduction_is_seeded() -> None:
    a = choose_reduction(ROWS, "code", random.Random(3))
    b = choose_reduction(ROWS, "code", random.Random(3))
    assert a == b and a is not None
