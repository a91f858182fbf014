"""The list.json index of DART filings (공시검색): every filing of the window, from periodic reports, DS005
decisions and 5%/insider reports to audit reports of unlisted firms and exchange disclosures (거래소 공시) of
listed ones.

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from kopa_gen.language.world import Table
from kopa_gen.world.generators.dart_corps import SIZE_BIG, SIZE_SMALL, Corp
from kopa_gen.world.generators.dart_disclosure import FIRST_DAY, ReceiptBook, day_key, weekday
from kopa_gen.world.generators.dart_market import market
from kopa_gen.world.registry import GenContext, Row, generator

AUDITORS = ["삼일회계법인", "삼정회계법인", "안진회계법인", "한영회계법인", "대주회계법인", "신한회계법인", "한울회계법인", "성현회계법인", "삼덕회계법인", "다산회계법인", "정동회계법인", "우리회계법인", "이촌회계법인", "서일회계법인"]  # fmt: skip
PERIODIC = {
    "11011": ("사업보고서", "A001", 12),
    "11012": ("반기보고서", "A002", 6),
    "11013": ("분기보고서", "A003", 3),
    "11014": ("분기보고서", "A003", 9),
}
EXCHANGE_RM = {"Y": "유", "K": "코", "N": "넥"}


@generator("dart_filings", shares="dart_market")
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
        out.append((book.next(day, exchange), day_key(day), code, name, filer or None, rm, ty, detail))
    yield from out
