"""DS005 major-event decisions (주요사항보고서) in the DART ownership simulation: share issues (유상증자),
convertible bonds (전환사채) and buybacks (자기주식 취득), with the share events each causes.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

from kopa_gen.world.generators.dart_corps import SIZE_BIG, SIZE_MID, Corp
from kopa_gen.world.generators.dart_disclosure import (
    FIRST_DAY,
    ReceiptBook,
    add_years,
    kdate,
    num,
    pct,
    weekday,
)
from kopa_gen.world.registry import Row

BROKERS = (
    "삼성증권(주)",
    "NH투자증권(주)",
    "미래에셋증권(주)",
    "KB증권(주)",
    "한국투자증권(주)",
    "신한투자증권(주)",
    "키움증권(주)",
    "하나증권(주)",
)


class DecisionDesk:
    """Draws each company's DS005 decisions of the window and keeps their rows (dart_piic, dart_cvbd,
    dart_tsstk); receipt numbers come from the simulation's one receipt book."""

    def __init__(self, book: ReceiptBook, cutoff: dt.date, anchors: Mapping[str, Mapping[str, Any]]) -> None:
        self.book = book
        self.cutoff = cutoff
        self.anchors = anchors
        self.piic: list[Row] = []
        self.cvbd: list[Row] = []
        self.tsstk: list[Row] = []

    def decisions(self, c: Corp) -> list[tuple[dt.date, int, str, Any]]:
        """DS005 decisions (rows appended here) and the share events they cause, as (day, order, kind, data)."""
        rng = c.rng
        events: list[tuple[dt.date, int, str, Any]] = []
        anchor = self.anchors.get(c.code, {})
        odirs = sum(1 for o in c.officers if o.rgist == "사외이사" and o.start <= FIRST_DAY)
        p_piic = {"K": 0.10, "N": 0.12}.get(c.cls, 0.01 if c.size == SIZE_BIG else 0.03)
        p_cvbd = {"K": 0.12, "N": 0.08}.get(c.cls, 0.0 if c.size == SIZE_BIG else 0.03)
        p_tsstk = {"K": 0.07, "N": 0.02}.get(c.cls, {SIZE_BIG: 0.3, SIZE_MID: 0.12}.get(c.size, 0.06))
        if "buybacks" in anchor:
            p_piic = p_cvbd = p_tsstk = 0.0
        market_name = {"Y": "유가증권시장", "K": "코스닥시장", "N": "코넥스시장"}[c.cls]
        cb_round = rng.randint(1, 8)
        for year in range(FIRST_DAY.year, self.cutoff.year + 1):
            span = (
                min(dt.date(year, 12, 31), self.cutoff - dt.timedelta(days=10)) - dt.date(year, 1, 2)
            ).days
            if span <= 0:
                continue
            if rng.random() < p_piic:
                day = weekday(dt.date(year, 1, 2) + dt.timedelta(days=rng.randrange(span)))
                new = int(c.shares_now * rng.uniform(0.03, 0.18))
                price = max(100, int(c.price * rng.uniform(0.72, 0.98) / 10) * 10)
                method = rng.choice(
                    (
                        "제3자배정증자",
                        "제3자배정증자",
                        "제3자배정증자",
                        "주주배정후 실권주 일반공모",
                        "일반공모증자",
                    )
                )
                funds = self.funds(rng, new * price)
                rcept = self.book.next(day)
                self.piic.append(
                    (
                        rcept,
                        c.code,
                        f"{day:%Y%m%d}",
                        num(new),
                        "-",
                        num(c.par),
                        "{common}",
                        num(c.pref_now) if c.pref_now else "-",
                        *funds,
                        method,
                        "아니오",
                        "-",
                        "-",
                    )
                )
                pay_day = weekday(day + dt.timedelta(days=rng.randint(35, 60)))
                if pay_day <= self.cutoff:
                    to_major = method == "제3자배정증자" and rng.random() < 0.3
                    events.append((pay_day, 0, "issue", (new, price, method, to_major)))
                events.append((day, -1, "piic_row", len(self.piic) - 1))
            if rng.random() < p_cvbd:
                day = weekday(dt.date(year, 1, 2) + dt.timedelta(days=rng.randrange(span)))
                self.cvbd.append(self.cvbd_row(c, day, cb_round, odirs))
                cb_round += 1
            if rng.random() < p_tsstk:
                day = weekday(dt.date(year, 1, 2) + dt.timedelta(days=rng.randrange(span)))
                qty = int(c.shares_now * rng.uniform(0.003, 0.03))
                price = int(c.price * rng.uniform(0.85, 1.15))
                burn = rng.random() < (0.5 if c.size == SIZE_BIG else 0.2)
                purpose = (
                    "주식 소각을 통한 주주가치 제고"
                    if burn
                    else rng.choice(
                        ("주주가치 제고 및 주가 안정", "주가 안정 및 주주가치 제고", "임직원 성과보상")
                    )
                )
                events += self.buyback(c, day, qty, 0, qty * price, 0, purpose, burn, market_name, odirs)
        for spec in anchor.get("buybacks", []):
            day = dt.date.fromisoformat(str(spec["decided"]))
            events += self.buyback(
                c,
                day,
                int(spec["common"]),
                int(spec.get("pref", 0)),
                int(spec["amount_common"]),
                int(spec.get("amount_pref", 0)),
                str(spec["purpose"]),
                bool(spec.get("cancel")),
                market_name,
                odirs,
                dt.date.fromisoformat(str(spec["begin"])),
                dt.date.fromisoformat(str(spec["end"])),
                dt.date.fromisoformat(str(spec["cancel"])) if spec.get("cancel") else None,
            )
        return events

    def funds(self, rng: random.Random, total: int) -> tuple[str, ...]:
        """자금조달 목적: 시설, 영업양수, 운영, 채무상환, 타법인 증권 취득, 기타 (won, '-' when none)."""
        weights = [
            rng.choice((0, 0, 1, 2)),
            0,
            rng.choice((2, 3, 4)),
            rng.choice((0, 0, 1)),
            rng.choice((0, 0, 1)),
            0,
        ]
        whole = sum(weights)
        parts = [total * w // whole for w in weights]
        parts[2] += total - sum(parts)
        return tuple(num(p) for p in parts)

    def cvbd_row(self, c: Corp, day: dt.date, round_no: int, odirs: int) -> Row:
        rng = c.rng
        face = max(1, int(c.shares_now * c.price * rng.uniform(0.02, 0.12) / 1e8)) * 100_000_000
        conv = max(100, int(c.price * rng.uniform(0.9, 1.1)))
        count = face // conv
        private = rng.random() < 0.85
        pay = weekday(day + dt.timedelta(days=rng.randint(5, 14)))
        maturity = add_years(pay, 3)
        rcept = self.book.next(day)
        return (
            rcept,
            c.code,
            f"{day:%Y%m%d}",
            str(round_no),
            f"무기명식 이권부 무보증 {'사모' if private else '공모'} 전환사채",
            num(face),
            "-",
            "-",
            "-",
            "-",
            "-",
            "-",
            *self.funds(rng, face),
            f"{rng.choice((0.0, 0.0, 1.0, 2.0)):.1f}",
            f"{rng.choice((2.0, 3.0, 4.0, 5.0)):.1f}",
            kdate(maturity),
            "사모" if private else "공모",
            "100",
            num(conv),
            f"{c.name} 기명식 보통주",
            num(count),
            pct(count, c.shares_now),
            kdate(add_years(pay, 1)),
            kdate(maturity - dt.timedelta(days=30)),
            num(int(conv * 0.7)),
            "발행당시 전환가액의 70%",
            "-",
            "-",
            kdate(pay),
            kdate(pay),
            "-" if private else rng.choice(BROKERS),
            "-",
            kdate(day),
            str(odirs),
            str(rng.choice((0, 0, 0, 1))) if odirs else "0",
            rng.choice(("참석", "-")),
            "미해당" if private else "해당",
            "사모발행" if private else "-",
            "-",
            "미해당",
        )

    def buyback(
        self,
        c: Corp,
        day: dt.date,
        qty: int,
        qty_p: int,
        amount: int,
        amount_p: int,
        purpose: str,
        burn: bool,
        market_name: str,
        odirs: int,
        begin: dt.date | None = None,
        end: dt.date | None = None,
        cancel: dt.date | None = None,
    ) -> list[tuple[dt.date, int, str, Any]]:
        rng = c.rng
        begin = begin or weekday(day + dt.timedelta(days=1))
        end = end or begin + dt.timedelta(days=91)
        limit = min(qty, max(qty // 10, c.shares_now // 100))
        rcept = self.book.next(day)
        self.tsstk.append(
            (
                rcept,
                c.code,
                f"{day:%Y%m%d}",
                num(qty),
                num(qty_p),
                num(amount),
                num(amount_p),
                kdate(begin),
                kdate(end),
                kdate(begin),
                "-",
                purpose,
                f"{market_name}을 통한 장내 직접 취득",
                rng.choice(BROKERS),
                "{treasury_c}",
                "{treasury_rt}",
                num(0) if not qty_p else "{treasury_p}",
                "-",
                "-",
                "-",
                "-",
                "-",
                kdate(day),
                str(odirs),
                "0",
                "-",
                num(limit),
                num(min(qty_p, max(qty_p // 10, c.pref_now // 100))) if qty_p else "-",
            )
        )
        events: list[tuple[dt.date, int, str, Any]] = [(day, -1, "tsstk_row", len(self.tsstk) - 1)]
        # bought in three monthly-ish tranches; a buyback still running today is partly done
        for k in (1, 2, 3):
            tranche_day = begin + (end - begin) * k / 3
            if tranche_day <= self.cutoff:
                events.append(
                    (
                        tranche_day,
                        1,
                        "acquire",
                        (qty * k // 3 - qty * (k - 1) // 3, qty_p * k // 3 - qty_p * (k - 1) // 3),
                    )
                )
        if end <= self.cutoff:
            cancel = cancel or (weekday(end + dt.timedelta(days=rng.randint(7, 30))) if burn else None)
            if cancel is not None and cancel <= self.cutoff:
                events.append((cancel, 2, "cancel", (qty, qty_p)))
        return events
