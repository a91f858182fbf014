"""Financial statements of listed companies: one row per (company, year, report, consolidated/separate), the
single source for DART's statements and FSC's financial services so that both platforms report the same numbers.

Income-statement amounts are for the report's own period (a quarter, a half or the year) plus the cumulative
amount since the start of the fiscal year; balance-sheet amounts are as of the period end. Values in won.

Code, not a declaration: a company's statements are one consistent set (subtotals add up, cumulative amounts sum the
periods, a year grows from the one before), which independent column draws cannot give.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.registry import GenContext, Row, generator

# reprt_code -> (years after the business year, month) of filing
REPORTS = {
    "11013": (0, 5),  # 1분기보고서, filed in May
    "11012": (0, 8),  # 반기보고서, filed in August
    "11014": (0, 11),  # 3분기보고서, filed in November
    "11011": (1, 3),  # 사업보고서, filed in March of the next year
}


def filing_date(year: int, reprt_code: str, day: int) -> dt.date:
    offset, month = REPORTS[reprt_code]
    return dt.date(year + offset, month, day)


@generator("financials")
def financials(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, fs_div, rcept_no, rcept_dt, revenue, revenue_cum,
    operating_income, operating_income_cum, pretax_income, pretax_income_cum, net_income, net_income_cum,
    current_assets, noncurrent_assets, total_assets, current_liabilities, noncurrent_liabilities,
    total_liabilities, capital_stock, retained_earnings, total_equity."""
    rng = ctx.rng(table.name)
    years = [int(y) for y in table.params.get("years", [2021, 2022, 2023, 2024, 2025, 2026])]
    listed = ctx.rows(
        "SELECT corp_code, shares, base_price FROM companies WHERE corp_cls != 'E' ORDER BY corp_code"
    )
    per_date: dict[dt.date, int] = {}
    out: list[tuple[Any, ...]] = []
    anchors = {str(a["corp_code"]): a for a in table.anchors}
    for corp_code, shares, price in listed:
        market_cap = shares * price
        sales = market_cap * rng.uniform(0.3, 2.5)
        margin = rng.uniform(-0.05, 0.18)
        par = rng.choice((100, 500, 500, 5000))
        anchor = anchors.get(corp_code)
        if anchor is not None:  # scale and margin from public figures; the quarterly split stays synthetic
            sales = float(anchor["annual_revenue"]) / 1.025  # the first year's growth draw averages 1.025
            margin = float(anchor["margin"])
            par = int(anchor["par"])
        assets = sales * rng.uniform(0.8, 2.2)
        debt_ratio = rng.uniform(0.2, 0.7)
        sep = rng.uniform(0.55, 0.95)  # separate statements as a share of consolidated
        day = rng.randrange(10, 15)
        for year in years:
            growth = rng.uniform(0.9, 1.15)
            sales *= growth
            assets *= rng.uniform(0.97, 1.1)
            margin = min(0.3, max(-0.2, margin + rng.uniform(-0.03, 0.03)))
            cum = {"revenue": 0.0, "operating_income": 0.0, "pretax_income": 0.0, "net_income": 0.0}
            for reprt_code in ("11013", "11012", "11014", "11011"):
                filed = filing_date(year, reprt_code, day if reprt_code != "11011" else day + 5)
                if filed >= ctx.today:
                    continue
                revenue = sales * rng.uniform(0.23, 0.27)  # this quarter (Q4 for the annual report)
                op = revenue * margin
                pretax = op * rng.uniform(0.85, 1.2)
                net = pretax * rng.uniform(0.72, 0.8)
                for key, value in zip(cum, (revenue, op, pretax, net), strict=True):
                    cum[key] += value
                per_date[filed] = per_date.get(filed, 0) + 1
                rcept_no = f"{filed:%Y%m%d}{per_date[filed]:06d}"
                total_assets = assets * rng.uniform(0.97, 1.03)
                total_liab = total_assets * debt_ratio
                current_assets = total_assets * rng.uniform(0.3, 0.6)
                current_liab = total_liab * rng.uniform(0.4, 0.8)
                equity = total_assets - total_liab
                capital = shares * par
                surplus = capital * 2.5
                for fs_div, scale in (("CFS", 1.0), ("OFS", sep)):

                    def w(x: float, scale: float = scale) -> int:
                        return int(round(x * scale, -3))

                    if reprt_code == "11011":
                        period = [
                            w(cum[k]) for k in ("revenue", "operating_income", "pretax_income", "net_income")
                        ]
                        cumulative = period
                    else:
                        period = [w(v) for v in (revenue, op, pretax, net)]
                        cumulative = [
                            w(cum[k]) for k in ("revenue", "operating_income", "pretax_income", "net_income")
                        ]
                    out.append(
                        (
                            corp_code,
                            str(year),
                            reprt_code,
                            fs_div,
                            rcept_no,
                            f"{filed:%Y%m%d}",
                            period[0],
                            cumulative[0],
                            period[1],
                            cumulative[1],
                            period[2],
                            cumulative[2],
                            period[3],
                            cumulative[3],
                            w(current_assets),
                            w(total_assets) - w(current_assets),
                            w(total_assets),
                            w(current_liab),
                            w(total_liab) - w(current_liab),
                            w(total_liab),
                            w(capital),
                            w(max(0.0, equity - capital - surplus)),
                            w(total_assets) - w(total_liab),
                        )
                    )
    yield from out
