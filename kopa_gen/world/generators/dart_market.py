"""The DART ownership simulation (`market`): one run per world build feeds every table that must agree: total
shares, treasury stock, shareholders, 5%/insider reports and the DS005 decisions behind them.

Per listed company, MarketBuilder draws a profile, the officers (dart_roster), the shareholders
(dart_shareholders) and the DS005 decisions (dart_decisions), then replays the share events day by day from
2023-01-01 to the day before today, keeping a Snapshot at every half-year end and filing the 5% and insider
reports the changes require.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.generators.dart_corps import (
    SIZE_BIG,
    SIZE_MID,
    SIZE_SMALL,
    Corp,
    Holder,
    Officer,
    Snapshot,
)
from kopa_gen.world.generators.dart_decisions import DecisionDesk
from kopa_gen.world.generators.dart_disclosure import FIRST_DAY, ReceiptBook, num, pct, period_end, weekday
from kopa_gen.world.generators.dart_roster import roster
from kopa_gen.world.generators.dart_shareholders import NPS, holders, trades
from kopa_gen.world.registry import GenContext, Row


@dataclass
class Market:
    corps: list[Corp]
    piic: list[Row]
    cvbd: list[Row]
    tsstk: list[Row]
    majorstock: list[Row]
    elestock: list[Row]
    reports: dict[str, list[tuple[int, str]]]  # corp_code -> [(year, reprt_code)] of annual and half reports


_MARKETS: dict[tuple[Any, ...], Market] = {}


def market(ctx: GenContext, table: Table | None = None) -> Market:
    """The ownership simulation of every listed company, computed once per world build (the first DART table that
    needs it passes its spec, whose anchors pin real facts)."""
    key = (ctx.seed, ctx.today, id(ctx.db), ctx.db.execute("PRAGMA database_list").fetchone()[2])
    if key not in _MARKETS:
        if table is None:
            raise RuntimeError("dart_profiles must be generated before the other DART tables")
        _MARKETS.clear()
        _MARKETS[key] = MarketBuilder(ctx, table).build()
    return _MARKETS[key]


class MarketBuilder:
    """Simulates, per listed company and day by day from 2023-01-01 to the day before today: share issues and
    buybacks (DS005 decisions), the largest shareholder's group and outside 5% holders, officers and their shares;
    records the state at every half-year end and files the 5% and insider reports the changes require."""

    def __init__(self, ctx: GenContext, table: Table) -> None:
        self.ctx = ctx
        self.cutoff = ctx.today - dt.timedelta(days=1)
        self.anchors = {str(a["corp_code"]): a for a in table.anchors}
        self.book = ReceiptBook(ctx, ["financials"])
        self.desk = DecisionDesk(self.book, self.cutoff, self.anchors)
        self.majorstock: list[Row] = []
        self.elestock: list[Row] = []
        self.unlisted = [
            r[0]
            for r in ctx.rows(
                "SELECT corp_name_formal FROM companies WHERE corp_cls = 'E' ORDER BY corp_code"
            )
        ]

    def build(self) -> Market:
        reports: dict[str, list[tuple[int, str]]] = {}
        for code, year, reprt in self.ctx.rows(
            "SELECT corp_code, bsns_year, reprt_code FROM financials WHERE fs_div = 'CFS' "
            "AND reprt_code IN ('11011', '11012') AND bsns_year >= ? ORDER BY corp_code, bsns_year, reprt_code",
            str(FIRST_DAY.year),
        ):
            reports.setdefault(code, []).append((int(year), reprt))
        corps: list[Corp] = []
        for code, name, cls, shares, price, ceo, listed in self.ctx.rows(
            "SELECT corp_code, corp_name, corp_cls, shares, base_price, ceo_nm, listed_dt FROM companies "
            "WHERE corp_cls != 'E' ORDER BY corp_code"
        ):
            mcap = shares * price
            size = SIZE_BIG if mcap >= 3e12 else SIZE_MID if mcap >= 3e11 else SIZE_SMALL
            corp = Corp(code, name, cls, shares, price, ceo, size, self.ctx.rng(f"dart-market:{code}"))
            self.profile(corp)
            roster(corp, self.anchors, self.unlisted, self.cutoff)
            self.simulate(
                corp, reports.get(code, []), dt.date.fromisoformat(f"{listed[:4]}-{listed[4:6]}-{listed[6:]}")
            )
            corps.append(corp)
        return Market(
            corps, self.desk.piic, self.desk.cvbd, self.desk.tsstk, self.majorstock, self.elestock, reports
        )

    # -------------------------------------------------------------------------------------------- profile
    def profile(self, c: Corp) -> None:
        rng = c.rng
        anchor = self.anchors.get(c.code, {})
        if c.size == SIZE_BIG:
            c.template = rng.choice("AAAB")
        elif c.size == SIZE_MID:
            c.template = rng.choice("AABBC")
        else:
            c.template = rng.choice("BCCC")
        c.gm = round(rng.uniform(0.12, 0.45), 3)
        par_choices = {
            "Y": (5000, 5000, 5000, 1000, 500, 500, 2500, 100),
            "K": (500, 500, 500, 100, 1000, 5000),
            "N": (500, 500, 100),
        }
        c.par = rng.choice(par_choices.get(c.cls, (500,)))
        if c.cls == "Y" and rng.random() < 0.08:
            c.pref_now = int(c.shares_now * rng.uniform(0.03, 0.15))
        c.auth_c = max(c.shares_now * 2, int(c.shares_now * rng.uniform(2, 5) / 1_000_000 + 1) * 1_000_000)
        c.auth_p = int(c.auth_c * 0.2) if c.pref_now else 0
        c.payout = 0.0 if rng.random() < 0.35 else round(rng.uniform(0.1, 0.45), 3)
        c.div_freq = 4 if c.size == SIZE_BIG and rng.random() < 0.2 else 2 if rng.random() < 0.15 else 1
        for key in ("template", "gm", "par", "pref_now", "auth_c", "auth_p", "payout", "div_freq"):
            if key in anchor:
                setattr(c, key, type(getattr(c, key))(anchor[key]))

    # -------------------------------------------------------------------------------------------- history
    def history(self, c: Corp, listed: dt.date) -> None:
        """Capital changes before the window (irdsSttus shows the last five years)."""
        rng = c.rng
        if listed.year >= 2018 and listed < FIRST_DAY:
            qty = int(c.common0 * rng.uniform(0.1, 0.25))
            c.capital_events.append(
                (
                    listed - dt.timedelta(days=5),
                    "유상증자(일반공모)",
                    "보통주",
                    qty,
                    c.par,
                    int(c.price * rng.uniform(0.4, 0.9)),
                )
            )
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            when = dt.date(2018, 1, 1) + dt.timedelta(days=rng.randrange(1800))
            kind = rng.choice(
                ("유상증자(제3자배정)", "전환권행사", "전환권행사", "주식매수선택권행사", "무상증자")
            )
            share = {"무상증자": 0.2, "유상증자(제3자배정)": 0.05}.get(kind, 0.01)
            qty = max(1000, int(c.common0 * share * rng.uniform(0.2, 1.0)))
            price = 0 if kind == "무상증자" else int(c.price * rng.uniform(0.4, 1.0))
            c.capital_events.append((when, kind, "보통주", qty, c.par, price))
        if c.cls == "Y" and c.size == SIZE_BIG and rng.random() < 0.5:
            c.hist_cancelled = int(c.common0 * rng.uniform(0.01, 0.1))

    # -------------------------------------------------------------------------------------------- simulation
    def simulate(self, c: Corp, reports: list[tuple[int, str]], listed: dt.date) -> None:
        rng = c.rng
        events = self.desk.decisions(c)
        issued = sum(e[3][0] for e in events if e[2] == "issue")
        cancelled = [e[3] for e in events if e[2] == "cancel"]
        c.common0 = c.shares_now - issued + sum(q for q, _ in cancelled)
        c.pref0 = c.pref_now + sum(q for _, q in cancelled)
        holders(c, c.common0, c.pref0, self.anchors, self.unlisted)
        self.history(c, listed)
        anchor = self.anchors.get(c.code, {})
        treasury_c = int(
            anchor.get("treasury0", int(c.common0 * rng.uniform(0.003, 0.06)) if rng.random() < 0.45 else 0)
        )
        treasury_p = 0
        events += trades(c, self.cutoff)
        events.sort(key=lambda e: (e[0], e[1]))
        checkpoints = sorted({dt.date(FIRST_DAY.year - 1, 12, 31)} | {period_end(y, r) for y, r in reports})
        common, pref = c.common0, c.pref0
        group_qty = sum(h.common for h in c.group)
        reported = {"": (group_qty, 100.0 * group_qty / common)}
        for h in c.outside:
            reported[h.nm] = (h.common, 100.0 * h.common / common)
        pledged = (
            int(group_qty * rng.uniform(0.1, 0.4))
            if c.group[0].relate == "본인" and rng.random() < 0.3
            else 0
        )

        def snapshot(day: dt.date) -> None:
            c.snapshots[day] = Snapshot(
                common,
                pref,
                treasury_c,
                treasury_p,
                [(h.common, h.pref) for h in c.group],
                sum(h.common for h in c.outside),
            )

        def file_major(day: dt.date, holder: Holder | None, cause: str) -> None:
            key = "" if holder is None else holder.nm
            qty = sum(h.common for h in c.group) if holder is None else holder.common
            rate = 100.0 * qty / common
            before_qty, before = reported[key]
            if holder is None and abs(rate - before) < 1.0:
                return
            if holder is not None:
                crossed = (before < 5.0) != (rate < 5.0)
                if not crossed and (rate < 5.0 or abs(rate - before) < 1.0):
                    return
                cause = (
                    ("신규보고(단순투자목적)" if before < 5.0 else "보유비율 5% 미만으로 감소")
                    if crossed
                    else "보유비율 1% 이상 변동"
                )
            filed = weekday(day + dt.timedelta(days=rng.randint(1, 5)))
            if filed > self.cutoff:
                return
            reported[key] = (qty, rate)
            self.majorstock.append(
                (
                    self.book.next(filed),
                    filed.isoformat(),
                    c.code,
                    "일반" if holder is None and c.group[0].nm != NPS else "약식",
                    c.group[0].nm if holder is None else holder.nm,
                    num(qty),
                    f"{qty - before_qty:,}",
                    f"{rate:.2f}",
                    f"{rate - before:.2f}",
                    num(pledged if holder is None else 0),
                    f"{100.0 * pledged / common:.2f}" if holder is None and pledged else "0.00",
                    cause,
                )
            )

        def file_insider(
            day: dt.date, name: str, officer: Officer | None, holder: Holder | None, qty: int, delta: int
        ) -> None:
            major = (
                holder is not None and holder.major and 100.0 * (holder.common + holder.pref) / common >= 10
            )
            if officer is None and not major:
                return
            filed = weekday(day + dt.timedelta(days=rng.randint(1, 5)))
            if filed > self.cutoff:
                return
            self.elestock.append(
                (
                    self.book.next(filed),
                    filed.isoformat(),
                    c.code,
                    name,
                    "-" if officer is None else "등기임원" if officer.registered else "비등기임원",
                    "-" if officer is None else officer.ofcps,
                    "10%이상주주" if major else "-",
                    num(qty),
                    f"{delta:,}",
                    pct(qty, common),
                    pct(delta, common),
                )
            )

        for day, _, kind, data in events:
            while checkpoints and checkpoints[0] < day:
                snapshot(checkpoints.pop(0))
            if kind == "piic_row":
                row = list(self.desk.piic[data])
                row[6] = num(common)
                self.desk.piic[data] = tuple(row)
            elif kind == "tsstk_row":
                row = list(self.desk.tsstk[data])
                row[14:17] = [
                    num(treasury_c),
                    pct(treasury_c, common),
                    num(treasury_p) if row[16] != "-" else "-",
                ]
                self.desk.tsstk[data] = tuple(row)
            elif kind == "issue":
                new, price, method, to_major = data
                common += new
                c.capital_events.append(
                    (day, f"유상증자({method.replace('증자', '')})", "보통주", new, c.par, price)
                )
                if to_major:
                    c.group[0].common += new
                    c.group_changes.append(
                        (day, "제3자배정 유상증자 참여", sum(h.common for h in c.group), common)
                    )
                    file_major(day, None, "보유비율 1% 이상 변동(유상증자 참여)")
            elif kind == "acquire":
                treasury_c += data[0]
                treasury_p += data[1]
                c.treasury_flows.append((day, "acq", "보통주", data[0]))
                if data[1]:
                    c.treasury_flows.append((day, "acq", "우선주", data[1]))
            elif kind == "cancel":
                for knd, qty in (("보통주", data[0]), ("우선주", data[1])):
                    if qty:
                        c.treasury_flows.append((day, "incnr", knd, qty))
                        c.capital_events.append((day, "이익소각", knd, qty, c.par, 0))
                common -= data[0]
                treasury_c -= data[0]
                pref -= data[1]
                treasury_p -= data[1]
            elif kind == "dispose":
                qty = int(treasury_c * data)
                if qty:
                    treasury_c -= qty
                    c.treasury_flows.append((day, "dsps", "보통주", qty))
            elif kind == "group":
                holder, share, cause = data
                delta = int(holder.common * share) if share < 0 else int(common * share)
                if not delta:
                    continue
                holder.common += delta
                if holder.officer is not None:
                    holder.officer.shares = holder.common
                who = "최대주주" if holder.major else "특수관계인"
                c.group_changes.append((day, f"{who} {cause}", sum(h.common for h in c.group), common))
                insider = (
                    holder.officer if holder.officer is not None and holder.officer.active(day) else None
                )
                file_insider(day, holder.nm, insider, holder, holder.common + holder.pref, delta)
                file_major(day, None, f"보유비율 1% 이상 변동({cause})")
            elif kind == "outside":
                holder, share = data
                delta = max(-holder.common, int(common * share))
                holder.common += delta
                file_major(day, holder, "")
            elif kind == "insider":
                officer, share = data
                if not officer.active(day):
                    continue
                delta = int(officer.shares * share) if share < 0 else int(share)
                officer.shares += delta
                if delta:
                    file_insider(day, officer.nm, officer, None, officer.shares, delta)
            elif kind == "appoint":
                file_insider(day, data.nm, data, None, data.shares, data.shares)
        for day in checkpoints:
            snapshot(day)
        if common != c.shares_now or pref != c.pref_now:
            raise AssertionError(
                f"{c.code}: share timeline ends at {common}/{pref}, not {c.shares_now}/{c.pref_now}"
            )
