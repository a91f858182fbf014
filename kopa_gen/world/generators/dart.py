"""OpenDART: what DART adds on top of the shared finance core (`companies`, `financials`).

Statements are views over `financials` (see specs/world/dart.yaml); this module fills the small tables those views
join (account templates, taxonomy, indicator definitions, per-company profiles) and the event-driven part of the
world: officers, share issues and buybacks, the largest-shareholder group, 5% and insider filings, and the list.json
index of every filing. One ownership simulation per company (`market`) feeds every table that must agree: total
shares, treasury stock, shareholders, 5%/insider reports and the DS005 decisions behind them.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kopa_gen.spec.world import Table
from kopa_gen.world.generators.companies import FAMILY
from kopa_gen.world.registry import GenContext, Row, generator

FIRST_DAY = dt.date(2023, 1, 1)
MALE = ["민준", "서준", "도윤", "예준", "시우", "하준", "주원", "지호", "지후", "준서", "영수", "정호", "성민", "재현", "동훈", "상철", "종훈", "병철", "승우", "태호"]
FEMALE = ["서연", "서윤", "지우", "서현", "하은", "민서", "하윤", "윤서", "지민", "채원", "경희", "미경", "은정", "혜진", "수진", "지영", "은주", "현정"]
CASH_SHARE = 0.24  # cash and equivalents as a share of current assets (dart_fs_cells uses the same constant)

# ------------------------------------------------------------------------------------------------ static tables
# Bases of dart_fs_cells: the amounts a statement line can be derived from (see the view for their formulas).
BASES = ["rev", "oi", "pti", "ni", "ca", "nca", "ta", "cl", "ncl", "tl", "cap", "re", "te", "zero", "nonop", "tax", "nci_ni", "nio", "eps", "cash", "nci", "owners", "oeq", "dcash", "dcap", "dre", "doeq", "downers", "dnci", "dte", "cash_l", "cap_l", "re_l", "oeq_l", "owners_l", "nci_l", "te_l"]

# fnlttSinglAcnt: (basis, sj_div, sj_nm, account_nm, ord)
MAJOR_ACCOUNTS = (
    ("ca", "BS", "재무상태표", "유동자산", 1),
    ("nca", "BS", "재무상태표", "비유동자산", 3),
    ("ta", "BS", "재무상태표", "자산총계", 5),
    ("cl", "BS", "재무상태표", "유동부채", 7),
    ("ncl", "BS", "재무상태표", "비유동부채", 9),
    ("tl", "BS", "재무상태표", "부채총계", 11),
    ("cap", "BS", "재무상태표", "자본금", 13),
    ("re", "BS", "재무상태표", "이익잉여금", 17),
    ("te", "BS", "재무상태표", "자본총계", 21),
    ("rev", "IS", "손익계산서", "매출액", 23),
    ("oi", "IS", "손익계산서", "영업이익", 25),
    ("pti", "IS", "손익계산서", "법인세차감전 순이익", 27),
    ("ni", "IS", "손익계산서", "당기순이익", 29),
)

NOT_STANDARD = "-표준계정코드 미사용-"
SJ_NAMES = {
    "BS": "재무상태표",
    "IS": "손익계산서",
    "CIS": "포괄손익계산서",
    "CF": "현금흐름표",
    "SCE": "자본변동표",
}


@dataclass(frozen=True)
class Line:
    """A statement line: amount = R(x*hi) - R(x*lo) + s*y, R rounding to 1,000 won (1 won for per-share lines).
    Sibling lines telescope over the same x (one line's lo is the next one's hi), so subtotals add up exactly.
    hi/lo None = the company's gross margin. Flags: c consolidated only, o separate only, l opening balance (the
    basis a year end earlier: dart_fs_cells' `*_l` bases), u per-share amount in won."""

    account_id: str
    name: str
    x: str
    hi: float | None
    lo: float | None
    y: str = "zero"
    s: int = 0
    flags: str = ""

    @classmethod
    def parse(cls, item: list[Any]) -> Line:
        aid, name, x, hi, lo, y, s, flags = item
        return cls(str(aid), str(name), str(x), hi, lo, str(y), int(s), str(flags or ""))


# Statement of changes in equity, per component: (basis, change basis, member, flags); every component gets
# 기초자본 + 당기순이익(손실) + 기타자본변동 = 기말자본.
SCE_MEMBERS = (
    ("cap", "dcap", "자본금 [member]", ""),
    ("re", "dre", "이익잉여금 [member]", ""),
    ("oeq", "doeq", "기타자본구성요소 [member]", ""),
    ("owners", "downers", "", "c"),
    ("nci", "dnci", "비지배지분 [member]", "c"),
    ("te", "dte", "", ""),
)
OWNERS = "자본 [member]|지배기업의 소유주에게 귀속되는 자본 [member]"
PROFIT_SHARE = {"re": ("nio", 1.0), "owners": ("nio", 1.0), "nci": ("ni", 0.03), "te": ("ni", 1.0)}


def sce_lines() -> Iterator[tuple[Line, str]]:
    """(line, account_detail) of the statement of changes in equity."""
    for event in ("begin", "profit", "other", "end"):
        for basis, change, member, flags in SCE_MEMBERS:
            if basis in ("owners", "te", "nci"):
                variants = [
                    (flags, {"owners": OWNERS, "te": "자본 [member]"}.get(basis, f"자본 [member]|{member}"))
                ]
            else:
                variants = [("c", f"{OWNERS}|{member}"), ("o", f"자본 [member]|{member}")]
            for fs, detail in variants:
                if event == "begin":
                    yield Line("ifrs-full_Equity", "기초자본", basis, 1, 0, flags=fs + "l"), detail
                elif event == "end":
                    yield Line("ifrs-full_Equity", "기말자본", basis, 1, 0, flags=fs), detail
                elif basis not in PROFIT_SHARE:
                    if event == "other":
                        yield Line(NOT_STANDARD, "기타자본변동", change, 1, 0, flags=fs), detail
                elif event == "profit":
                    x, share = PROFIT_SHARE[basis]
                    yield Line("ifrs-full_ProfitLoss", "당기순이익(손실)", x, share, 0, flags=fs), detail
                else:
                    x, share = PROFIT_SHARE[basis]
                    yield Line(NOT_STANDARD, "기타자본변동", x, 0, share, change, 1, fs), detail


@generator("dart_bases")
def dart_bases(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: basis, sort."""
    for i, name in enumerate(BASES):
        yield name, i


@generator("dart_account_map")
def dart_account_map(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: basis, sj_div, sj_nm, account_nm, ord."""
    yield from MAJOR_ACCOUNTS


@generator("dart_statement_lines")
def dart_statement_lines(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: template, sj_div, sj_nm, ord, account_id, account_nm, account_detail, x, hi, lo, y, s, unit,
    fs_only ('' both, CFS, OFS). Templates and line groups come from the table's params; every template ends with
    the statement of changes in equity."""
    groups = {name: [Line.parse(item) for item in items] for name, items in table.params["groups"].items()}
    for template, statements in table.params["templates"].items():
        for sj, names in [*statements.items(), ("SCE", [])]:
            lines = (
                [(line, "-") for name in names for line in groups[name]] if sj != "SCE" else list(sce_lines())
            )
            for ord_, (line, detail) in enumerate(lines, start=1):
                fs_only = "CFS" if "c" in line.flags else "OFS" if "o" in line.flags else ""
                x = f"{line.x}_l" if "l" in line.flags else line.x
                yield (
                    str(template),
                    sj,
                    SJ_NAMES[sj],
                    ord_,
                    line.account_id,
                    line.name,
                    detail,
                    x,
                    line.hi,
                    line.lo,
                    line.y,
                    line.s,
                    1 if "u" in line.flags else 1000,
                    fs_only,
                )


# ------------------------------------------------------------------------------------------------ XBRL taxonomy
# sj_div form -> (template, statement, fs_div) whose standard accounts it lists
TAXONOMY_FORMS = {
    **{
        f"{kind}{i}": (template, kind, fs)
        for kind in ("BS", "IS", "CIS", "CF")
        for i, (template, fs) in enumerate((("A", "CFS"), ("A", "OFS"), ("C", "CFS"), ("C", "OFS")), start=1)
    },
    **{f"DCIS{i}": ("B", "CIS", "CFS" if i % 2 else "OFS") for i in range(1, 9)},
    "SCE1": ("A", "SCE", "CFS"),
    "SCE2": ("A", "SCE", "OFS"),
}
ABSTRACTS = {
    "BS": (
        "ifrs-full_StatementOfFinancialPositionAbstract",
        "재무상태표 [abstract]",
        "Statement of financial position",
    ),
    "IS": ("ifrs-full_IncomeStatementAbstract", "손익계산서 [abstract]", "Income statement"),
    "CIS": (
        "ifrs-full_StatementOfComprehensiveIncomeAbstract",
        "포괄손익계산서 [abstract]",
        "Statement of comprehensive income",
    ),
    "CF": ("ifrs-full_StatementOfCashFlowsAbstract", "현금흐름표 [abstract]", "Statement of cash flows"),
    "SCE": (
        "ifrs-full_StatementOfChangesInEquityAbstract",
        "자본변동표 [abstract]",
        "Statement of changes in equity",
    ),
}
NEGATIVE = ("CostOfSales", "Costs", "Expense", "Paid", "Purchase", "Losses", "SellingGeneral")


def english_label(account_id: str) -> str:
    """'ifrs-full_CashAndCashEquivalents' -> 'Cash and cash equivalents'."""
    words: list[str] = []
    for ch in account_id.split("_", 1)[1]:
        if ch.isupper() and words and not words[-1].isupper():
            words.append(ch)
        elif words:
            words[-1] += ch
        else:
            words.append(ch)
    return " ".join(w.lower() if i else w for i, w in enumerate(words))


@generator("dart_xbrl_taxonomy")
def dart_xbrl_taxonomy(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: sj_div, account_id, account_nm, bsns_de, label_kor, label_eng, data_tp, ifrs_ref. Each form lists
    the standard accounts of a statement template (dart_statement_lines); params.ifrs_refs gives K-IFRS paragraphs."""
    bsns_de = str(table.params.get("bsns_de", "20240630"))
    refs: dict[str, str] = dict(table.params.get("ifrs_refs", {}))
    for form, (template, sj, fs) in TAXONOMY_FORMS.items():
        aid, kor, eng = ABSTRACTS[sj]
        yield form, aid, kor, bsns_de, kor, f"{eng} [abstract]", "", ""
        seen: set[str] = set()
        for line_id, name, unit in ctx.rows(
            "SELECT account_id, account_nm, unit FROM dart_statement_lines WHERE template = ? AND sj_div = ? "
            "AND fs_only IN ('', ?) ORDER BY ord",
            template,
            sj,
            fs,
        ):
            if line_id == NOT_STANDARD or line_id in seen:
                continue
            seen.add(line_id)
            data_tp = "X.XX" if unit == 1 else "(X)" if any(k in line_id for k in NEGATIVE) else "X"
            yield form, line_id, name, bsns_de, name, english_label(line_id), data_tp, refs.get(line_id, "")


# ------------------------------------------------------------------------------------------------ indicators
# fnlttSinglIndx: (idx_cl_code, idx_cl_nm, idx_code, idx_nm). Codes M211100/M211200/M211300/M211550/M211800/
# M212000/M221000/M221100/M221200/M221600/M231000/M231400/M231800/M233000/M241000 are seen in published client code;
# the others are unverified. The view dart_financial_indicators holds the formulas.
INDICATORS = (
    ("M210000", "수익성지표", "M211100", "세전계속사업이익률"),
    ("M210000", "수익성지표", "M211200", "순이익률"),
    ("M210000", "수익성지표", "M211300", "매출총이익률"),
    ("M210000", "수익성지표", "M211400", "매출원가율"),
    ("M210000", "수익성지표", "M211550", "ROE"),
    ("M210000", "수익성지표", "M211800", "판관비율"),
    ("M210000", "수익성지표", "M212000", "총자산영업이익률"),
    ("M220000", "안정성지표", "M221000", "자기자본비율"),
    ("M220000", "안정성지표", "M221100", "부채비율"),
    ("M220000", "안정성지표", "M221200", "유동비율"),
    ("M220000", "안정성지표", "M221300", "당좌비율"),
    ("M220000", "안정성지표", "M221400", "비유동비율"),
    ("M220000", "안정성지표", "M221500", "비유동장기적합률"),
    ("M220000", "안정성지표", "M221600", "이자보상배율"),
    ("M230000", "성장성지표", "M231000", "매출액증가율(YoY)"),
    ("M230000", "성장성지표", "M231400", "영업이익증가율(YoY)"),
    ("M230000", "성장성지표", "M231800", "순이익증가율(YoY)"),
    ("M230000", "성장성지표", "M233000", "총자산증가율"),
    ("M240000", "활동성지표", "M241000", "총자산회전율"),
    ("M240000", "활동성지표", "M241100", "자기자본회전율"),
    ("M240000", "활동성지표", "M241500", "재고자산회전율"),
    ("M240000", "활동성지표", "M241600", "매출채권회전율"),
)


@generator("dart_indicator_defs")
def dart_indicator_defs(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: idx_cl_code, idx_cl_nm, idx_code, idx_nm."""
    yield from INDICATORS


# ------------------------------------------------------------------------------------------------ helpers
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


def kdate(day: dt.date) -> str:
    """'2024년 03월 15일', the date style of DS005 decisions and tenure ends."""
    return f"{day.year}년 {day.month:02d}월 {day.day:02d}일"


def period_end(year: int, reprt_code: str) -> dt.date:
    month, day = {"11013": (3, 31), "11012": (6, 30), "11014": (9, 30), "11011": (12, 31)}[reprt_code]
    return dt.date(year, month, day)


def person(rng: random.Random, female: bool = False) -> str:
    return rng.choice(FAMILY) + rng.choice(FEMALE if female else MALE)


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
        key = f"{day:%Y%m%d}"
        if exchange:
            self.last_exchange[key] = self.last_exchange.get(key, 0) + 1
            return f"{key}80{self.last_exchange[key]:04d}"
        self.last[key] = self.last.get(key, 0) + 1
        if self.last[key] >= 800000:
            raise ValueError(f"receipt numbers of {key} ran into the exchange range")
        return f"{key}{self.last[key]:06d}"


# ------------------------------------------------------------------------------------------------ the market model
SIZE_BIG, SIZE_MID, SIZE_SMALL = "big", "mid", "small"
INSIDE_JOBS = ["경영총괄", "재무총괄(CFO)", "경영지원본부장", "연구소장", "영업본부장", "생산본부장", "전략기획실장", "사업부장", "기술총괄(CTO)", "품질경영본부장"]
OUTER_CAREERS = (
    "대학교 경영학과 교수",
    "대학교 경제학과 교수",
    "대학교 공과대학 교수",
    "지방법원 부장판사",
    "지방검찰청 검사장",
    "국세청 국장",
    "회계법인 대표",
    "법무법인 변호사",
    "산업통상자원부 실장",
    "금융감독원 부원장보",
)
UNIVERSITIES = ["서울", "연세", "고려", "성균관", "한양", "카이스트", "서강", "이화여자", "부산", "경북"]
UNREG_JOBS = ["경영지원", "재무", "인사", "영업", "마케팅", "구매", "생산", "품질", "연구개발", "해외영업", "IT전략", "법무", "홍보", "기획"]
EXTERNAL_HOLDERS = (
    "BlackRock Fund Advisors",
    "The Capital Group Companies, Inc.",
    "트러스톤자산운용",
    "브이아이피자산운용",
    "한국투자밸류자산운용",
    "미래에셋자산운용",
    "삼성자산운용",
    "신영자산운용",
    "KB자산운용",
    "라자드코리아자산운용",
    "에셋플러스자산운용",
    "머스트자산운용",
    "Norges Bank",
)
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
NPS = "국민연금공단"


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
        self.piic: list[Row] = []
        self.cvbd: list[Row] = []
        self.tsstk: list[Row] = []
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
            self.roster(corp)
            self.simulate(
                corp, reports.get(code, []), dt.date.fromisoformat(f"{listed[:4]}-{listed[4:6]}-{listed[6:]}")
            )
            corps.append(corp)
        return Market(corps, self.piic, self.cvbd, self.tsstk, self.majorstock, self.elestock, reports)

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

    # -------------------------------------------------------------------------------------------- officers
    def agm(self, c: Corp, year: int) -> dt.date:
        """The company's annual general meeting of `year` (a weekday in the second half of March)."""
        offset = int(c.code) % 11
        return weekday(dt.date(year, 3, 15 + offset))

    def new_officer(self, c: Corp, kind: str, start: dt.date) -> Officer:
        rng = c.rng
        big = c.size == SIZE_BIG
        female = rng.random() < (0.2 if kind == "outside" else 0.08)
        name = person(rng, female)
        lo, hi = {"inside": (1960, 1976), "outside": (1952, 1972), "unreg": (1964, 1982)}.get(
            kind, (1958, 1974)
        )
        birth = f"{rng.randint(lo, hi)}년 {rng.randint(1, 12):02d}월"
        other = rng.choice(self.unlisted)
        scale = {SIZE_BIG: 1.0, SIZE_MID: 0.3, SIZE_SMALL: 0.1}[c.size]
        if kind == "inside":
            ofcps = rng.choice(("사장", "부사장", "부사장", "전무", "이사"))
            job = rng.choice(INSIDE_JOBS)
            return Officer(
                name,
                "여" if female else "남",
                birth,
                ofcps,
                "사내이사",
                "상근",
                job,
                f"前 {other} {rng.choice(('상무', '전무', '본부장'))}\n現 {c.name} {job}",
                "-",
                start,
                None,
                3,
                int(rng.uniform(5e8, 2.5e9) * scale),
            )
        if kind == "outside":
            career = f"前 {rng.choice(UNIVERSITIES)}{rng.choice(OUTER_CAREERS)}"
            job = rng.choice(("사외이사", "사외이사", "감사위원", "감사위원회 위원장")) if big else "사외이사"
            return Officer(
                name,
                "여" if female else "남",
                birth,
                "사외이사",
                "사외이사",
                "비상근",
                job,
                career,
                "-",
                start,
                None,
                rng.choice((2, 3)),
                int(rng.uniform(6e7, 1.5e8) * max(scale, 0.4)),
            )
        if kind == "audit":
            return Officer(
                name,
                "여" if female else "남",
                birth,
                "감사",
                "감사",
                rng.choice(("상근", "비상근")),
                "감사",
                f"前 {rng.choice(UNIVERSITIES)}{rng.choice(OUTER_CAREERS[5:])}",
                "-",
                start,
                None,
                3,
                int(rng.uniform(4e7, 1.5e8)),
            )
        if kind == "nonexec":
            return Officer(
                name,
                "여" if female else "남",
                birth,
                "기타비상무이사",
                "기타비상무이사",
                "비상근",
                "기타비상무이사",
                f"現 {other} 대표이사",
                "-",
                start,
                None,
                3,
                0,
            )
        ofcps = rng.choice(("부사장", "전무", "전무", "상무", "상무", "상무", "상무"))
        area = rng.choice(UNREG_JOBS)
        job = f"{area}{rng.choice(('담당', '실장', '본부장', '팀장'))}"
        return Officer(
            name,
            "여" if female else "남",
            birth,
            ofcps,
            "미등기",
            "상근",
            job,
            f"{c.name} {area}팀장\n{rng.choice(UNIVERSITIES)}대학교 졸업",
            "-",
            start,
            None,
            0,
            int(rng.uniform(2.5e8, 1.2e9) * scale + 1.0e8),
        )

    def roster(self, c: Corp) -> None:
        rng = c.rng
        counts = {
            SIZE_BIG: (3, 6, 0, rng.randint(25, 45)),
            SIZE_MID: (2, 3, 1, rng.randint(6, 15)),
            SIZE_SMALL: (rng.randint(1, 2), rng.randint(1, 2), 1, rng.randint(2, 6)),
        }[c.size]
        inside, outside, audit, unreg = counts
        if c.code in self.anchors:
            unreg = int(self.anchors[c.code].get("unregistered_officers", unreg))
        ceo = Officer(
            c.ceo,
            "남",
            f"{rng.randint(1958, 1972)}년 {rng.randint(1, 12):02d}월",
            "대표이사",
            "사내이사",
            "상근",
            "대표이사",
            f"前 {c.name} {rng.choice(INSIDE_JOBS)}\n現 {c.name} 대표이사",
            "-",
            self.agm(c, rng.randint(2014, 2022)),
            None,
            3,
            0,
        )
        ceo.pay = int(
            {
                SIZE_BIG: rng.uniform(1.5e9, 6e9),
                SIZE_MID: rng.uniform(3e8, 9e8),
                SIZE_SMALL: rng.uniform(1.0e8, 3.0e8),
            }[c.size]
        )
        c.officers.append(ceo)
        plan = (
            ["inside"] * inside
            + ["outside"] * outside
            + ["audit"] * audit
            + (["nonexec"] if c.size == SIZE_BIG and rng.random() < 0.5 else [])
        )
        for kind in plan:
            c.officers.append(self.new_officer(c, kind, self.agm(c, rng.randint(2017, 2022))))
        for _ in range(unreg):
            start = dt.date(rng.randint(2008, 2022), 12, 1)
            c.officers.append(self.new_officer(c, "unreg", start))
        # turnover inside the window: registered terms end at AGMs, unregistered officers change every December
        kinds = {"사내이사": "inside", "사외이사": "outside", "감사": "audit", "기타비상무이사": "nonexec"}
        index = 0
        while index < len(c.officers):
            o = c.officers[index]
            index += 1
            if o is ceo:
                continue
            if o.registered:
                end = o.start
                while True:
                    end = add_years(end, o.term)
                    if end > self.cutoff:
                        break
                    if end < FIRST_DAY:
                        continue
                    served = (end - o.start).days / 365.25
                    if rng.random() < 0.3 or (o.rgist == "사외이사" and served >= 5.9):
                        o.end = self.agm(c, end.year)
                        c.officers.append(self.new_officer(c, kinds[o.rgist], o.end))
                        break
            else:
                for year in (2023, 2024, 2025):
                    day = dt.date(year, 12, 1)
                    if o.start < day and rng.random() < 0.12:
                        o.end = day
                        c.officers.append(self.new_officer(c, "unreg", day))
                        break
        for o in c.officers:
            holds = {"사내이사": 0.45, "미등기": 0.25, "기타비상무이사": 0.0}.get(o.rgist, 0.05)
            if rng.random() < holds:
                value = {"사내이사": (1e7, 3e9), "미등기": (5e6, 5e8)}.get(o.rgist, (1e6, 5e7))
                o.shares = max(10, min(int(c.shares_now * 3e-4), int(rng.uniform(*value) / c.price)))

    # -------------------------------------------------------------------------------------------- shareholders
    def holders(self, c: Corp, common0: int, pref0: int) -> None:
        rng = c.rng
        anchor = self.anchors.get(c.code, {})
        if "group" in anchor:
            for i, member in enumerate(anchor["group"]):
                c.group.append(
                    Holder(
                        str(member["nm"]),
                        str(member["relate"]),
                        int(member["common"]),
                        int(member.get("pref", 0)),
                        major=i == 0,
                    )
                )
            for member in anchor.get("outside", []):
                c.outside.append(Holder(str(member["nm"]), "-", int(member["common"])))
            return
        roll = rng.random()
        if c.cls == "Y" and c.size == SIZE_BIG:
            kind = "chaebol" if roll < 0.7 else "dispersed" if roll < 0.85 else "founder"
        elif c.cls == "Y":
            kind = "chaebol" if roll < 0.4 else "dispersed" if roll < 0.45 else "founder"
        else:
            kind = "chaebol" if c.cls == "K" and roll < 0.2 else "founder"

        def stake(lo: float, hi: float) -> int:
            return int(common0 * rng.uniform(lo, hi) / 100)

        short = c.name[:2]

        def relative() -> str:
            taken = {h.nm for h in c.group}
            name = person(rng, rng.random() < 0.5)
            while name in taken:
                name = person(rng, rng.random() < 0.5)
            return name

        if kind == "dispersed":
            c.group.append(Holder(NPS, "본인", stake(6, 11), major=True))
        elif kind == "founder":
            ceo_is_major = rng.random() < 0.7
            major = Holder(c.ceo if ceo_is_major else person(rng), "본인", stake(12, 35), major=True)
            if ceo_is_major:
                major.officer = c.officers[0]
                c.officers[0].relate = "본인"
            c.group.append(major)
            for _ in range(rng.randint(1, 4)):
                c.group.append(Holder(relative(), "친인척", stake(0.1, 4)))
            if rng.random() < 0.3:
                c.group.append(Holder(rng.choice(self.unlisted), "계열회사", stake(1, 10)))
            if rng.random() < 0.05:
                c.group.append(Holder(f"{short}문화재단", "비영리법인", stake(0.1, 1)))
        else:
            c.group.append(Holder(rng.choice(self.unlisted), "본인", stake(18, 40), major=True))
            for _ in range(rng.randint(0, 2)):
                name = rng.choice(self.unlisted)
                if name not in {h.nm for h in c.group}:
                    c.group.append(Holder(name, "계열회사", stake(0.5, 6)))
            for _ in range(rng.randint(1, 3)):
                c.group.append(Holder(relative(), "친인척", stake(0.01, 1.5)))
            if rng.random() < 0.4:
                c.group.append(Holder(f"{short}복지재단", "비영리법인", stake(0.05, 0.8)))
        if pref0 and rng.random() < 0.4:
            c.group[0].pref = int(pref0 * rng.uniform(0.01, 0.05))
        # registered inside directors who hold shares are related parties (발행회사 임원)
        for o in c.officers:
            if (
                o.rgist == "사내이사"
                and o.shares
                and o.relate != "본인"
                and o.start <= FIRST_DAY
                and o.nm not in {h.nm for h in c.group}
            ):
                c.group.append(Holder(o.nm, "발행회사 임원", o.shares, officer=o))
                o.relate = "계열회사 임원" if kind == "chaebol" else "-"
        names = [h.nm for h in c.group]
        if c.cls == "Y" and kind != "dispersed" and c.size != SIZE_SMALL and rng.random() < 0.65:
            c.outside.append(Holder(NPS, "-", stake(4.6, 10)))
        if rng.random() < (0.25 if c.size == SIZE_BIG else 0.18):
            name = rng.choice(EXTERNAL_HOLDERS)
            if name not in names:
                c.outside.append(Holder(name, "-", stake(4.2, 8)))

    # -------------------------------------------------------------------------------------------- decisions
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

    # -------------------------------------------------------------------------------------------- simulation
    def trades(self, c: Corp) -> list[tuple[dt.date, int, str, Any]]:
        """Trades of the group, outside holders and officers, treasury disposals and officer appointments."""
        rng = c.rng
        events: list[tuple[dt.date, int, str, Any]] = []
        last = self.cutoff - dt.timedelta(days=10)
        for year in range(FIRST_DAY.year, last.year + 1):
            first = dt.date(year, 1, 2)
            span = (min(dt.date(year, 12, 31), last) - first).days
            if span <= 0:
                continue

            def day(first: dt.date = first, span: int = span) -> dt.date:
                return weekday(first + dt.timedelta(days=rng.randrange(span)))

            for _ in range(rng.choice((0, 0, 1, 1, 2))):
                holder = rng.choice(c.group)
                sell = rng.random() < 0.55
                cause = rng.choice(("장내매도", "장내매도", "시간외매매", "증여")) if sell else "장내매수"
                events.append(
                    (
                        day(),
                        3,
                        "group",
                        (holder, -rng.uniform(0.05, 0.3) if sell else rng.uniform(0.0005, 0.004), cause),
                    )
                )
            for holder in c.outside:
                for _ in range(rng.randint(1, 3)):
                    events.append(
                        (day(), 3, "outside", (holder, rng.choice((-1, 1)) * rng.uniform(0.002, 0.012)))
                    )
            for o in c.officers:
                if (
                    o.shares
                    and o.active(first)
                    and not any(h.officer is o for h in c.group)
                    and rng.random() < 0.3
                ):
                    events.append(
                        (
                            day(),
                            3,
                            "insider",
                            (
                                o,
                                -rng.uniform(0.1, 0.5)
                                if rng.random() < 0.4
                                else float(rng.randint(200, 5000)),
                            ),
                        )
                    )
            if rng.random() < 0.15:
                events.append((weekday(dt.date(year, 3, 20)), 3, "dispose", rng.uniform(0.02, 0.1)))
        for o in c.officers:
            if o.shares and o.start > FIRST_DAY and o.start <= last:
                events.append((o.start, 3, "appoint", o))
        return events

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

    def simulate(self, c: Corp, reports: list[tuple[int, str]], listed: dt.date) -> None:
        rng = c.rng
        events = self.decisions(c)
        issued = sum(e[3][0] for e in events if e[2] == "issue")
        cancelled = [e[3] for e in events if e[2] == "cancel"]
        c.common0 = c.shares_now - issued + sum(q for q, _ in cancelled)
        c.pref0 = c.pref_now + sum(q for _, q in cancelled)
        self.holders(c, c.common0, c.pref0)
        self.history(c, listed)
        anchor = self.anchors.get(c.code, {})
        treasury_c = int(
            anchor.get("treasury0", int(c.common0 * rng.uniform(0.003, 0.06)) if rng.random() < 0.45 else 0)
        )
        treasury_p = 0
        events += self.trades(c)
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
                row = list(self.piic[data])
                row[6] = num(common)
                self.piic[data] = tuple(row)
            elif kind == "tsstk_row":
                row = list(self.tsstk[data])
                row[14:17] = [
                    num(treasury_c),
                    pct(treasury_c, common),
                    num(treasury_p) if row[16] != "-" else "-",
                ]
                self.tsstk[data] = tuple(row)
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


# ------------------------------------------------------------------------------------------------ market tables
@generator("dart_profiles")
def dart_profiles(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, template, gm, par_value, pref_shares, shares_total, authorized_common, authorized_pref,
    payout, div_freq. Computes the market model (this table's anchors pin real companies' facts)."""
    for c in market(ctx, table).corps:
        yield (
            c.code,
            c.template,
            c.gm,
            c.par,
            c.pref_now,
            c.shares_now + c.pref_now,
            c.auth_c,
            c.auth_p,
            c.payout,
            c.div_freq,
        )


@generator("dart_officers")
def dart_officers(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, nm, sexdstn, birth_ym, ofcps, rgist_exctv_at, fte_at, chrg_job, main_career,
    mxmm_shrholdr_relate, start_de, end_de, term_years."""
    for c in market(ctx).corps:
        for o in c.officers:
            yield (
                c.code,
                o.nm,
                o.sex,
                o.birth_ym,
                o.ofcps,
                o.rgist,
                o.fte,
                o.job,
                o.career,
                o.relate,
                o.start.isoformat(),
                o.end.isoformat() if o.end else "",
                o.term,
            )


@generator("dart_piic")
def dart_piic(ctx: GenContext, table: Table) -> Iterator[Row]:
    """유상증자 결정 rows (columns as the view, plus corp_code and rcept_dt)."""
    yield from market(ctx).piic


@generator("dart_cvbd")
def dart_cvbd(ctx: GenContext, table: Table) -> Iterator[Row]:
    """전환사채권 발행결정 rows."""
    yield from market(ctx).cvbd


@generator("dart_tsstk")
def dart_tsstk(ctx: GenContext, table: Table) -> Iterator[Row]:
    """자기주식 취득 결정 rows."""
    yield from market(ctx).tsstk


@generator("dart_majorstock")
def dart_majorstock(ctx: GenContext, table: Table) -> Iterator[Row]:
    """주식등의 대량보유상황보고 rows."""
    yield from market(ctx).majorstock


@generator("dart_elestock")
def dart_elestock(ctx: GenContext, table: Table) -> Iterator[Row]:
    """임원·주요주주 특정증권등 소유상황보고 rows."""
    yield from market(ctx).elestock


@generator("dart_capital_events")
def dart_capital_events(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: corp_code, event_de (YYYY-MM-DD), isu_dcrs_de, isu_dcrs_stle, isu_dcrs_stock_knd, isu_dcrs_qy,
    isu_dcrs_mstvdv_fval_amount, isu_dcrs_mstvdv_amount."""
    for c in market(ctx).corps:
        for day, stle, knd, qty, par, price in sorted(c.capital_events):
            yield c.code, day.isoformat(), f"{day:%Y.%m.%d}", stle, knd, num(qty), num(par), num(price)


def report_periods(c: Corp, reports: list[tuple[int, str]]) -> Iterator[tuple[int, str, Snapshot, Snapshot]]:
    """(year, reprt_code, state at the start of the fiscal year, state at the period end) per report."""
    for year, reprt in reports:
        yield year, reprt, c.snapshots[dt.date(year - 1, 12, 31)], c.snapshots[period_end(year, reprt)]


@generator("dart_treasury")
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


@generator("dart_stock_totals")
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


@generator("dart_holders")
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


@generator("dart_holder_changes")
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


@generator("dart_minority")
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


@generator("dart_pay_totals")
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


@generator("dart_top_pay")
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


# ------------------------------------------------------------------------------------------------ DS002 extras
SEGMENTS = ["반도체", "디스플레이", "가전", "소재", "화학", "건설", "유통", "제약", "바이오", "모바일", "자동차부품", "에너지", "플랫폼", "게임", "금속", "기계", "식품", "섬유", "물류", "IT서비스"]


def annual_reports(ctx: GenContext, fs_div: str) -> dict[tuple[str, int, str], tuple[int, int]]:
    """(corp_code, year, reprt_code) -> (revenue_cum, net_income_cum) of the given statements."""
    rows = ctx.rows(
        "SELECT corp_code, bsns_year, reprt_code, revenue_cum, net_income_cum FROM financials "
        "WHERE fs_div = ? AND reprt_code IN ('11011', '11012')",
        fs_div,
    )
    return {(code, int(year), reprt): (rev, ni) for code, year, reprt, rev, ni in rows}


@generator("dart_staff")
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


@generator("dart_dividend_rows")
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


@generator("dart_investments")
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


# ------------------------------------------------------------------------------------------------ list.json index
AUDITORS = ["삼일회계법인", "삼정회계법인", "안진회계법인", "한영회계법인", "대주회계법인", "신한회계법인", "한울회계법인", "성현회계법인", "삼덕회계법인", "다산회계법인", "정동회계법인", "우리회계법인", "이촌회계법인", "서일회계법인"]
PERIODIC = {
    "11011": ("사업보고서", "A001", 12),
    "11012": ("반기보고서", "A002", 6),
    "11013": ("분기보고서", "A003", 3),
    "11014": ("분기보고서", "A003", 9),
}
EXCHANGE_RM = {"Y": "유", "K": "코", "N": "넥"}


@generator("dart_filings")
def dart_filings(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: rcept_no, rcept_dt, corp_code, report_nm, flr_nm (empty: the company itself), rm, pblntf_ty,
    pblntf_detail_ty. Every filing of the window: periodic reports (the receipt numbers of `financials`), DS005
    decisions, 5% and insider reports, audit reports of unlisted firms and exchange disclosures of listed ones."""
    rng = ctx.rng(table.name)
    m = market(ctx)
    cutoff = ctx.today - dt.timedelta(days=1)
    first = dt.date.fromisoformat(str(table.params.get("first_day", FIRST_DAY.isoformat())))
    sources = ["financials", "dart_piic", "dart_cvbd", "dart_tsstk", "dart_majorstock", "dart_elestock"]
    book = ReceiptBook(ctx, sources)
    out: list[Row] = []
    new: list[
        tuple[dt.date, str, str, str, str, str, str, bool]
    ] = []  # day, corp, name, filer, rm, ty, detail, exch

    for code, rcept_no, rcept_dt, year, reprt in ctx.rows(
        "SELECT corp_code, rcept_no, min(rcept_dt), bsns_year, reprt_code FROM financials WHERE rcept_dt >= ? "
        "GROUP BY corp_code, rcept_no ORDER BY rcept_no",
        f"{first:%Y%m%d}",
    ):
        kind, detail, month = PERIODIC[reprt]
        name = f"{kind} ({year}.{month:02d})"
        rm = "연"
        filed = dt.date.fromisoformat(f"{rcept_dt[:4]}-{rcept_dt[4:6]}-{rcept_dt[6:]}")
        if rng.random() < 0.03:
            fixed = weekday(filed + dt.timedelta(days=rng.randint(10, 90)))
            if fixed <= cutoff:
                rm = "연정"
                new.append((fixed, code, f"[기재정정]{name}", "", "연", "A", detail, False))
        out.append((rcept_no, rcept_dt, code, name, None, rm, "A", detail))
    decisions = (
        ("dart_piic", "유상증자결정"),
        ("dart_cvbd", "전환사채권발행결정"),
        ("dart_tsstk", "자기주식취득결정"),
    )
    for source, title in decisions:
        for rcept_no, code, rcept_dt in ctx.rows(f"SELECT rcept_no, corp_code, rcept_dt FROM {source}"):
            out.append((rcept_no, rcept_dt, code, f"주요사항보고서({title})", None, "", "B", "B001"))
    for rcept_no, day, code, kind, filer in ctx.rows(
        "SELECT rcept_no, rcept_dt, corp_code, report_tp, repror FROM dart_majorstock"
    ):
        out.append(
            (
                rcept_no,
                day.replace("-", ""),
                code,
                f"주식등의대량보유상황보고서({kind})",
                filer,
                "",
                "D",
                "D001",
            )
        )
    for rcept_no, day, code, filer in ctx.rows(
        "SELECT rcept_no, rcept_dt, corp_code, repror FROM dart_elestock"
    ):
        out.append(
            (
                rcept_no,
                day.replace("-", ""),
                code,
                "임원ㆍ주요주주특정증권등소유상황보고서",
                filer,
                "",
                "D",
                "D002",
            )
        )

    # audit reports of unlisted firms (외부감사 대상), filed about three months after the fiscal year end
    share = float(table.params.get("audited_share", 0.18))
    for code, acc_mt in ctx.rows(
        "SELECT corp_code, acc_mt FROM companies WHERE corp_cls = 'E' ORDER BY corp_code"
    ):
        if rng.random() >= share:
            continue
        auditor = rng.choice(AUDITORS)
        consolidated = rng.random() < 0.1
        month = int(acc_mt or "12")
        for year in range(first.year - 1, cutoff.year + 1):
            end = dt.date(year, month, 28)
            filed = weekday(end + dt.timedelta(days=rng.randint(80, 105)))
            if first <= filed <= cutoff:
                new.append((filed, code, f"감사보고서 ({year}.{month:02d})", auditor, "", "F", "F001", False))
                if consolidated:
                    new.append(
                        (filed, code, f"연결감사보고서 ({year}.{month:02d})", auditor, "", "F", "F002", False)
                    )

    # exchange disclosures (거래소 공시) of listed companies
    annual = {
        (code, int(year)): (rev, ni)
        for code, year, rev, ni in ctx.rows(
            "SELECT corp_code, bsns_year, revenue_cum, net_income_cum FROM financials "
            "WHERE fs_div = 'CFS' AND reprt_code = '11011'"
        )
    }
    classes = {c.code: c.cls for c in m.corps}
    changes = ctx.rows("SELECT DISTINCT corp_code, change_on FROM dart_holder_changes ORDER BY 1, 2")
    for code, change_on in changes:
        day = weekday(
            dt.date.fromisoformat(change_on.replace(".", "-")) + dt.timedelta(days=rng.randint(1, 3))
        )
        if day <= cutoff:
            new.append(
                (day, code, "최대주주등소유주식변동신고서", "", EXCHANGE_RM[classes[code]], "I", "I001", True)
            )
    for c in m.corps:
        rm = EXCHANGE_RM[c.cls]

        def add(day: dt.date, name: str, detail: str = "I001", c: Corp = c, rm: str = rm) -> None:
            day = weekday(day)
            if first <= day <= cutoff:
                new.append((day, c.code, name, "", rm, "I", detail, True))

        offset = int(c.code) % 11
        for year in range(first.year, cutoff.year + 1):
            add(dt.date(year, 2, 20 + offset % 8), "주주총회소집결의")
            add(dt.date(year, 3, 4 + offset % 6), "감사보고서제출")
            add(dt.date(year, 3, 15 + offset), "정기주주총회결과")
            if c.payout > 0 and (c.code, year - 1) in annual and annual[(c.code, year - 1)][1] > 0:
                add(dt.date(year, 2, 5 + offset), "현금ㆍ현물배당결정")
            if c.div_freq > 1:
                for month in (4, 7, 10) if c.div_freq == 4 else (7,):
                    add(dt.date(year, month, 25 + offset % 4), "현금ㆍ현물배당결정")
            if c.size != SIZE_SMALL:
                for month in (1, 4, 7, 10):
                    add(
                        dt.date(year, month, 7 if c.size == SIZE_BIG else 25 + offset % 4),
                        "연결재무제표기준영업(잠정)실적(공정공시)",
                        "I002",
                    )
            prev, this = annual.get((c.code, year - 2)), annual.get((c.code, year - 1))
            if prev and this and prev[0]:
                limit = 0.15 if c.cls == "Y" and c.size == SIZE_BIG else 0.30
                if abs(this[0] - prev[0]) / abs(prev[0]) >= limit or (
                    prev[1] and abs(this[1] - prev[1]) / abs(prev[1]) >= limit
                ):
                    add(dt.date(year, 2, 10 + offset), "매출액또는손익구조30%(대규모법인은15%)이상변경")
            for _ in range(rng.choice((0, 0, 1, 2, 3))):
                add(dt.date(year, 1, 1) + dt.timedelta(days=rng.randrange(365)), "기업설명회(IR)개최", "I002")
            if c.cls != "Y" or c.size == SIZE_SMALL:
                for _ in range(rng.choice((0, 0, 0, 1, 2))):
                    add(dt.date(year, 1, 1) + dt.timedelta(days=rng.randrange(365)), "단일판매ㆍ공급계약체결")

    new.sort()
    for day, code, name, filer, rm, ty, detail, exchange in new:
        out.append((book.next(day, exchange), f"{day:%Y%m%d}", code, name, filer or None, rm, ty, detail))
    yield from out
