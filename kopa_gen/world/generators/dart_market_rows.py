"""DART tables that list the ownership simulation's own records: company profiles (the table that runs the
simulation, its anchors pinning real companies), officers, DS005 decisions, 5% and insider reports, and capital
changes (증자·감자).

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

from collections.abc import Iterator

from kopa_gen.language.world import Table
from kopa_gen.world.generators.dart_disclosure import num
from kopa_gen.world.generators.dart_market import market
from kopa_gen.world.registry import GenContext, Row, generator


@generator("dart_profiles", shares="dart_market")
def dart_profiles(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, template, gm, par_value, pref_shares, shares_total, authorized_common, authorized_pref,
    payout, div_freq. Computes the market model (this table's anchors pin real companies' facts)."""
    for c in market(ctx, table).corps:
        yield (
            c.code,
            c.template,
            c.gm,
            c.par,
            c.pref_now,
            c.shares_now + c.pref_now,
            c.auth_c,
            c.auth_p,
            c.payout,
            c.div_freq,
        )


@generator("dart_officers", shares="dart_market")
def dart_officers(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, nm, sexdstn, birth_ym, ofcps, rgist_exctv_at, fte_at, chrg_job, main_career,
    mxmm_shrholdr_relate, start_de, end_de, term_years."""
    for c in market(ctx).corps:
        for o in c.officers:
            yield (
                c.code,
                o.nm,
                o.sex,
                o.birth_ym,
                o.ofcps,
                o.rgist,
                o.fte,
                o.job,
                o.career,
                o.relate,
                o.start.isoformat(),
                o.end.isoformat() if o.end else "",
                o.term,
            )


# Filings the ownership simulation produces, one table each: 유상증자 결정, 전환사채권 발행결정, 자기주식 취득
# 결정 (DS005), 대량보유상황보고 and 임원·주요주주 소유상황보고 (DS004).
MARKET_REPORTS = ("piic", "cvbd", "tsstk", "majorstock", "elestock")


@generator("dart_market_reports", shares="dart_market")
def dart_market_reports(ctx: GenContext, table: Table) -> Iterator[Row]:
    """The rows of one simulated filing kind, named by `params.part` (piic, cvbd, tsstk, majorstock, elestock)."""
    part = str(table.params.get("part"))
    if part not in MARKET_REPORTS:
        raise ValueError(
            f"{table.name}: params.part must be one of {', '.join(MARKET_REPORTS)}, not {part!r}"
        )
    rows: list[Row] = getattr(market(ctx), part)
    yield from rows


@generator("dart_capital_events", shares="dart_market")
def dart_capital_events(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, event_de (YYYY-MM-DD), isu_dcrs_de, isu_dcrs_stle, isu_dcrs_stock_knd, isu_dcrs_qy,
    isu_dcrs_mstvdv_fval_amount, isu_dcrs_mstvdv_amount."""
    for c in market(ctx).corps:
        for day, stle, knd, qty, par, price in sorted(c.capital_events):
            yield c.code, day.isoformat(), f"{day:%Y.%m.%d}", stle, knd, num(qty), num(par), num(price)
