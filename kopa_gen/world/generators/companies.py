"""Companies: the entity every finance platform shares (DART corp codes, FSC outlines, stock listings).

One row per company; DART, FSC and the stock tables are views or children of it, so a company means the same
thing everywhere: corp_code (DART) = fssCorpUnqNo (FSC), stock_code = srtnCd, jurir_no = crno, and the address
lies in a real current legal district (region_cd).

Code, not a declaration: a company's Korean and English names are composed together from syllables, anchors take the
place of drawn companies, stock codes stay unique across both, and the registration numbers carry check digits over
drawn bodies.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.codes import check_digit
from kopa_gen.world.names import person
from kopa_gen.world.registry import GenContext, Row, generator

SYLLABLES = {
    "한": "HAN",
    "대": "DAE",
    "동": "DONG",
    "서": "SEO",
    "남": "NAM",
    "북": "BUK",
    "신": "SHIN",
    "성": "SUNG",
    "원": "WON",
    "진": "JIN",
    "태": "TAE",
    "영": "YOUNG",
    "광": "KWANG",
    "명": "MYUNG",
    "세": "SE",
    "일": "IL",
    "우": "WOO",
    "현": "HYUN",
    "정": "JUNG",
    "하": "HA",
    "미": "MI",
    "선": "SUN",
    "경": "KYUNG",
    "금": "KUM",
    "보": "BO",
    "화": "HWA",
    "중": "JOONG",
    "제": "JE",
    "창": "CHANG",
    "상": "SANG",
    "승": "SEUNG",
    "안": "AN",
    "유": "YU",
    "인": "IN",
    "천": "CHUN",
    "해": "HAE",
    "도": "DO",
    "두": "DOO",
    "림": "RIM",
    "산": "SAN",
    "수": "SOO",
    "용": "YONG",
    "재": "JAE",
    "주": "JOO",
    "지": "JI",
    "참": "CHAM",
    "청": "CHUNG",
    "케": "KE",
    "코": "KO",
    "테": "TE",
    "파": "PA",
    "프": "PEU",
    "에": "E",
    "아": "A",
    "오": "O",
    "이": "I",
    "엘": "EL",
    "엔": "EN",
    "비": "BI",
    "씨": "SSI",
    "디": "DI",
    "텍": "TEK",
    "솔": "SOL",
    "넷": "NET",
    "온": "ON",
}
SYLLABLE_LIST = list(SYLLABLES)  # rng.choice needs a sequence; made once, not per name
SUFFIXES = (
    "전자 산업 건설 제약 바이오 테크 화학 물산 식품 에너지 소재 시스템 정보통신 모터스 중공업 로직스 글로벌 홀딩스 엔터테인먼트 반도체 금속 섬유 유통 게임즈 헬스케어 파트너스 "
    "인베스트먼트 개발 상사 디자인"
).split()
ROMAN = {
    "전자": "ELECTRONICS",
    "산업": "INDUSTRIAL",
    "건설": "CONSTRUCTION",
    "제약": "PHARM",
    "바이오": "BIO",
    "테크": "TECH",
    "화학": "CHEMICAL",
    "물산": "C&T",
    "식품": "FOODS",
    "에너지": "ENERGY",
    "소재": "MATERIALS",
    "시스템": "SYSTEMS",
    "정보통신": "INFORMATION & COMMUNICATION",
    "모터스": "MOTORS",
    "중공업": "HEAVY INDUSTRIES",
    "로직스": "LOGIS",
    "글로벌": "GLOBAL",
    "홀딩스": "HOLDINGS",
    "엔터테인먼트": "ENTERTAINMENT",
    "반도체": "SEMICONDUCTOR",
    "금속": "METAL",
    "섬유": "TEXTILE",
    "유통": "DISTRIBUTION",
    "게임즈": "GAMES",
    "헬스케어": "HEALTHCARE",
    "파트너스": "PARTNERS",
    "인베스트먼트": "INVESTMENT",
    "개발": "DEVELOPMENT",
    "상사": "TRADING",
    "디자인": "DESIGN",
}
INDUSTRIES = (
    "264 261 262 212 201 204 241 303 411 421 582 620 631 649 701 721 107 108 221 222 251 259 271 281 291 "
    "292 464 467 471 521 591 702 711 732 764"
).split()
ROADS = "중앙로 대학로 산업로 테헤란로 세종대로 충장로 번영로 시청로 공단로 과학로 역삼로 판교역로 디지털로 엑스포로 해안로 문화로 신평로 평화로 동서대로 삼성로".split()

AREA_CODES = {
    "11": "02",
    "26": "051",
    "27": "053",
    "28": "032",
    "29": "062",
    "30": "042",
    "31": "052",
    "36": "044",
    "41": "031",
    "43": "043",
    "44": "041",
    "46": "061",
    "47": "054",
    "48": "055",
    "50": "064",
    "51": "033",
    "52": "063",
}

# Listed companies by market: (corp_cls, count, share of all listed)
MARKETS = (("Y", 950), ("K", 1820), ("N", 120))


def company_name(rng: random.Random) -> tuple[str, str]:
    n = rng.choice((2, 2, 2, 3))
    parts = [rng.choice(SYLLABLE_LIST) for _ in range(n)]
    suffix = rng.choice(SUFFIXES) if rng.random() < 0.8 else ""
    romanized = "".join(SYLLABLES[p] for p in parts)
    return "".join(parts) + suffix, f"{romanized} {ROMAN.get(suffix, 'CO')}".strip()


def district_pool(ctx: GenContext) -> list[tuple[str, str]]:
    """Current 읍면동-level legal districts (code, full name), weighted towards the capital region."""
    rows = ctx.rows(
        "SELECT region_cd, name FROM regions WHERE abolished = 0 AND umd_cd != '000' AND ri_cd = '00' "
        "ORDER BY region_cd"
    )
    pool: list[tuple[str, str]] = []
    for code, name in rows:
        weight = (
            6 if code[:2] in ("11", "41") else 2 if code[:2] in ("26", "27", "28", "30", "31", "36") else 1
        )
        pool.extend([(code, name)] * weight)
    return pool


@generator("companies")
def companies(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns (in order): corp_code, corp_name, corp_name_formal, corp_eng_name, stock_code, corp_cls, jurir_no,
    bizr_no, ceo_nm, region_cd, adres, hm_url, phn_no, fax_no, induty_code, est_dt, acc_mt, modify_date,
    listed_dt, shares, base_price."""
    rng = ctx.rng(table.name)
    total = int(table.params.get("count", 110_000))
    anchors = {a["corp_code"]: a for a in table.anchors}
    pool = district_pool(ctx)
    by_region = dict(pool)

    codes: set[str] = set(anchors)
    stock_codes: set[str] = {a["stock_code"] for a in table.anchors if a.get("stock_code")}
    jurirs: set[str] = {a["jurir_no"] for a in table.anchors}
    bizrs: set[str] = {a["bizr_no"] for a in table.anchors if a.get("bizr_no")}
    listed_names: set[str] = {a["corp_name"] for a in table.anchors}
    listed_plan: list[str] = []
    for cls, count in MARKETS:
        already = sum(1 for a in table.anchors if a.get("corp_cls") == cls)
        listed_plan.extend([cls] * max(0, count - already))
    rng.shuffle(listed_plan)

    rows: list[tuple[Any, ...]] = []
    for anchor in table.anchors:
        rows.append(tuple(anchor.get(c.name, "") for c in table.columns))

    n_unlisted = total - len(rows) - len(listed_plan)
    plan = listed_plan + ["E"] * n_unlisted
    rng.shuffle(plan)
    today = ctx.today
    for cls in plan:
        while True:
            code = f"{rng.randrange(100000, 1999999):08d}"
            if code not in codes:
                codes.add(code)
                break
        name, eng = company_name(rng)
        while cls != "E" and name in listed_names:  # KRX item names are unique among listed companies
            name, eng = company_name(rng)
        if cls != "E":
            listed_names.add(name)
        region_cd, _ = rng.choice(pool)
        est = dt.date(1950, 1, 1) + dt.timedelta(days=rng.randrange(0, 27000))
        if est >= today:
            est = today - dt.timedelta(days=400)
        stock_code = ""
        listed_dt = ""
        shares = 0
        price = 0
        if cls != "E":
            while True:
                stock_code = (
                    f"{rng.randrange(1, 4000) * 10 + (0 if cls == 'Y' else rng.choice((0, 0, 5))):06d}"
                )
                if stock_code not in stock_codes:
                    stock_codes.add(stock_code)
                    break
            first = max(est + dt.timedelta(days=365 * 3), dt.date(1975, 6, 11))
            listed = first + dt.timedelta(days=rng.randrange(0, max(1, (today - first).days - 30)))
            listed_dt = listed.strftime("%Y%m%d")
            shares = (
                rng.choice((5, 8, 10, 15, 20, 30, 50, 80, 120, 200)) * 1_000_000
                + rng.randrange(0, 999) * 1000
            )
            price = int(round(rng.lognormvariate(9.3, 1.0), -1)) or 1000
        while True:
            office = rng.choice(
                ("1101", "1201", "1301", "1311", "1344", "1358", "1801", "2001", "1601", "1746")
            )
            jurir_body = f"{office}11{rng.randrange(0, 999999):06d}"
            jurir_no = jurir_body + check_digit(jurir_body, "mod10")
            if jurir_no not in jurirs:
                jurirs.add(jurir_no)
                break
        biz_body = f"{rng.randrange(101, 899)}{rng.randrange(81, 88)}{rng.randrange(0, 9999):04d}"
        bizr_no = biz_body + check_digit(biz_body, "brn")
        while bizr_no in bizrs:  # one number, one company; the next serial, so no later draw moves
            biz_body = f"{biz_body[:5]}{(int(biz_body[5:]) + 1) % 10000:04d}"
            bizr_no = biz_body + check_digit(biz_body, "brn")
        bizrs.add(bizr_no)
        area = AREA_CODES.get(region_cd[:2], "02")
        phone = f"{area}-{rng.randrange(200, 9999)}-{rng.randrange(0, 9999):04d}"
        fax = f"{area}-{rng.randrange(200, 9999)}-{rng.randrange(0, 9999):04d}" if rng.random() < 0.6 else ""
        address = f"{by_region[region_cd]} {rng.choice(ROADS)} {rng.randrange(1, 400)}"
        modify = today - dt.timedelta(days=rng.randrange(1, 3000))
        formal = f"{name}(주)" if cls != "E" or rng.random() < 0.7 else f"(주){name}"
        rows.append(
            (
                code,
                name,
                formal,
                eng if cls != "E" or rng.random() < 0.3 else "",
                stock_code,
                cls,
                jurir_no,
                bizr_no,
                person(rng),
                region_cd,
                address,
                f"www.{eng.split()[0].lower()}.co.kr" if cls != "E" else "",
                phone,
                fax,
                rng.choice(INDUSTRIES),
                est.strftime("%Y%m%d"),
                # Listed companies close their books in December (the statements assume it); others vary.
                "12" if cls != "E" else rng.choice(("12", "12", "12", "12", "03", "06", "09")),
                modify.strftime("%Y%m%d"),
                listed_dt,
                shares,
                price,
            )
        )
    rows.sort(key=lambda r: r[0])
    yield from rows
