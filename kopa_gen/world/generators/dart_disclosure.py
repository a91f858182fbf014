"""How DART writes a disclosure, shared by every DART table: the window of events and filings, filing on business
days, receipt numbers (접수번호), report periods and the amounts the reports state, and the way counts, ratios and
dates are printed.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import cache

from kopa_gen.world.registry import GenContext

# the first day of the simulated window: events, decisions and filings start here
FIRST_DAY = dt.date(2023, 1, 1)


def weekday(day: dt.date) -> dt.date:
    """The day itself, or the next Monday when it falls on a weekend (filings are made on business days)."""
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def add_years(day: dt.date, years: int) -> dt.date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, day=28)


def num(value: int | None) -> str:
    """A count or amount as DART prints it: thousands commas, '-' when there is nothing."""
    return "-" if not value else f"{value:,}"


def pct(part: float, whole: float, digits: int = 2) -> str:
    return f"{100.0 * part / whole:.{digits}f}" if whole else "0.00"


@cache
def day_key(day: dt.date) -> str:
    """YYYYMMDD, remembered (a few thousand days, formatted hundreds of thousands of times)."""
    return f"{day:%Y%m%d}"


def kdate(day: dt.date) -> str:
    """'2024년 03월 15일', the date style of DS005 decisions and tenure ends."""
    return f"{day.year}년 {day.month:02d}월 {day.day:02d}일"


def period_end(year: int, reprt_code: str) -> dt.date:
    month, day = {"11013": (3, 31), "11012": (6, 30), "11014": (9, 30), "11011": (12, 31)}[reprt_code]
    return dt.date(year, month, day)


def annual_reports(ctx: GenContext, fs_div: str) -> dict[tuple[str, int, str], tuple[int, int]]:
    """(corp_code, year, reprt_code) -> (revenue_cum, net_income_cum) of the given statements."""
    rows = ctx.rows(
        "SELECT corp_code, bsns_year, reprt_code, revenue_cum, net_income_cum FROM financials "
        "WHERE fs_div = ? AND reprt_code IN ('11011', '11012')",
        fs_div,
    )
    return {(code, int(year), reprt): (rev, ni) for code, year, reprt, rev, ni in rows}


class ReceiptBook:
    """Allocates receipt numbers (접수번호): the filing date, then a per-day sequence continuing after the numbers
    already used in the world; exchange filings (거래소 공시) use the 80xxxx range of the day, as on DART."""

    def __init__(self, ctx: GenContext, tables: Iterable[str]) -> None:
        self.last: dict[str, int] = {}
        self.last_exchange: dict[str, int] = {}
        for name in tables:
            rows = ctx.rows(
                f"SELECT substr(rcept_no, 1, 8), substr(rcept_no, 9, 2) = '80', "
                f"max(CAST(substr(rcept_no, 9) AS INTEGER)) FROM {name} GROUP BY 1, 2"
            )
            for day, exchange, top in rows:
                book = self.last_exchange if exchange else self.last
                book[day] = max(book.get(day, 0), int(top) % 10000 if exchange else int(top))

    def next(self, day: dt.date, exchange: bool = False) -> str:
        key = day_key(day)
        if exchange:
            self.last_exchange[key] = self.last_exchange.get(key, 0) + 1
            return f"{key}80{self.last_exchange[key]:04d}"
        self.last[key] = self.last.get(key, 0) + 1
        if self.last[key] >= 800000:
            raise ValueError(f"receipt numbers of {key} ran into the exchange range")
        return f"{key}{self.last[key]:06d}"
