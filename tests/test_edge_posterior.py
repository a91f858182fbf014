"""EDGE Phase A bookkeeping against hand-computed cases: the incomplete beta, the Beta prior, the update weights,
the pruning rule, and the Drv reductions on constructed rows (checked against the path language)."""

from __future__ import annotations

from typing import Literal

import pytest

from kopa_gen.edge.asks import PHI
from kopa_gen.edge.builder import _reductions
from kopa_gen.edge.posterior import Posterior, PosteriorConfig, betainc
from kopa_gen.language.meaning import FieldMeaning
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


ROWS = [
    {"code": f"C{i:02d}", "amount": str(100 * i), "kind": "A" if i % 3 else "B", "day": f"202401{i + 10:02d}"}
    for i in range(1, 13)
]
AMOUNT = FieldMeaning(role="measure", unit="원", ask="금액")
DAY = FieldMeaning(role="date", ask="기준일")
KIND = FieldMeaning(role="enum", ask="구분", labels={"A": "가형", "B": "나형"})


def _codes(selector: str) -> list[str]:
    """The codes the gold path the synthesizer writes selects (the path language, not the builder)."""
    return [str(v) for v in select({"rows": ROWS}, f"rows{selector}[*].code").values]


@pytest.mark.parametrize(("name", "meaning"), [("amount", AMOUNT), ("day", DAY), ("kind", KIND)])
@pytest.mark.parametrize("keep", ["one", "few"])
def test_reductions_keep_one_or_two_to_phi_rows_and_agree_with_the_path_language(
    name: str, meaning: FieldMeaning, keep: Literal["one", "few"]
) -> None:
    found = _reductions(ROWS, name, meaning, keep, "항목")
    if name == "kind" and keep == "one":  # 4 B rows and 8 A rows: no category holds exactly one row
        assert found == []
        return
    assert found
    for selector, phrase, kept, _, _ in found:
        assert (len(kept) == 1) if keep == "one" else (2 <= len(kept) <= PHI)
        assert _codes(selector) == [r["code"] for r in kept], selector
        assert phrase.endswith("항목") and meaning.ask is not None and phrase.startswith(meaning.ask)


def test_reduction_phrases_hand_computed() -> None:
    one = {r[3]: r for r in _reductions(ROWS, "amount", AMOUNT, "one", "항목")}
    assert one["max"][0] == "[amount=@max]" and [r["code"] for r in one["max"][2]] == ["C12"]
    assert one["min"][1] == "금액이(가) 가장 작은 항목"
    few = _reductions(ROWS, "amount", AMOUNT, "few", "항목")
    gte = [r for r in few if r[3] == "gte"]
    # pivots among the top φ values: ≥ 900 keeps C09..C12 (4 rows), ≥ 1,100 keeps C11, C12
    assert {r[0] for r in gte} >= {"[amount>=900]", "[amount>=1100]"}
    nine = next(r for r in gte if r[0] == "[amount>=900]")
    assert [r["code"] for r in nine[2]] == ["C09", "C10", "C11", "C12"] and "900원" in nine[4]
    kinds = _reductions(ROWS, "kind", KIND, "few", "항목")
    assert [(r[0], r[4]) for r in kinds] == [("[kind='B']", "나형")]  # the label, never the code


def test_a_reduction_needs_three_distinct_values() -> None:
    flat = [{"code": str(i), "amount": "5" if i % 2 else "7"} for i in range(10)]
    assert _reductions(flat, "amount", AMOUNT, "one", "항목") == []
