"""Shares and ownership as each DART periodic report states them (DS002): treasury stock (자기주식), the total
number of shares (주식의 총수), the largest shareholder's group and its changes, and minority shareholders
(소액주주), all read from the ownership simulation's half-year snapshots and event logs.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from kopa_gen.language.world import Table
from kopa_gen.world.generators.dart_corps import Corp, Snapshot
from kopa_gen.world.generators.dart_disclosure import num, pct, period_end
from kopa_gen.world.generators.dart_market import market
from kopa_gen.world.registry import GenContext, Row, generator


def report_periods(c: Corp, reports: list[tuple[int, str]]) -> Iterator[tuple[int, str, Snapshot, Snapshot]]:
    """(year, reprt_code, state at the start of the fiscal year, state at the period end) per report."""
    for year, reprt in reports:
        yield year, reprt, c.snapshots[dt.date(year - 1, 12, 31)], c.snapshots[period_end(year, reprt)]


@generator("dart_treasury", shares="dart_market")
def dart_treasury(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, acqs_mth1, acqs_mth2, acqs_mth3, stock_knd, bsis_qy,
    change_qy_acqs, change_qy_dsps, change_qy_incnr, trmend_qy, rm."""
    m = market(ctx)
    for c in m.corps:
        for year, reprt, start, end in report_periods(c, m.reports.get(c.code, [])):
            first, last = dt.date(year, 1, 1), period_end(year, reprt)
            totals: list[Row] = []
            for knd, bsis, trmend in (
                ("보통주", start.treasury_c, end.treasury_c),
                ("우선주", start.treasury_p, end.treasury_p),
            ):
                flows = {
                    k: sum(
                        q for d, k2, n, q in c.treasury_flows if k2 == k and n == knd and first <= d <= last
                    )
                    for k in ("acq", "dsps", "incnr")
                }
                if not (bsis or trmend or any(flows.values())):
                    continue
                values = (num(bsis), num(flows["acq"]), num(flows["dsps"]), num(flows["incnr"]), num(trmend))
                yield (
                    c.code,
                    str(year),
                    reprt,
                    "배당가능이익범위 이내 취득",
                    "직접 취득",
                    "장내 직접 취득",
                    knd,
                    *values,
                    "-",
                )
                totals.append((c.code, str(year), reprt, "총계", "-", "-", knd, *values, "-"))
            yield from totals


@generator("dart_stock_totals", shares="dart_market")
def dart_stock_totals(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, se, isu_stock_totqy, now_to_isu_stock_totqy,
    now_to_dcrs_stock_totqy, redc, profit_incnr, rdmstk_repy, etc, istc_totqy, tesstk_co, distb_stock_co."""
    m = market(ctx)
    for c in m.corps:
        for year, reprt, _, end in report_periods(c, m.reports.get(c.code, [])):
            last = period_end(year, reprt)
            rows: list[tuple[str, int, int, int, int]] = []
            for knd, auth, issued, treasury in (
                ("보통주", c.auth_c, end.common, end.treasury_c),
                ("우선주", c.auth_p, end.pref, end.treasury_p),
            ):
                if knd == "우선주" and not c.pref0:
                    continue
                burned = sum(q for d, k, n, q in c.treasury_flows if k == "incnr" and n == knd and d <= last)
                burned += c.hist_cancelled if knd == "보통주" else 0
                rows.append((knd, auth, issued, burned, treasury))
            if len(rows) > 1:
                rows.append(
                    (
                        "합계",
                        sum(r[1] for r in rows),
                        sum(r[2] for r in rows),
                        sum(r[3] for r in rows),
                        sum(r[4] for r in rows),
                    )
                )
            for se, auth, issued, burned, treasury in rows:
                yield (
                    c.code,
                    str(year),
                    reprt,
                    se,
                    num(auth),
                    num(issued + burned),
                    num(burned),
                    "-",
                    num(burned),
                    "-",
                    "-",
                    num(issued),
                    num(treasury),
                    num(issued - treasury),
                )


@generator("dart_holders", shares="dart_market")
def dart_holders(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, nm, relate, stock_knd, bsis_posesn_stock_co,
    bsis_posesn_stock_qota_rt, trmend_posesn_stock_co, trmend_posesn_stock_qota_rt, rm."""
    m = market(ctx)
    for c in m.corps:
        for year, reprt, start, end in report_periods(c, m.reports.get(c.code, [])):
            for k, knd in enumerate(("보통주", "우선주")):
                base0, base1 = (start.common, end.common) if k == 0 else (start.pref, end.pref)
                sums = [0, 0]
                for h, before, after in zip(c.group, start.holdings, end.holdings, strict=True):
                    if not (before[k] or after[k]):
                        continue
                    sums[0] += before[k]
                    sums[1] += after[k]
                    yield (
                        c.code,
                        str(year),
                        reprt,
                        h.nm,
                        h.relate,
                        knd,
                        num(before[k]),
                        pct(before[k], base0),
                        num(after[k]),
                        pct(after[k], base1),
                        "-",
                    )
                if sums[0] or sums[1]:
                    yield (
                        c.code,
                        str(year),
                        reprt,
                        "계",
                        "-",
                        knd,
                        num(sums[0]),
                        pct(sums[0], base0),
                        num(sums[1]),
                        pct(sums[1], base1),
                        "-",
                    )


@generator("dart_holder_changes", shares="dart_market")
def dart_holder_changes(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, change_on, mxmm_shrholdr_nm, posesn_stock_co, qota_rt,
    change_cause, rm."""
    m = market(ctx)
    for c in m.corps:
        for year, reprt in m.reports.get(c.code, []):
            first, last = dt.date(year, 1, 1), period_end(year, reprt)
            for day, cause, total, common in c.group_changes:
                if first <= day <= last:
                    yield (
                        c.code,
                        str(year),
                        reprt,
                        f"{day:%Y.%m.%d}",
                        c.group[0].nm,
                        num(total),
                        pct(total, common),
                        cause,
                        "-",
                    )


@generator("dart_minority", shares="dart_market")
def dart_minority(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, bsns_year, reprt_code, se, shrholdr_co, shrholdr_tot_co, shrholdr_rate, hold_stock_co,
    stock_tot_co, hold_stock_rate."""
    m = market(ctx)
    for c in m.corps:
        base = (c.shares_now * c.price) ** 0.5 * 0.2
        for year, reprt, _, end in report_periods(c, m.reports.get(c.code, [])):
            drift = 1 + 0.04 * ((int(c.code) * 7 + year * 3 + int(reprt)) % 11 - 5) / 5
            count = max(300, int(base * drift))
            big = sum(1 for h in end.holdings if h[0] * 100 >= end.common) + 2
            held = max(0, end.common - sum(h[0] for h in end.holdings) - end.outside - end.treasury_c)
            held = int(held * 0.93)
            yield (
                c.code,
                str(year),
                reprt,
                "소액주주",
                num(count),
                num(count + big),
                f"{int(10000 * count / (count + big)) / 100:.2f}%",
                num(held),
                num(end.common),
                f"{100.0 * held / end.common:.2f}%",
            )
