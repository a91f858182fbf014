"""Records of the DART ownership simulation: a listed company (`Corp`) with its officers, its largest
shareholder's group and outside 5% holders, the share state (`Snapshot`) kept at every half-year end, and the
event logs (capital changes, treasury flows, group changes) the periodic-report tables read.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

# size class by market capitalisation (MarketBuilder.build): big >= 3조 won, mid >= 3,000억, small below
SIZE_BIG, SIZE_MID, SIZE_SMALL = "big", "mid", "small"


@dataclass
class Officer:
    nm: str
    sex: str
    birth_ym: str
    ofcps: str
    rgist: str  # 사내이사 / 사외이사 / 기타비상무이사 / 감사 / 미등기
    fte: str
    job: str
    career: str
    relate: str
    start: dt.date
    end: dt.date | None
    term: int
    pay: int  # yearly pay in won
    shares: int = 0

    def active(self, day: dt.date) -> bool:
        return self.start <= day and (self.end is None or self.end > day)

    @property
    def registered(self) -> bool:
        return self.rgist != "미등기"


@dataclass
class Holder:
    """A member of the largest shareholder's group (최대주주 및 특수관계인) or an outside 5% holder."""

    nm: str
    relate: str
    common: int
    pref: int = 0
    officer: Officer | None = None
    major: bool = False  # the largest shareholder itself


@dataclass
class Snapshot:
    common: int
    pref: int
    treasury_c: int
    treasury_p: int
    holdings: list[tuple[int, int]]  # aligned with Corp.group
    outside: int  # shares of outside 5% holders


@dataclass
class Corp:
    code: str
    name: str
    cls: str
    shares_now: int
    price: int
    ceo: str
    size: str
    rng: random.Random
    template: str = "A"
    gm: float = 0.3
    par: int = 500
    pref_now: int = 0
    auth_c: int = 0
    auth_p: int = 0
    payout: float = 0.0
    div_freq: int = 1
    officers: list[Officer] = field(default_factory=list)
    group: list[Holder] = field(default_factory=list)
    outside: list[Holder] = field(default_factory=list)
    common0: int = 0
    pref0: int = 0
    hist_cancelled: int = 0
    snapshots: dict[dt.date, Snapshot] = field(default_factory=dict)
    # (date, cause, group total after) for 최대주주 변동현황
    group_changes: list[tuple[dt.date, str, int, int]] = field(default_factory=list)
    # treasury flows: (date, kind 'acq'|'dsps'|'incnr', stock kind, qty)
    treasury_flows: list[tuple[dt.date, str, str, int]] = field(default_factory=list)
    capital_events: list[tuple[dt.date, str, str, int, int, int]] = field(default_factory=list)
