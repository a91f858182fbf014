"""FSC (금융위원회, data.go.kr) world: KRX daily stock prices and market indices, corp outlines, business-group
affiliates and consolidated subsidiaries.

Financial statements need no table here: the FSC views read the shared `financials` rows, so DART and FSC report
the same numbers. Every listed company of `companies` is a KRX security (srtnCd = stock_code).

Code, not a declaration: the price walk is a path (each close follows the one before, within limits and on ticks),
indices chain their members' market caps day by day, and outlines, groups and subsidiaries are per-company
structures. fsc_securities would be a declared `for_each` over companies but for its ISIN check digit: the declared
`code` kind's `check` has no `isin` rule yet (codes.check_digit has).
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import math
import operator
import random
from collections.abc import Iterator, Sequence
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.codes import check_digit
from kopa_gen.world.names import person
from kopa_gen.world.registry import GenContext, Row, generator

# KRX market closures on 2026 weekdays: the official 2026 public holidays (관공서의 공휴일에 관한 규정, as published
# in the 2026 월력요항) plus KRX's own closures (근로자의 날, year-end). 추석 is 9/24-9/26 (Thu-Sat) with no
# substitute day: 설·추석 get one only when a day of the holiday falls on a Sunday, and 9/26 is a Saturday.
# 개천절 (10/3, Saturday) is substituted on 10/5; 광복절 (8/15, Saturday) on 8/17.
KRX_HOLIDAYS_2026 = frozenset(
    {
        "20260101",  # 신정
        "20260216",  # 설날 연휴
        "20260217",
        "20260218",
        "20260302",  # 삼일절 대체공휴일 (3/1 Sunday)
        "20260501",  # 근로자의 날 (KRX 휴장)
        "20260505",  # 어린이날
        "20260525",  # 부처님오신날 대체공휴일 (5/24 Sunday)
        "20260603",  # 제9회 전국동시지방선거
        "20260817",  # 광복절 대체공휴일
        "20260924",  # 추석 연휴 (9/26 Saturday, no substitute)
        "20260925",
        "20261005",  # 개천절 대체공휴일
        "20261009",  # 한글날
        "20261225",  # 성탄절
        "20261231",  # 연말 휴장
    }
)

MARKET_NAMES = {"Y": "KOSPI", "K": "KOSDAQ", "N": "KONEX"}

# KRX tick sizes (호가가격단위) since 2023-01-25, the same for KOSPI, KOSDAQ and KONEX: a price below
# TICK_BOUNDS[i] (and at or above the bound before it) moves in steps of TICK_SIZES[i].
TICK_BOUNDS = (2_000, 5_000, 20_000, 50_000, 200_000, 500_000)
TICK_SIZES = (1, 5, 10, 50, 100, 500, 1_000)

BIG4 = ("삼일회계법인", "삼정회계법인", "안진회계법인", "한영회계법인")
MID_AUDITORS = (
    "대주회계법인 신한회계법인 한울회계법인 삼덕회계법인 이촌회계법인 성현회계법인 인덕회계법인 우리회계법인 다산회계법인 정동회계법인 태성회계법인 신우회계법인"
).split()
BANKS = "KDB산업은행 우리은행 신한은행 하나은행 KB국민은행 IBK기업은행 NH농협은행 부산은행 대구은행 경남은행 광주은행 수협은행".split()
# First two digits of the 5-digit postal code (국가기초구역번호) by 시도 code.
POSTAL_PREFIX = {
    "11": (1, 9),
    "26": (46, 49),
    "27": (41, 43),
    "28": (21, 23),
    "29": (61, 62),
    "30": (34, 35),
    "31": (44, 45),
    "36": (30, 30),
    "41": (10, 18),
    "43": (27, 29),
    "44": (31, 33),
    "46": (57, 59),
    "47": (36, 40),
    "48": (50, 53),
    "50": (63, 63),
    "51": (24, 26),
    "52": (54, 56),
}
# Foreign subsidiaries of synthetic parents: (name pattern, address, business).
FOREIGN = (
    ("{} America, Inc.", "미국 캘리포니아주 어바인", "북미 판매"),
    ("{} Vietnam Co., Ltd.", "베트남 박닌성", "생산"),
    ("{} (Shanghai) Co., Ltd.", "중국 상하이시", "중국 판매"),
    ("{} Europe GmbH", "독일 프랑크푸르트", "유럽 판매"),
    ("{} Japan Co., Ltd.", "일본 도쿄도", "일본 판매"),
    ("{} India Pvt. Ltd.", "인도 노이다", "생산 및 판매"),
    ("{} Mexico S.A. de C.V.", "멕시코 누에보레온주", "생산"),
    ("PT. {} Indonesia", "인도네시아 자카르타", "생산 및 판매"),
    ("{} Poland Sp. z o.o.", "폴란드 브로츠와프", "생산"),
    ("{} (Thailand) Co., Ltd.", "태국 방콕", "동남아 판매"),
    ("{} Hungary Kft.", "헝가리 괴드", "생산"),
    ("{} Holdings B.V.", "네덜란드 암스테르담", "해외 지주회사"),
)
BASES = (
    "의결권의 과반수 보유",
    "의결권의 과반수 보유",
    "의결권의 과반수 보유",
    "실질지배력 보유",
    "100% 지분 보유",
)


def trading_days(start: dt.date, end: dt.date) -> list[dt.date]:
    """KRX trading days from start to end inclusive (weekdays that are not closures)."""
    if start <= end and (start.year, end.year) != (2026, 2026):
        raise ValueError(
            f"KRX closures are known for 2026 only; add {start.year}-{end.year} to KRX_HOLIDAYS_2026"
        )
    days = []
    day = start
    while day <= end:
        if day.weekday() < 5 and ymd(day) not in KRX_HOLIDAYS_2026:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def round_tick(price: float) -> int:
    size = TICK_SIZES[bisect.bisect_right(TICK_BOUNDS, price)]
    return max(1, int(price / size + 0.5) * size)


def floor_tick(price: float) -> int:
    size = TICK_SIZES[bisect.bisect_right(TICK_BOUNDS, price)]
    return int(price // size) * size


def ceil_tick(price: float) -> int:
    size = TICK_SIZES[bisect.bisect_right(TICK_BOUNDS, price)]
    return int(-(-price // size)) * size


def basis_points(change: int, prev: int) -> int:
    """Change as hundredths of a percent, rounded half away from zero (KRX 등락률)."""
    q = (abs(change) * 20_000 + prev) // (2 * prev)
    return q if change >= 0 else -q


def oracle_number(value: float, digits: int = 2) -> str:
    """A number as the FSC services print it: no trailing zeros, no leading zero ('-.39', '2392.1', '100')."""
    text = f"{round(value, digits):.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", ""):
        return "0"
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "-" + text[2:]
    return text


def ymd(day: dt.date) -> str:
    return day.isoformat().replace("-", "")


def _date(text: str) -> dt.date:
    return dt.date(int(text[:4]), int(text[4:6]), int(text[6:8]))


@generator("fsc_securities")
def fsc_securities(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: srtnCd, isinCd, itmsNm, mrktCtg, lstgStCnt, corp_code (one row per listed company)."""
    listed = ctx.rows(
        "SELECT stock_code, corp_name, corp_cls, shares, corp_code FROM companies "
        "WHERE corp_cls IN ('Y', 'K', 'N') AND stock_code != '' ORDER BY stock_code"
    )
    for stock_code, name, cls, shares, corp_code in listed:
        body = f"KR7{stock_code}00"
        yield stock_code, body + check_digit(body, "isin"), name, MARKET_NAMES[cls], shares, corp_code


def _walk(rng: random.Random, market: str, shares: int, base: int, factor: Sequence[float]) -> list[Row]:
    """One security's daily bars: a mean-reverting random walk around `base` with KRX limits and ticks. Only the
    return is Gaussian; the intraday and volume noise is uniform, which is cheaper and looks the same."""
    gauss, uniform, exp = rng.gauss, rng.random, math.exp
    cap = shares * base
    size = 1.0 if cap < 1e12 else 0.75 if cap < 1e13 else 0.6  # large caps move less and rarely jump
    sigma = {"KOSPI": 0.017, "KOSDAQ": 0.026, "KONEX": 0.03}[market] * rng.uniform(0.8, 1.25) * size
    jumps = 0.004 if cap < 1e12 else 0.0005
    beta = rng.uniform(0.6, 1.4)
    turnover = shares * rng.lognormvariate(
        math.log({"KOSPI": 0.002, "KOSDAQ": 0.006, "KONEX": 0.0005}[market]), 0.6
    )
    anchor = math.log(max(base, 100))
    thin = 0.25 if market == "KONEX" else 0.0
    prev = round_tick(exp(anchor + gauss(0, 0.04)))
    bars: list[Row] = []
    for f in factor:
        if uniform() < thin:  # thin market: nothing traded, the price carries over
            bars.append((prev, 0, 0, 0, 0, 0, 0, 0))
            continue
        r = beta * f + gauss(0, sigma) - 0.03 * (math.log(prev) - anchor)
        if uniform() < jumps:  # news: a large gap, up to the daily limit
            r += gauss(0, 0.15 * size)
        up, down = floor_tick(prev * 1.3), ceil_tick(prev * 0.7)
        close = min(up, max(down, round_tick(prev * exp(r))))
        open_ = min(up, max(down, round_tick(prev * exp(0.35 * r + (uniform() - 0.5) * sigma))))
        high = max(open_, close)
        high = min(up, max(high, round_tick(high * (1 + uniform() * sigma * 0.7))))
        low = min(open_, close)
        low = max(down, min(low, round_tick(low * (1 - uniform() * sigma * 0.7))))
        move = abs(close - prev) / prev
        volume = max(1, int(turnover * exp((uniform() - 0.5) * 1.5) * (1 + 12 * move)))
        vwap = min(high, max(low, (high + low + 2 * close) / 4 * (1 + (uniform() - 0.5) * 0.006)))
        change = close - prev
        bars.append((close, change, basis_points(change, prev), open_, high, low, volume, int(volume * vwap)))
        prev = close
    return bars


@generator("fsc_stock_daily")
def fsc_stock_daily(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: basDt, srtnCd, clpr, vs, flt_bp, mkp, hipr, lopr, trqu, trPrc (integers but srtnCd).

    Rows come newest day first, codes ascending: the API's order, which the spec's (basDt DESC, srtnCd) index
    serves without a sort (page 225 of 1,000 rows: about 0.6 s with a sort, 0.1 s without)."""
    rng = ctx.rng(table.name)
    days = trading_days(dt.date.fromisoformat(table.params["start"]), ctx.today - dt.timedelta(days=1))
    kospi = [rng.gauss(0.0004, 0.010) for _ in days]
    kosdaq = [0.8 * k + rng.gauss(0.0002, 0.008) for k in kospi]
    factors = {"KOSPI": kospi, "KOSDAQ": kosdaq, "KONEX": kosdaq}
    securities = ctx.rows(
        "SELECT s.srtnCd, s.mrktCtg, s.lstgStCnt, c.base_price FROM fsc_securities s "
        "JOIN companies c ON c.corp_code = s.corp_code ORDER BY s.srtnCd"
    )
    walks = [
        (code, _walk(rng, market, shares, base, factors[market])) for code, market, shares, base in securities
    ]
    for i in reversed(range(len(days))):
        day = int(ymd(days[i]))
        for code, bars in walks:
            yield (day, code, *bars[i])


def _index_members(ranked: Sequence[tuple[str, str, str]], spec: dict[str, Any]) -> list[str]:
    """Stock codes of an index: its markets' stocks in cap order, cut to `ranks`, then narrowed to `induty`."""
    pool = [(code, induty) for code, cls, induty in ranked if cls in spec["markets"]]
    first, last = spec.get("ranks", [1, len(pool)])
    return sorted(
        code for code, induty in pool[first - 1 : last] if "induty" not in spec or induty in spec["induty"]
    )


@generator("fsc_index_daily")
def fsc_index_daily(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: the StockMarketIndex row (basDt … basIdx). Each index chains the market cap of its member stocks
    of `fsc_stock_daily` from `level` (its close on the day before the first stock day); January to May is a
    random bridge from the 2025 year-end close to `level`, for the year's high, low and year-end change."""
    rng = ctx.rng(table.name)
    catalog: list[dict[str, Any]] = table.params["indices"]
    ranked = ctx.rows(
        "SELECT stock_code, corp_cls, induty_code FROM companies WHERE corp_cls != 'E' AND stock_code != '' "
        "ORDER BY shares * base_price DESC, stock_code"
    )
    members = [_index_members(ranked, spec) for spec in catalog]
    # Stocks that belong to the same indices are summed together in SQL (one group per membership signature).
    signature: dict[str, list[int]] = {}
    for i, codes in enumerate(members):
        for code in codes:
            signature.setdefault(code, []).append(i)
    groups: dict[tuple[int, ...], int] = {}
    for code in sorted(signature):
        groups.setdefault(tuple(signature[code]), len(groups))
    ctx.db.execute("CREATE TEMP TABLE fsc_index_groups (srtnCd TEXT, grp INTEGER, shares INTEGER)")
    ctx.db.executemany(
        "INSERT INTO fsc_index_groups SELECT srtnCd, ?, lstgStCnt FROM fsc_securities WHERE srtnCd = ?",
        [(groups[tuple(idx)], code) for code, idx in sorted(signature.items())],
    )
    ctx.db.execute("CREATE INDEX temp.ix_fsc_index_groups ON fsc_index_groups (srtnCd)")
    # Per group and day: cap, previous cap, cap at open, high and low (an untraded day counts at the close),
    # volume, turnover.
    sums = ctx.rows(
        "SELECT g.grp, d.basDt, SUM(d.clpr * g.shares), SUM((d.clpr - d.vs) * g.shares), "
        "SUM((CASE WHEN d.mkp > 0 THEN d.mkp ELSE d.clpr END) * g.shares), "
        "SUM((CASE WHEN d.hipr > 0 THEN d.hipr ELSE d.clpr END) * g.shares), "
        "SUM((CASE WHEN d.lopr > 0 THEN d.lopr ELSE d.clpr END) * g.shares), SUM(d.trqu), SUM(d.trPrc) "
        "FROM fsc_stock_daily d NOT INDEXED JOIN fsc_index_groups g ON g.srtnCd = d.srtnCd "
        "GROUP BY g.grp, d.basDt ORDER BY g.grp, d.basDt"
    )
    ctx.db.execute("DROP TABLE fsc_index_groups")
    by_group: dict[int, list[tuple[int, ...]]] = {}
    for grp, *values in sums:
        by_group.setdefault(grp, []).append(tuple(values))
    series = {grp: list(zip(*bars, strict=True)) for grp, bars in by_group.items()}
    days = [str(d) for d in series[0][0]]
    first_day = _date(days[0])
    history = trading_days(dt.date(first_day.year, 1, 1), first_day - dt.timedelta(days=1))
    out: list[Row] = []
    for i, spec in enumerate(catalog):
        totals = [[0] * len(days) for _ in range(7)]
        for key, grp in groups.items():
            if i in key:
                for k in range(7):
                    totals[k] = list(map(operator.add, totals[k], series[grp][k + 1]))
        out.extend(_index_rows(rng, spec, len(members[i]), days, totals, history))
    out.sort(key=lambda r: (r[0], r[1], r[2]))
    yield from out


def _index_rows(
    rng: random.Random,
    spec: dict[str, Any],
    count: int,
    days: Sequence[str],
    sums: Sequence[Sequence[int]],
    history: Sequence[dt.date],
) -> Iterator[Row]:
    """One index's rows from its members' daily sums (cap, previous cap, open, high, low, volume, turnover)."""
    cap, prev_cap, open_cap, high_cap, low_cap, volume, turnover = sums
    level = start = float(spec["level"])
    bars: list[tuple[float, float, float, float]] = []  # unrounded close, open, high, low
    for i in range(len(days)):
        ratio = level / prev_cap[i]
        close, open_ = cap[i] * ratio, open_cap[i] * ratio
        top, bottom = max(open_, close), min(open_, close)
        bars.append(
            (
                close,
                open_,
                top + 0.5 * (high_cap[i] * ratio - top),
                bottom - 0.5 * (bottom - low_cap[i] * ratio),
            )
        )
        level = close
    closes = [start] + [b[0] for b in bars]
    rets = [math.log(b / a) for a, b in itertools.pairwise(closes)]
    vol = (sum(r * r for r in rets) / len(rets)) ** 0.5
    year_end = start * math.exp(rng.gauss(0, 0.08))
    walk = [0.0]
    for _ in history:
        walk.append(walk[-1] + rng.gauss(0, vol))
    gap = walk[-1] - math.log(start / year_end)
    early = [
        (year_end * math.exp(walk[k] - gap * k / len(history)), ymd(d))
        for k, d in enumerate(history, start=1)
    ]
    high_rec = max(early, key=lambda x: round(x[0], 2))
    low_rec = min(early, key=lambda x: round(x[0], 2))
    base_close = round(year_end, 2)
    prev = round(start, 2)
    for i, (close, open_, high, low) in enumerate(bars):
        c = round(close, 2)
        if c > round(high_rec[0], 2):
            high_rec = (close, days[i])
        if c < round(low_rec[0], 2):
            low_rec = (close, days[i])
        change = round(c - prev, 2)
        since = round(c - base_close, 2)
        yield (
            days[i],
            spec["csf"],
            spec["name"],
            count,
            oracle_number(c),
            oracle_number(change),
            oracle_number(change / prev * 100),
            oracle_number(open_),
            oracle_number(max(high, c, open_)),
            oracle_number(min(low, c, open_)),
            volume[i],
            turnover[i],
            cap[i],
            oracle_number(since),
            oracle_number(since / base_close * 100),
            oracle_number(high_rec[0]),
            high_rec[1],
            oracle_number(low_rec[0]),
            low_rec[1],
            spec["base_dt"],
            str(spec["base"]),
        )
        prev = c


def _snapshot_starts(rng: random.Random, begin: dt.date, last: dt.date, listed: bool) -> list[dt.date]:
    """When FSC re-opened a company's outline: yearly after each business report for listed companies (some
    years skipped), once or twice at random for the others."""
    if not listed:
        span = (last - begin).days
        first = begin + dt.timedelta(days=rng.randrange(0, max(1, span)))
        starts = [first]
        if rng.random() < 0.15 and (last - first).days > 60:
            starts.append(first + dt.timedelta(days=rng.randrange(30, (last - first).days)))
        return starts
    starts = [begin]
    for year in range(begin.year + 1, last.year + 1):
        day = dt.date(year, 3, rng.randint(15, 28))
        if day < last and (rng.random() < 0.8 or year == last.year):
            starts.append(day)
    return starts


@generator("fsc_outline_versions")
def fsc_outline_versions(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, crno, corpNm, fst_opeg_dt, last_opeg_dt, ceo, disclosed, postal, detail_adr, smenp_yn,
    bank, emp_cnt, tenure, salary, auditor, opinion. One row per open period (fstOpegDt-lastOpegDt) of a company's
    outline, in the API's order; companies that file no reports (disclosed 0) have only their registry facts."""
    rows = sorted(_outline_versions(ctx, table), key=lambda r: (r[4], r[3]), reverse=True)
    rows.sort(key=lambda r: r[1])
    yield from rows


def _outline_versions(ctx: GenContext, table: Table) -> Iterator[Row]:
    rng = ctx.rng(table.name)
    cols = [c.name for c in table.columns]
    anchors: dict[str, list[Row]] = {}
    for a in table.anchors:
        anchors.setdefault(a["corp_code"], []).append(tuple(a.get(c) for c in cols))
    opened = dt.date.fromisoformat(table.params["opened"])
    last = ctx.today - dt.timedelta(days=1)
    revenue = dict(
        ctx.rows(
            "SELECT corp_code, revenue FROM financials WHERE reprt_code = '11011' AND fs_div = 'CFS' "
            "AND bsns_year = (SELECT MAX(bsns_year) FROM financials WHERE reprt_code = '11011')"
        )
    )
    companies = ctx.rows(
        "SELECT corp_code, jurir_no, corp_name_formal, corp_cls, est_dt, listed_dt, ceo_nm, region_cd, "
        "shares * base_price FROM companies ORDER BY corp_code"
    )
    for corp_code, crno, formal, cls, est_dt, listed_dt, ceo, region_cd, cap in companies:
        if corp_code in anchors:
            yield from ((corp_code, crno, formal, *a[3:]) for a in anchors[corp_code])
            continue
        listed = cls != "E"
        disclosed = listed or rng.random() < 0.35
        begin = max(opened, _date(est_dt) + dt.timedelta(days=30))
        if listed_dt:
            begin = max(begin, _date(listed_dt) + dt.timedelta(days=7))
        begin = min(begin, last)
        starts = _snapshot_starts(rng, begin, last, listed)
        ends = [s - dt.timedelta(days=1) for s in starts[1:]] + [last]
        if not listed and rng.random() < 0.2:  # not re-opened since
            ends[-1] = starts[-1] + dt.timedelta(days=rng.randrange(0, max(1, (last - starts[-1]).days)))
        if not disclosed:
            names = [ceo] * len(starts)
            for k in range(len(starts) - 2, -1, -1):
                names[k] = person(rng) if rng.random() < 0.2 else names[k + 1]
            for s, e, name in zip(starts, ends, names, strict=True):
                yield corp_code, crno, formal, ymd(s), ymd(e), name, 0, *([None] * 9)
            continue
        low, high = POSTAL_PREFIX.get(region_cd[:2], (1, 9))
        postal = f"{rng.randint(low, high):02d}{rng.randrange(0, 1000):03d}"
        detail = rng.choice(("", "", "", f"{rng.randint(2, 15)}층", f"본관 {rng.randint(2, 9)}층", "(본사)"))
        sales = revenue.get(corp_code, 0)
        if listed:
            smenp = "N" if sales >= 150_000_000_000 or cap >= 500_000_000_000 else "Y"
            employees = max(8.0, sales / rng.uniform(4e8, 1.5e9))
            tenure = rng.uniform(4.0, 15.0)
            salary = rng.uniform(45e6, 115e6)
            auditors = BIG4 if cap >= 1_000_000_000_000 or rng.random() < 0.4 else MID_AUDITORS
        else:
            smenp = "Y" if rng.random() < 0.85 else "N"
            employees = float(rng.randint(5, 300))
            tenure = rng.uniform(2.0, 9.0)
            salary = rng.uniform(35e6, 70e6)
            auditors = MID_AUDITORS
        bank = rng.choice(BANKS)
        auditor = rng.choice(auditors)
        history: list[Row] = []
        name = ceo
        for k in range(len(starts) - 1, -1, -1):  # newest first, walking back in time
            history.append(
                (
                    corp_code,
                    crno,
                    formal,
                    ymd(starts[k]),
                    ymd(ends[k]),
                    name,
                    1,
                    postal,
                    detail,
                    smenp,
                    bank,
                    int(employees),
                    f"{tenure:.1f}",
                    int(round(salary, -5)),
                    auditor,
                    "적정의견" if rng.random() > 0.005 else "한정의견",
                )
            )
            if rng.random() < 0.2:
                name = person(rng)
            if rng.random() < 0.2:
                auditor = rng.choice(auditors)
            employees *= rng.uniform(0.93, 1.02)
            tenure = max(1.0, tenure - rng.uniform(0.0, 0.6))
            salary /= rng.uniform(1.0, 1.06)
        yield from reversed(history)


@generator("fsc_group_members")
def fsc_group_members(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: group_no, corp_code, role, parent_code, from_year, to_year. Business groups: the largest listed
    companies head big groups (role head) of listed (listed) and unlisted (member) affiliates; some other listed
    companies head small groups (small) of unlisted ones. An unlisted member is a subsidiary of the head or of a
    listed member (parent_code)."""
    rng = ctx.rng(table.name)
    first, last = table.params["years"]
    sizes: dict[str, list[int]] = table.params.get("sizes", {})
    listed = [
        r[0]
        for r in ctx.rows(
            "SELECT corp_code FROM companies WHERE corp_cls != 'E' "
            "ORDER BY shares * base_price DESC, corp_code"
        )
    ]
    unlisted = [
        r[0] for r in ctx.rows("SELECT corp_code FROM companies WHERE corp_cls = 'E' ORDER BY corp_code")
    ]
    rng.shuffle(unlisted)
    heads = (
        list(sizes) + [c for c in listed if c not in sizes][: int(table.params["big_groups"]) - len(sizes)]
    )
    pool = [c for c in listed if c not in set(heads)]
    rng.shuffle(pool)
    spare = iter(unlisted)

    def span() -> tuple[int, int]:
        start = first + (1 if rng.random() < 0.08 else 0) + (1 if rng.random() < 0.05 else 0)
        end = last - (1 if rng.random() < 0.06 else 0) - (1 if rng.random() < 0.04 else 0)
        return start, max(start, end)

    def group(no: int, head: str, n_listed: int, n_unlisted: int, role: str) -> Iterator[Row]:
        yield no, head, role, "", first, last
        peers = [pool.pop() for _ in range(min(n_listed, len(pool)))]
        for code in sorted(peers):
            yield no, code, "listed", "", first, last
        subs = sorted(next(spare) for _ in range(n_unlisted))
        for code in subs:
            parent = rng.choice(peers) if peers and rng.random() < 0.3 else head
            yield (no, code, "member", parent, *span())

    no = 0
    for head in heads:
        no += 1
        n_listed, n_unlisted = sizes.get(head, (rng.randint(0, 8), rng.randint(5, 35)))
        yield from group(no, head, n_listed, n_unlisted, "head")
    for head in sorted(pool):
        if rng.random() < float(table.params["small_group_share"]):
            no += 1
            yield from group(no, head, 0, rng.randint(1, 5), "small")


def _foreign_subsidiaries(rng: random.Random, eng: str, est: dt.date, count: int) -> list[dict[str, Any]]:
    base = (eng.split() or ["KOREA"])[0].title()
    subs = []
    for pattern, adr, biz in rng.sample(FOREIGN, count):
        founded = max(est, dt.date(1985, 1, 1)) + dt.timedelta(days=rng.randrange(365, 12000))
        founded = min(founded, dt.date(2022, 12, 31))
        subs.append(
            {
                "name": pattern.format(base),
                "est_dt": ymd(founded),
                "adr": adr,
                "biz": biz,
                "share": rng.uniform(0.003, 0.05),
                "from": 2023 if rng.random() < 0.9 else 2024,
            }
        )
    return subs


@generator("fsc_subsidiary_links")
def fsc_subsidiary_links(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: basDt, parent_code, sub_code, name, est_dt, adr, biz, tast_amt, basis, major. Consolidated
    subsidiaries per business year of a listed parent's annual report: its unlisted group members (sub_code; the
    view takes their name, founding date, address and business from `companies`) and foreign subsidiaries
    (named here; the anchors are real subsidiaries of 삼성전자)."""
    rng = ctx.rng(table.name)
    assets: dict[tuple[str, int], int] = {
        (c, int(y)): a
        for c, y, a in ctx.rows(
            "SELECT corp_code, bsns_year, total_assets FROM financials WHERE reprt_code = '11011' AND fs_div = 'CFS'"
        )
    }
    years = sorted({y for _, y in assets})
    roles = dict(ctx.rows("SELECT corp_code, role FROM fsc_group_members WHERE role != 'member'"))
    domestic: dict[str, list[tuple[str, int, int]]] = {}
    for sub, parent, start, end in ctx.rows(
        "SELECT corp_code, parent_code, from_year, to_year FROM fsc_group_members WHERE role = 'member' "
        "ORDER BY parent_code, corp_code"
    ):
        domestic.setdefault(parent, []).append((sub, start, end))
    anchored: dict[str, list[dict[str, Any]]] = {}
    for a in table.anchors:
        anchored.setdefault(a["parent_code"], []).append({**a, "from": 2023})
    for parent, eng, est_dt in ctx.rows(
        "SELECT corp_code, corp_eng_name, est_dt FROM companies WHERE corp_cls != 'E' ORDER BY corp_code"
    ):
        role = roles.get(parent, "")
        if role == "head":
            count = rng.randint(3, 10)
        elif role in ("listed", "small"):
            count = rng.randint(0, 2)
        else:
            count = rng.randint(1, 3) if rng.random() < 0.4 else 0
        foreign = anchored.get(parent) or _foreign_subsidiaries(rng, eng, _date(est_dt), count)
        shares = {sub: rng.uniform(0.003, 0.06) for sub, _, _ in domestic.get(parent, [])}
        bases = {sub: rng.choice(BASES[:4]) for sub in shares}
        for year in years:
            total = assets.get((parent, year))
            if total is None:
                continue
            rows: list[tuple[str | None, dict[str, Any] | None, float, str]] = []
            for sub, start, end in domestic.get(parent, []):
                if start <= year <= end:
                    rows.append((sub, None, shares[sub], bases[sub]))
            for f in foreign:
                if f["from"] <= year:
                    rows.append((None, f, float(f["share"]), BASES[4]))
            for sub, named, share, basis in rows:
                amount = int(round(total * share * rng.uniform(0.93, 1.07), -6))
                major = "Y" if amount >= 75_000_000_000 or amount >= total // 10 else "N"
                yield (
                    f"{year}1231",
                    parent,
                    sub,
                    named["name"] if named else None,
                    named["est_dt"] if named else None,
                    named["adr"] if named else None,
                    named["biz"] if named else None,
                    amount,
                    basis,
                    major,
                )
