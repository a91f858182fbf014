"""Dividends per DART periodic report (배당에 관한 사항, alotMatter): per-share and total cash dividends from the
company's payout policy over consolidated earnings, for the period and the two years before.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.generators.dart_corps import Corp
from kopa_gen.world.generators.dart_disclosure import annual_reports, num, period_end
from kopa_gen.world.generators.dart_market import market
from kopa_gen.world.registry import GenContext, Row, generator


def dividend_facts(
    c: Corp,
    year: int,
    reprt: str,
    cfs: dict[tuple[str, int, str], tuple[int, int]],
    ofs: dict[tuple[str, int, str], tuple[int, int]],
    anchor: dict[str, Any] | None,
) -> dict[str, str] | None:
    """alotMatter values of one period (a year, or January to June for a half-year report); None outside the
    world. Annual DPS follows the payout policy over consolidated EPS; interim DPS is half the last annual one."""
    key = (c.code, year, reprt)
    if key not in cfs or period_end(year, reprt) not in c.snapshots:
        return None
    ni, sep = cfs[key][1], ofs.get(key, (0, 0))[1]
    owners = ni - round(ni * 0.03 / 1000) * 1000
    snap = c.snapshots[period_end(year, reprt)]
    eps = round(owners / (c.shares_now + c.pref_now))
    if anchor is not None:
        dps = int(anchor["dps"][str(year)] if reprt == "11011" else anchor["interim"][str(year)])
    elif reprt == "11011":
        dps = max(0, int(c.payout * eps / 10) * 10) if owners > 0 else 0
    else:
        prev = dividend_facts(c, year - 1, "11011", cfs, ofs, None) if c.div_freq > 1 else None
        dps = int(int(prev["dps"].replace(",", "").replace("-", "0")) / 20) * 10 if prev else 0
    dps_p = dps + max(1, c.par // 100) if dps and c.pref_now else 0
    total = dps * (snap.common - snap.treasury_c) + dps_p * (snap.pref - snap.treasury_p)
    price = c.price * (1 + 0.08 * ((int(c.code) + year) % 5 - 2))
    return {
        "par": num(c.par),
        "ni": num(round(ni / 1e6)),
        "sep": num(round(sep / 1e6)),
        "eps": f"{eps:,}",
        "total": num(round(total / 1e6)),
        "payout": f"{100.0 * total / owners:.1f}" if total and owners > 0 else "-",
        "yield": f"{100.0 * dps / price:.1f}" if dps and reprt == "11011" else "-",
        "yield_p": f"{100.0 * dps_p / price / 0.8:.1f}" if dps_p and reprt == "11011" else "-",
        "dps": num(dps),
        "dps_p": num(dps_p),
    }


@generator("dart_dividend_rows", shares="dart_market")
def dart_dividend_rows(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, ord, se, stock_knd, thstrm, frmtrm, lwfr. Current, previous and
    the year before: cash dividends from the company's payout policy over consolidated net income."""
    m = market(ctx)
    cfs = annual_reports(ctx, "CFS")
    ofs = annual_reports(ctx, "OFS")
    fixed = {str(a["corp_code"]): a for a in table.anchors}
    for c in m.corps:
        reports = m.reports.get(c.code, [])

        items = (
            ("주당액면가액(원)", "", "par"),
            ("(연결)당기순이익(백만원)", "", "ni"),
            ("(별도)당기순이익(백만원)", "", "sep"),
            ("(연결)주당순이익(원)", "보통주", "eps"),
            ("현금배당금총액(백만원)", "", "total"),
            ("주식배당금총액(백만원)", "", ""),
            ("(연결)현금배당성향(%)", "", "payout"),
            ("현금배당수익률(%)", "보통주", "yield"),
            ("현금배당수익률(%)", "우선주", "yield_p"),
            ("주식배당수익률(%)", "보통주", ""),
            ("주식배당수익률(%)", "우선주", ""),
            ("주당 현금배당금(원)", "보통주", "dps"),
            ("주당 현금배당금(원)", "우선주", "dps_p"),
            ("주당 주식배당(주)", "보통주", ""),
            ("주당 주식배당(주)", "우선주", ""),
        )
        for year, reprt in reports:
            anchor = fixed.get(c.code)
            columns = [
                dividend_facts(c, y, r, cfs, ofs, anchor)
                for y, r in ((year, reprt), (year - 1, "11011"), (year - 2, "11011"))
            ]
            for i, (se, knd, key) in enumerate(items):
                values = [(col or {}).get(key, "-") if key else "-" for col in columns]
                yield (c.code, str(year), reprt, i + 1, se, knd, *values)
