"""The people a company pays, per DART periodic report (DS002): registered officers' pay in total and the top
earners (임원 보수, 5억 원 이상), and employees by business segment and sex (직원 현황).

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from kopa_gen.language.world import Table
from kopa_gen.world.generators.dart_corps import SIZE_BIG, SIZE_MID, Officer
from kopa_gen.world.generators.dart_disclosure import annual_reports, num, period_end
from kopa_gen.world.generators.dart_market import market
from kopa_gen.world.registry import GenContext, Row, generator


def period_pay(o: Officer, salt: int, year: int, reprt: str) -> int:
    """What an officer was paid in the report's period (January to June or December), severance included."""
    first, last = dt.date(year, 1, 1), period_end(year, reprt)
    begin, end = max(first, o.start), min(last, o.end or last)
    if begin > end:
        return 0
    factor = 0.9 + 0.3 * ((salt * 0.618 + year * 0.377) % 1.0)
    share = (end - begin).days / 365.0 * (1.0 if reprt == "11011" else 0.92)
    pay = int(o.pay * factor * share / 1000) * 1000
    if o.end is not None and first <= o.end <= last:
        pay += int(o.pay * (1 + (o.end - o.start).days / 3650) / 1000) * 1000
    return pay


@generator("dart_pay_totals", shares="dart_market")
def dart_pay_totals(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, nmpr, mendng_totamt, jan_avrg_mendng_am, rm."""
    m = market(ctx)
    for c in m.corps:
        for year, reprt in m.reports.get(c.code, []):
            last = period_end(year, reprt)
            paid = [period_pay(o, i, year, reprt) for i, o in enumerate(c.officers) if o.registered]
            current = sum(1 for o in c.officers if o.registered and o.active(last))
            left = sum(
                1 for o in c.officers if o.registered and o.end and o.end.year == year and o.end <= last
            )
            total = sum(paid)
            yield (
                c.code,
                str(year),
                reprt,
                num(current),
                num(total),
                num(total // max(current, 1)),
                f"퇴임이사 {left}명 포함" if left else "-",
            )


@generator("dart_top_pay", shares="dart_market")
def dart_top_pay(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, nm, ofcps, mendng_totamt, mendng_totamt_ct_incls_mendng."""
    m = market(ctx)
    for c in m.corps:
        for year, reprt in m.reports.get(c.code, []):
            last = period_end(year, reprt)
            paid = [(period_pay(o, i, year, reprt), o) for i, o in enumerate(c.officers)]
            top = sorted((p for p in paid if p[0] >= 500_000_000), key=lambda p: (-p[0], p[1].nm))[:5]
            for amount, o in top:
                yield (
                    c.code,
                    str(year),
                    reprt,
                    o.nm,
                    o.ofcps if o.active(last) else f"전 {o.ofcps}",
                    num(amount),
                    "-",
                )


SEGMENTS = ["반도체", "디스플레이", "가전", "소재", "화학", "건설", "유통", "제약", "바이오", "모바일", "자동차부품", "에너지", "플랫폼", "게임", "금속", "기계", "식품", "섬유", "물류", "IT서비스"]  # fmt: skip


@generator("dart_staff", shares="dart_market")
def dart_staff(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, fo_bbm, sexdstn, reform_bfe_emp_co_rgllbr,
    reform_bfe_emp_co_cnttk, reform_bfe_emp_co_etc, rgllbr_co, rgllbr_abacpt_labrr_co, cnttk_co,
    cnttk_abacpt_labrr_co, sm, avrg_cnwk_sdytrn, fyer_salary_totamt, jan_salary_am, rm."""
    m = market(ctx)
    separate = annual_reports(ctx, "OFS")
    segments_of = {str(a["corp_code"]): list(a["segments"]) for a in table.anchors}
    heads_of = {str(a["corp_code"]): int(a["employees"]) for a in table.anchors if "employees" in a}
    for c in m.corps:
        rng = ctx.rng(f"dart-staff:{c.code}")
        per_head = rng.uniform(4e8, 2.5e9)
        female = rng.uniform(0.1, 0.4)
        contract = rng.uniform(0.02, 0.1)
        tenure = rng.uniform(4, 18)
        salary = rng.uniform(4.5e7, 1.3e8) * (1.15 if c.size == SIZE_BIG else 1.0)
        count = {SIZE_BIG: 3, SIZE_MID: 2}.get(c.size, 1)
        segments = segments_of.get(c.code) or (
            [*rng.sample(SEGMENTS, count), "공통"] if count > 1 else ["전사"]
        )
        weights = [rng.uniform(1, 3) for _ in segments]
        for year, reprt in m.reports.get(c.code, []):
            revenue = separate.get((c.code, year, "11011"), separate.get((c.code, year, reprt), (0, 0)))[0]
            annual = revenue if (c.code, year, "11011") in separate else revenue * 2
            heads = max(15, int(annual / per_head))
            if c.code in heads_of:
                heads = int(heads_of[c.code] * (1 + 0.02 * (year - 2024) + (0.01 if reprt == "11012" else 0)))
            half = reprt == "11012"
            for seg, weight in zip(segments, weights, strict=True):
                seg_heads = max(4, int(heads * weight / sum(weights)))
                for sex, share in (("남", 1 - female), ("여", female)):
                    total = max(1, int(seg_heads * share))
                    cnttk = int(total * contract)
                    avg = (
                        int(salary * (1.0 if sex == "남" else 0.82) * (1 + 0.04 * (year - 2023)) / 1e6)
                        * 1_000_000
                    )
                    paid = avg // 2 if half else avg
                    yield (
                        c.code,
                        str(year),
                        reprt,
                        seg,
                        sex,
                        "-",
                        "-",
                        "-",
                        num(total - cnttk),
                        "-",
                        num(cnttk),
                        "-",
                        num(total),
                        f"{tenure * (0.8 if sex == '여' else 1.0) + (year - 2023) * 0.3:.1f}",
                        num(paid * total),
                        num(paid),
                        "-",
                    )
