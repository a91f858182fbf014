"""Officers of a listed company (임원) in the DART ownership simulation: the CEO, registered directors, auditors and
unregistered officers in office before the window, their turnover (terms end at annual general meetings,
unregistered officers change in December) and the shares they hold (names come from kopa_gen/world/names.py).

Code, not a declaration: part of the DART ownership simulation, one stateful run per listed company replayed day by
day, so that every table it feeds agrees with the others; independent column draws cannot keep that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from kopa_gen.world.generators.dart_corps import SIZE_BIG, SIZE_MID, SIZE_SMALL, Corp, Officer
from kopa_gen.world.generators.dart_disclosure import FIRST_DAY, add_years, weekday
from kopa_gen.world.names import FEMALE, MALE, person

INSIDE_JOBS = ["경영총괄", "재무총괄(CFO)", "경영지원본부장", "연구소장", "영업본부장", "생산본부장", "전략기획실장", "사업부장", "기술총괄(CTO)", "품질경영본부장"]  # fmt: skip
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
UNREG_JOBS = ["경영지원", "재무", "인사", "영업", "마케팅", "구매", "생산", "품질", "연구개발", "해외영업", "IT전략", "법무", "홍보", "기획"]  # fmt: skip


def agm(c: Corp, year: int) -> dt.date:
    """The company's annual general meeting of `year` (a weekday in the second half of March)."""
    offset = int(c.code) % 11
    return weekday(dt.date(year, 3, 15 + offset))


def new_officer(c: Corp, kind: str, start: dt.date, unlisted: Sequence[str]) -> Officer:
    """A new officer of `kind` (inside, outside, audit, nonexec or unreg) taking office on `start`."""
    rng = c.rng
    big = c.size == SIZE_BIG
    female = rng.random() < (0.2 if kind == "outside" else 0.08)
    name = person(rng, FEMALE if female else MALE)
    lo, hi = {"inside": (1960, 1976), "outside": (1952, 1972), "unreg": (1964, 1982)}.get(kind, (1958, 1974))
    birth = f"{rng.randint(lo, hi)}년 {rng.randint(1, 12):02d}월"
    other = rng.choice(unlisted)
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


def roster(
    c: Corp, anchors: Mapping[str, Mapping[str, Any]], unlisted: Sequence[str], cutoff: dt.date
) -> None:
    """The company's officers: the CEO, the board and unregistered officers in office before the window, their
    successors when terms end (up to `cutoff`), and the shares each holds."""
    rng = c.rng
    counts = {
        SIZE_BIG: (3, 6, 0, rng.randint(25, 45)),
        SIZE_MID: (2, 3, 1, rng.randint(6, 15)),
        SIZE_SMALL: (rng.randint(1, 2), rng.randint(1, 2), 1, rng.randint(2, 6)),
    }[c.size]
    inside, outside, audit, unreg = counts
    if c.code in anchors:
        unreg = int(anchors[c.code].get("unregistered_officers", unreg))
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
        agm(c, rng.randint(2014, 2022)),
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
        c.officers.append(new_officer(c, kind, agm(c, rng.randint(2017, 2022)), unlisted))
    for _ in range(unreg):
        start = dt.date(rng.randint(2008, 2022), 12, 1)
        c.officers.append(new_officer(c, "unreg", start, unlisted))
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
                if end > cutoff:
                    break
                if end < FIRST_DAY:
                    continue
                served = (end - o.start).days / 365.25
                if rng.random() < 0.3 or (o.rgist == "사외이사" and served >= 5.9):
                    o.end = agm(c, end.year)
                    c.officers.append(new_officer(c, kinds[o.rgist], o.end, unlisted))
                    break
        else:
            for year in (2023, 2024, 2025):
                day = dt.date(year, 12, 1)
                if o.start < day and rng.random() < 0.12:
                    o.end = day
                    c.officers.append(new_officer(c, "unreg", day, unlisted))
                    break
    for o in c.officers:
        holds = {"사내이사": 0.45, "미등기": 0.25, "기타비상무이사": 0.0}.get(o.rgist, 0.05)
        if rng.random() < holds:
            value = {"사내이사": (1e7, 3e9), "미등기": (5e6, 5e8)}.get(o.rgist, (1e6, 5e7))
            o.shares = max(10, min(int(c.shares_now * 3e-4), int(rng.uniform(*value) / c.price)))
