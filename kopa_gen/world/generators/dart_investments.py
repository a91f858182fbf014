"""Investments in other companies per DART periodic report (타법인 출자현황): subsidiaries and stakes drawn per
listed company (unlisted firms of the world and foreign subsidiaries), with their yearly acquisitions and
valuation changes.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from kopa_gen.language.world import Table
from kopa_gen.world.generators.dart_corps import SIZE_BIG, SIZE_MID, SIZE_SMALL
from kopa_gen.world.generators.dart_disclosure import num
from kopa_gen.world.generators.dart_market import market
from kopa_gen.world.registry import GenContext, Row, generator

FOREIGN_SUBSIDIARIES = (
    "America, Inc.",
    "Vietnam Co., Ltd.",
    "Europe GmbH",
    "China Co., Ltd.",
    "India Pvt. Ltd.",
    "Japan Co., Ltd.",
    "Mexico S.A. de C.V.",
    "Hungary Kft.",
    "Brasil Ltda.",
    "(Thailand) Co., Ltd.",
)


@dataclass(frozen=True)
class Investee:
    name: str
    first: dt.date
    purpose: str
    rate: float  # stake (%) at the start of the window
    qty: int
    book: int  # book value, million won
    first_amount: int  # first acquisition, million won
    assets: int  # investee's total assets, million won
    margin: float  # investee's net margin on assets


@generator("dart_investments", shares="dart_market")
def dart_investments(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, inv_prm, frst_acqs_de, invstmnt_purps, frst_acqs_amount,
    bsis_blce_qy, bsis_blce_qota_rt, bsis_blce_acntbk_amount, incrs_dcrs_acqs_dsps_qy, incrs_dcrs_acqs_dsps_amount,
    incrs_dcrs_evl_lstmn, trmend_blce_qy, trmend_blce_qota_rt, trmend_blce_acntbk_amount,
    recent_bsns_year_fnnr_sttus_tot_assets, recent_bsns_year_fnnr_sttus_thstrm_ntpf (amounts in million won)."""
    m = market(ctx)
    unlisted = [
        r[0]
        for r in ctx.rows("SELECT corp_name_formal FROM companies WHERE corp_cls = 'E' ORDER BY corp_code")
    ]
    english = dict(ctx.rows("SELECT corp_code, corp_eng_name FROM companies WHERE corp_cls != 'E'"))
    assets = dict(
        ctx.rows(
            "SELECT corp_code, max(noncurrent_assets) FROM financials WHERE fs_div = 'OFS' GROUP BY corp_code"
        )
    )
    for c in m.corps:
        rng = ctx.rng(f"dart-investments:{c.code}")
        count = {SIZE_BIG: rng.randint(8, 25), SIZE_MID: rng.randint(3, 8)}.get(c.size, rng.randint(0, 4))
        budget = assets.get(c.code, 0) * rng.uniform(0.05, 0.3) / 1e6  # million won
        eng = (english.get(c.code) or c.name).split()[0]
        investees: list[Investee] = []
        taken: set[str] = set()
        for _ in range(count):
            foreign = c.size != SIZE_SMALL and rng.random() < 0.35
            name = f"{eng} {rng.choice(FOREIGN_SUBSIDIARIES)}" if foreign else rng.choice(unlisted)
            while name in taken:
                name = rng.choice(unlisted)
            taken.add(name)
            purpose = rng.choice(("경영참여", "경영참여", "경영참여", "단순투자", "일반투자"))
            rate = (
                rng.uniform(50, 100)
                if purpose == "경영참여" and rng.random() < 0.7
                else rng.uniform(20, 50)
                if purpose == "경영참여"
                else rng.uniform(0.5, 15)
            )
            book = max(1, int(budget * rng.uniform(0.2, 1.5) / max(count, 1)))
            qty = max(1000, int(book * 1e6 / rng.uniform(5_000, 200_000)))
            first = dt.date(rng.randint(1995, 2022), rng.randint(1, 12), rng.randint(1, 28))
            investees.append(
                Investee(
                    name,
                    first,
                    purpose,
                    rate,
                    qty,
                    book,
                    int(book * rng.uniform(0.3, 1.0)),
                    int(book * rng.uniform(2, 20)),
                    rng.uniform(-0.05, 0.12),
                )
            )
        years = sorted({year for year, _ in m.reports.get(c.code, [])})
        draws = {
            (i, year): (rng.random(), rng.uniform(0.05, 0.3), rng.uniform(-0.15, 0.2))
            for i in range(count)
            for year in years
        }
        state: dict[tuple[int, int], tuple[int, float, int]] = {}
        for year, reprt in m.reports.get(c.code, []):
            total = [0, 0, 0, 0, 0, 0, 0]
            rows = []
            for i, inv in enumerate(investees):
                name, first, purpose, first_amount = inv.name, inv.first, inv.purpose, inv.first_amount
                start_qty, start_rate, start_book = state.get((i, year), (inv.qty, inv.rate, inv.book))
                chance, grow_share, swing = draws[(i, year)]
                add = int(start_qty * grow_share) if chance < 0.15 else 0
                add_amount = int(start_book * add / start_qty) if add else 0
                evl = int(start_book * swing) if purpose != "경영참여" else 0
                if reprt == "11012":
                    add, add_amount, evl = add // 2, add_amount // 2, evl // 2
                end_qty, end_book = start_qty + add, max(0, start_book + add_amount + evl)
                end_rate = min(100.0, start_rate * end_qty / start_qty) if add else start_rate
                if reprt == "11011":
                    state[(i, year + 1)] = (end_qty, end_rate, end_book)
                grow = 1 + 0.06 * (year - 2023)
                rows.append(
                    (
                        c.code,
                        str(year),
                        reprt,
                        name,
                        f"{first:%Y.%m.%d}",
                        purpose,
                        num(first_amount),
                        num(start_qty),
                        f"{start_rate:.2f}",
                        num(start_book),
                        num(add),
                        num(add_amount),
                        f"{evl:,}" if evl else "-",
                        num(end_qty),
                        f"{end_rate:.2f}",
                        num(end_book),
                        num(int(inv.assets * grow)),
                        f"{int(inv.assets * inv.margin * grow):,}",
                    )
                )
                for k, v in enumerate((start_qty, start_book, add, add_amount, evl, end_qty, end_book)):
                    total[k] += v
            yield from rows
            if rows:
                yield (
                    c.code,
                    str(year),
                    reprt,
                    "합 계",
                    "-",
                    "-",
                    "-",
                    num(total[0]),
                    "-",
                    num(total[1]),
                    num(total[2]),
                    num(total[3]),
                    f"{total[4]:,}" if total[4] else "-",
                    num(total[5]),
                    "-",
                    num(total[6]),
                    "-",
                    "-",
                )
