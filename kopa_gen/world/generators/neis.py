"""Education (NEIS): schools placed in real 법정동, their academic-year calendar, classes, 학과, meal menus,
subject pools and the 학원·교습소 register.

Every table draws from its own `ctx.rng(...)` streams (per office, per calendar, per pool), so changing one
table never shifts another's values. Content (offices, dishes, subjects, holidays) lives in
specs/world/neis.yaml; the huge per-day sets (meals, timetables) are views joining these compact tables.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import operator
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, Generic, TypeVar

from kopa_gen.spec.world import Table
from kopa_gen.world.registry import GenContext, Row, generator

LEVELS = ("els", "mis", "his", "sps")
LEVEL_OF_KIND = {"초등학교": "els", "중학교": "mis", "고등학교": "his", "특수학교": "sps"}
COURSE_OF_LEVEL = {"els": "초등학교", "mis": "중학교", "his": "고등학교"}
SPS_COURSES = {"초등학교": ("초", 6), "중학교": ("중", 3), "고등학교": ("고", 3), "전공과": ("전공", 2)}
ELS_SCHEDULES = {1: "els12", 2: "els12", 3: "els34", 4: "els34", 5: "els56", 6: "els56"}  # edu_periods
SPS_LAYOUTS = (("초등학교", "중학교", "고등학교", "전공과"),) * 2 + (
    ("중학교", "고등학교", "전공과"), ("초등학교", "중학교", "고등학교"), ("초등학교", "중학교")
)  # fmt: skip
DAY = "주간"
ENTRANCE, AUTUMN_START = "입학식", "2학기 개학식"
OFF_DAYS = ("휴업일", "공휴일")


def ymd(day: dt.date) -> str:
    return day.isoformat().replace("-", "")


def below(rng: random.Random, n: int) -> int:
    """A uniform integer in [0, n): rng.randrange without its overhead (called millions of times)."""
    return int(rng.random() * n)


def iso(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def last_day(ctx: GenContext) -> dt.date:
    """Data stops the day before the world's today."""
    return ctx.today - dt.timedelta(days=1)


def days_between(first: dt.date, last: dt.date) -> Iterator[dt.date]:
    for n in range((last - first).days + 1):
        yield first + dt.timedelta(days=n)


def some_day(rng: random.Random, first: dt.date, last: dt.date) -> dt.date:
    return first + dt.timedelta(days=below(rng, max(1, (last - first).days + 1)))


def level_of(kind: str) -> str:
    """초등학교 -> els; 각종학교(고) -> his."""
    if kind in LEVEL_OF_KIND:
        return LEVEL_OF_KIND[kind]
    return {"초": "els", "중": "mis", "고": "his"}[kind[-2]]


# ---------------------------------------------------------------------------------------------- names


# Revised Romanization of the 19 initials, 21 vowels and 28 finals ("-" = silent)
_INITIAL = "g kk n d tt r m b pp s ss - j jj ch k t p h".split()  # noqa: SIM905
_VOWEL = "a ae ya yae eo e yeo ye o wa wae oe yo u wo we wi yu eu ui i".split()  # noqa: SIM905
_FINAL = "- k k k n n n t l k m l l l p l m p p t t ng t t k t p t".split()  # noqa: SIM905
# the sound a final consonant carries into a following ㅇ (liaison)
_CARRY = "- g kk ks n nj n d r lg lm lb ls lt lp r m b ps s ss ng j ch k t p -".split()  # noqa: SIM905


def romanize(text: str) -> str:
    """Revised Romanization of Hangul with the common sound changes (liaison, nasalisation, ㄹ assimilation)."""
    parts: list[tuple[int, int, int]] = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            parts.append((code // 588, (code % 588) // 28, code % 28))
    out: list[str] = []
    for i, (ini, med, fin) in enumerate(parts):
        head = _INITIAL[ini]
        if i:
            prev_fin = parts[i - 1][2]
            tail = out.pop()
            if ini == 11 and prev_fin not in (0, 21):
                tail, head = tail[: -len(_FINAL[prev_fin])], _CARRY[prev_fin]
            elif ini == 5 and prev_fin in (4, 8):
                tail, head = tail[: -len(_FINAL[prev_fin])] + "l", "l"
            elif ini == 2 and prev_fin == 8:
                head = "l"
            elif ini == 5 and prev_fin in (16, 21, 1, 17):
                head = "n"
            if ini in (2, 5, 6) and prev_fin in (1, 2, 24):
                tail = tail[: -len(_FINAL[prev_fin])] + "ng"
            elif ini in (2, 5, 6) and prev_fin in (17, 26):
                tail = tail[: -len(_FINAL[prev_fin])] + "m"
            elif ini in (2, 6) and prev_fin in (7, 19, 20, 22, 23, 25):
                tail = tail[: -len(_FINAL[prev_fin])] + "n"
            out.append(tail)
        out.append(head + _VOWEL[med] + _FINAL[fin])
    word = "".join(out).replace("-", "")
    return word[:1].upper() + word[1:]


@cache
def stem(name: str) -> str:
    """The naming stem of a place: 종로1가 -> 종로, 일도이동 -> 일도, 양근리 -> 양근, 수원시 -> 수원, 본동 -> 본동."""
    s = re.sub(r"\d+[가동]$", "", name)
    if len(s) >= 4 and re.search(r"[일이삼사오육칠팔구]동$", s):
        return s[:-2]
    if len(s) > 2 and s[-1] in "동리읍면구군시":
        return s[:-1]
    return s


# ---------------------------------------------------------------------------------------------- places


@dataclass(frozen=True)
class Place:
    """A current leaf 법정동 (동, or 리 of a 읍/면) where a school or academy stands."""

    region_cd: str
    name: str
    sido: str
    sgg: str  # 시군구 part of the full name: "강남구", "수원시 장안구", "" in 세종
    umd: str
    ri: str

    @cached_property
    def top(self) -> str:
        """The 시/군/구 an academy register names (행정구역명): 강남구, 수원시; the 시도 itself in 세종."""
        return self.sgg.split(" ")[0] if self.sgg else self.sido

    @cached_property
    def setting(self) -> str:
        return "eup" if self.umd.endswith("읍") else "myeon" if self.umd.endswith("면") else "dong"

    @property
    def local(self) -> str:
        """The 동 or 리 a detail address names in parentheses."""
        return self.ri or self.umd

    @cached_property
    def district(self) -> str:
        return f"{self.sido} {self.sgg}".strip()

    def road_address(self, road: str, number: int) -> str:
        """<시도> <시군구> [<읍면>] <road> <number>."""
        town = self.umd if self.setting != "dong" else ""
        return " ".join(p for p in (self.sido, self.sgg, town, road, str(number)) if p)


def load_places(ctx: GenContext, sido_cd: str) -> list[Place]:
    """Current leaf 법정동 of a 시도, in code order."""
    rows = ctx.rows(
        "SELECT region_cd, name, umd_cd, ri_cd FROM regions WHERE abolished = 0 AND sido_cd = ? ORDER BY region_cd",
        sido_cd,
    )
    names = {r[0]: r[1] for r in rows}
    with_ri = {r[0][:8] for r in rows if r[3] != "00"}
    sido = names[sido_cd + "00000000"]
    places: list[Place] = []
    for code, name, umd_cd, ri_cd in rows:
        if umd_cd == "000" or (ri_cd == "00" and code[:8] in with_ri):
            continue
        sgg_name = names.get(code[:5] + "00000", sido)
        if not name.startswith(sgg_name + " "):
            continue
        rest = name[len(sgg_name) + 1 :].split(" ")
        sgg = sgg_name[len(sido) :].strip()
        places.append(Place(code, name, sido, sgg, rest[0], rest[1] if len(rest) > 1 else ""))
    return places


def road_name(place: Place, rng: random.Random, seoul: bool) -> str:
    base = stem(place.local) if place.setting == "dong" or rng.random() < 0.5 else stem(place.umd)
    road = base if base.endswith("로") else base + "로"
    roll = rng.random()
    if roll < 0.45:
        return road
    if roll < 0.55:
        return road.removesuffix("로") + "대로"
    return f"{road}{1 + below(rng, 60)}{'길' if seoul else '번길'}"


def building_number(rng: random.Random) -> int:
    return min(int(rng.expovariate(1 / 60)) + 1, 999)


T = TypeVar("T")


class Picker(Generic[T]):
    """Weighted choice over a fixed list, by bisect on cumulative weights (fast for many draws)."""

    def __init__(self, items: Sequence[T], weights: Sequence[float]) -> None:
        self.items = list(items)
        self.cum = list(itertools.accumulate(weights))

    def pick(self, rng: random.Random) -> T:
        return self.items[bisect.bisect_right(self.cum, rng.random() * self.cum[-1])]


# ---------------------------------------------------------------------------------------------- content tables


@generator("neis_rows")
def literal_rows(ctx: GenContext, table: Table) -> Iterator[Row]:
    """The rows written out in params.rows."""
    yield from (tuple(r) for r in table.params["rows"])


@generator("neis_periods")
def periods(ctx: GenContext, table: Table) -> Iterator[Row]:
    for sched, per_day in table.params["schedules"].items():
        for weekday, count in enumerate(per_day):
            for n in range(1, count + 1):
                yield (sched, weekday, str(n), n)


def spread(items: Sequence[str], rng: random.Random) -> list[str]:
    """A deterministic shuffle in which no subject follows itself (cyclically), so a day rarely doubles one."""
    order = list(items)
    for _ in range(200):
        rng.shuffle(order)
        if all(order[i] != order[i - 1] for i in range(len(order))):
            break
    return order


@generator("neis_subjects")
def subjects(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Per pool: semester 1 block, then semester 2 block (2022-curriculum "...1" subjects become "...2")."""
    rooms: Mapping[str, str] = table.params["rooms"]
    for pool, items in table.params["pools"].items():
        order = spread(items, ctx.rng(f"neis:subjects:{pool}"))
        for sem in (1, 2):
            for idx, name in enumerate(order):
                subject = name[:-1] + "2" if sem == 2 and name.endswith("1") else name
                yield (pool, sem, idx, subject, rooms.get(name, ""))


@dataclass(frozen=True)
class Dish:
    name: str
    allergens: str
    kcal: float

    def label(self) -> str:
        return f"{self.name} ({self.allergens})" if self.allergens else self.name


NUTRIENTS = (
    "탄수화물(g)",
    "단백질(g)",
    "지방(g)",
    "비타민A(R.E)",
    "티아민(mg)",
    "리보플라빈(mg)",
    "비타민C(mg)",
    "칼슘(mg)",
)


def menu(kind: int, dishes: Mapping[str, list[Dish]], rng: random.Random) -> list[Dish]:
    """One meal: 조식 (1) is lighter; 중식/석식 (2/3) are rice, soup, main, sides, kimchi and sometimes dessert."""
    if kind == 1:
        if rng.random() < 0.3:
            return [rng.choice(dishes["bread"]), rng.choice(dishes["side"]), rng.choice(dishes["dessert"])]
        return [
            rng.choice(dishes["rice"]),
            rng.choice(dishes["soup"]),
            *rng.sample(dishes["side"], 1),
            rng.choice(dishes["kimchi"]),
        ]
    if rng.random() < 0.12:
        meal = [rng.choice(dishes["one_dish"]), rng.choice(dishes["soup"]), rng.choice(dishes["side"])]
    else:
        meal = [
            rng.choice(dishes["rice"]),
            rng.choice(dishes["soup"]),
            rng.choice(dishes["main"]),
            *rng.sample(dishes["side"], 1 + (rng.random() < 0.5)),
        ]
    meal.append(rng.choice(dishes["kimchi"]))
    if rng.random() < (0.55 if kind == 2 else 0.25):
        meal.append(rng.choice(dishes["dessert"]))
    return meal


def nutrition(kcal: float, rng: random.Random) -> str:
    values = [
        kcal * 0.58 / 4 * rng.uniform(0.9, 1.1),
        kcal * 0.16 / 4 * rng.uniform(0.85, 1.15),
        kcal * 0.26 / 9 * rng.uniform(0.8, 1.2),
        rng.uniform(120, 520),
        rng.uniform(0.2, 0.9),
        rng.uniform(0.3, 0.9),
        rng.uniform(4, 45),
        rng.uniform(130, 420),
        rng.uniform(2, 7),
    ]
    names = (*NUTRIENTS, "철분(mg)")
    return "<br/>".join(f"{n} : {v:.1f}" for n, v in zip(names, values, strict=True))


@generator("neis_menus")
def menus(ctx: GenContext, table: Table) -> Iterator[Row]:
    """`pool_size` menus per (level, kind), levels in LEVELS order, kinds 1..3: row = 1 + (level*3 + kind-1)*n + idx."""
    params = table.params
    dishes = {
        cat: [Dish(str(d[0]), str(d[1]), float(d[2])) for d in items]
        for cat, items in params["dishes"].items()
    }
    for level in LEVELS:
        factor = float(params["levels"][level])
        for kind in (1, 2, 3):
            rng = ctx.rng(f"neis:menus:{level}:{kind}")
            for idx in range(int(params["pool_size"])):
                meal = menu(kind, dishes, rng)
                kcal = sum(d.kcal for d in meal) * factor * rng.uniform(0.94, 1.06)
                labels = "<br/>".join(d.label() for d in meal)
                yield (level, kind, idx, labels, f"{kcal:.1f} Kcal", nutrition(kcal, rng))


@generator("neis_origins")
def origins(ctx: GenContext, table: Table) -> Iterator[Row]:
    rng = ctx.rng("neis:origins")
    for v in range(int(table.params["variants"])):
        parts = []
        for item, usual, *others in table.params["origins"]:
            answer = rng.choice(others) if others and v and rng.random() < 0.4 else usual
            parts.append(f"{item} : {answer}")
        yield ("<br/>".join(parts),)


# ---------------------------------------------------------------------------------------------- calendar


@dataclass(frozen=True)
class Event:
    day: dt.date
    off: str  # SBTR_DD_SC_NM
    name: str
    grades: str  # six Y/N flags
    content: str | None = None


ALL = "YYYYYY"


def only(*grades: int) -> str:
    return "".join("Y" if g in grades else "N" for g in range(1, 7))


def build_calendar(level: str, params: Mapping[str, Any], rng: random.Random, last: dt.date) -> list[Event]:
    """One variant of a level's 학사일정 from the first day of the academic year up to `last`."""
    first = iso(params["first_day"])
    holidays = {iso(k): v for k, v in params["holidays"].items()}
    discretionary = {iso(d) for d in rng.sample(params["discretionary_days"], 2)}
    summer_last = iso(rng.choice(params["summer_last_days"]))
    autumn_first = iso(rng.choice(params["autumn_first_days"]))
    csat = iso(params["csat_day"])
    events: list[Event] = []
    school: list[dt.date] = []
    for day in days_between(dt.date(first.year, 3, 1), last):
        if day in holidays:
            events.append(Event(day, "공휴일", holidays[day], ALL))
        elif day.weekday() == 5:
            events.append(Event(day, "휴업일", "토요휴업일", ALL))
        elif day.weekday() == 6 or day < first:
            continue
        elif day in discretionary:
            events.append(Event(day, "휴업일", "재량휴업일", ALL))
        elif summer_last < day < autumn_first:
            events.append(Event(day, "휴업일", "여름방학", ALL))
        elif level == "his" and day == csat:
            events.append(Event(day, "휴업일", "대학수학능력시험", ALL, "수능 시험장 운영"))
        else:
            school.append(day)

    def on(day: dt.date, name: str, grades: str = ALL, content: str | None = None) -> None:
        if day in school:
            events.append(Event(day, "해당없음", name, grades, content))

    def window(lo: str, hi: str) -> list[dt.date]:
        """School days between two month-days (MM-DD) of the academic year."""
        return [d for d in school if iso(f"{first.year}-{lo}") <= d <= iso(f"{first.year}-{hi}")]

    def some(
        lo: str, hi: str, name: str, grades: str = ALL, days: int = 1, content: str | None = None
    ) -> None:
        span = window(lo, hi)
        # a multi-day event runs on consecutive calendar days
        starts = [i for i in range(len(span) - days + 1) if (span[i + days - 1] - span[i]).days == days - 1]
        if starts:
            start = rng.choice(starts)
            for day in span[start : start + days]:
                on(day, name, grades, content)

    on(first, "시업식")
    on(first, ENTRANCE, only(1))
    on(summer_last, "여름방학식")
    on(autumn_first, AUTUMN_START)
    some("03-09", "03-20", "학부모 총회")
    if level in ("mis", "his"):
        length = 4 if level == "his" else 3
        for name, starts in params["exams"].items():
            span = [d for d in school if d >= iso(rng.choice(starts))][:length]
            grades = only(2, 3) if level == "mis" and name.startswith("1학기 중간") else ALL
            for day in span:
                on(day, name, grades)
    if level == "els":
        some("04-06", "04-17", "학부모 공개수업")
        some("04-20", "04-24", "과학의 날 행사")
        for pair in ((1, 2), (3, 4), (5, 6)):
            some("04-20", "05-22", "현장체험학습", only(*pair), content=f"{pair[0]}·{pair[1]}학년")
        if rng.random() < 0.5:
            some("05-11", "05-29", "운동회")
        else:
            some("10-06", "10-30", "운동회")
        some("09-07", "10-16", "수학여행", only(6), days=2, content="6학년 수학여행")
        some("10-12", "10-30", "졸업앨범 촬영", only(6))
        some("11-02", "11-20", "학예회")
    elif level == "mis":
        if rng.random() < 0.5:
            some("05-11", "05-29", "체육대회")
        else:
            some("10-06", "10-23", "체육대회")
        some("04-13", "05-22", "진로체험의 날", only(1))
        grade = rng.choice((2, 3))
        some("09-07", "10-30", "수학여행", only(grade), days=3, content=f"{grade}학년 수학여행")
        some("11-09", "11-27", "학교 축제")
    elif level == "his":
        for day_text, (name, flags) in params["mock_exams"].items():
            on(iso(day_text), name, flags + "NNN")
        if rng.random() < 0.5:
            some("05-11", "05-29", "체육대회")
        else:
            some("10-06", "10-23", "체육대회")
        some("09-07", "10-30", "수학여행", only(2), days=3, content="2학년 수학여행")
        some("11-20", "11-27", "진로의 날")
    else:
        some("05-11", "05-29", "체육대회")
        some("04-13", "05-22", "현장체험학습")
        some("10-12", "10-30", "현장체험학습")
        some("11-09", "11-27", "학예발표회")
    return events


@generator("neis_calendar_events")
def calendar_events(ctx: GenContext, table: Table) -> Iterator[Row]:
    """cal_id = level index * variants + variant + 1."""
    params = table.params
    variants = int(params["variants"])
    ay = str(iso(params["first_day"]).year)
    for li, level in enumerate(LEVELS):
        for v in range(variants):
            rng = ctx.rng(f"neis:calendar:{level}:{v}")
            loaded = ymd(dt.date(int(ay), 2, 16) + dt.timedelta(days=rng.randrange(10)))
            cal_id = li * variants + v + 1
            for e in sorted(build_calendar(level, params, rng, last_day(ctx)), key=lambda e: (e.day, e.name)):
                yield (cal_id, level, ymd(e.day), ay, e.off, e.name, e.content, *e.grades, loaded)


@generator("neis_school_days")
def school_days(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Weekdays from 입학식 to the day before today that no 휴업일/공휴일 event covers."""
    last = last_day(ctx)
    rows = ctx.rows(
        "SELECT cal_id, ymd, AY, SBTR_DD_SC_NM, EVENT_NM FROM edu_calendar_events ORDER BY cal_id, ymd"
    )
    for cal_id, group in itertools.groupby(rows, key=lambda r: int(r[0])):
        events = list(group)
        off = {r[1] for r in events if r[3] in OFF_DAYS}
        first = next(r[1] for r in events if r[4] == ENTRANCE)
        autumn = next((r[1] for r in events if r[4] == AUTUMN_START), "99999999")
        ay = events[0][2]
        start = dt.datetime.strptime(first, "%Y%m%d").date()
        day_no = 0
        for day in days_between(start, last):
            if day.weekday() >= 5 or ymd(day) in off:
                continue
            sem = 2 if ymd(day) >= autumn else 1
            loaded = min(day + dt.timedelta(days=1 + (day_no + cal_id) % 3), last)
            yield (cal_id, ymd(day), day_no, day.weekday(), ay, str(sem), sem, ymd(loaded))
            day_no += 1


@generator("neis_terms")
def terms(ctx: GenContext, table: Table) -> Iterator[Row]:
    yield from ctx.rows("SELECT AY, SEM, min(ymd) FROM edu_school_days GROUP BY AY, SEM ORDER BY AY, SEM")


# ---------------------------------------------------------------------------------------------- schools


@dataclass(frozen=True)
class Office:
    code: str
    name: str
    sido: str
    short: str
    domain: str
    tel: str
    post: tuple[int, int]
    metro: bool
    prefixes: tuple[str, ...]
    counts: dict[str, int]

    @staticmethod
    def of(raw: Mapping[str, Any]) -> Office:
        return Office(
            code=raw["code"], name=raw["name"], sido=raw["sido"], short=raw["short"], domain=raw["domain"],
            tel=raw["tel"], post=(int(raw["post"][0]), int(raw["post"][1])), metro=bool(raw["metro"]),
            prefixes=tuple(raw["prefixes"]), counts={k: int(raw[k]) for k in (*LEVELS, "etc")},
        )  # fmt: skip


@dataclass
class School:
    """One edu_schools row; attribute names are the column names."""

    level: str
    track: str | None
    place: Place
    ATPT_OFCDC_SC_CODE: str
    ATPT_OFCDC_SC_NM: str
    SCHUL_KND_SC_NM: str
    FOND_SC_NM: str
    SCHUL_NM: str = ""
    ENG_SCHUL_NM: str = ""
    SD_SCHUL_CODE: str = ""
    school_id: int = 0
    pool: str = ""
    ord: str | None = None
    majors: str | None = None
    size: int = 1
    students: int = 0
    cal_id: int = 0
    meals: str = "2"
    menu_base: int = 0
    menu_n: int = 0
    origin_id: int = 1
    LCTN_SC_NM: str = ""
    JU_ORG_NM: str = ""
    ORG_RDNZC: str = ""
    ORG_RDNMA: str = ""
    ORG_RDNDA: str = ""
    ORG_TELNO: str = ""
    HMPG_ADRES: str = ""
    COEDU_SC_NM: str = "남여공학"
    ORG_FAXNO: str = ""
    HS_SC_NM: str | None = None
    INDST_SPECL_CCCCL_EXST_YN: str = "N"
    HS_GNRL_BUSNS_SC_NM: str = "해당없음"
    SPCLY_PURPS_HS_ORD_NM: str | None = None
    ENE_BFE_SEHF_SC_NM: str | None = None
    DGHT_SC_NM: str = DAY
    FOND_YMD: str = ""
    FOAS_MEMRD: str = ""
    LOAD_DTM: str = ""

    @property
    def region_cd(self) -> str:
        return self.place.region_cd


# classes per grade: (low, mode, high) by level/track, for a 동; rural schools are smaller
SIZES = {
    "els": (1, 4, 9), "mis": (2, 6, 9), "gen": (4, 8, 9), "auto": (5, 8, 9), "voc": (3, 5, 8), "meister": (3, 4, 6),
    "sci": (3, 4, 5), "lang": (4, 6, 8), "intl": (3, 4, 4), "art": (4, 6, 8), "pe": (2, 2, 3), "sps": (1, 1, 2),
    "etc": (1, 1, 2)
}  # fmt: skip
RURAL_SIZES = {"els": (1, 1, 4), "mis": (1, 2, 4), "gen": (1, 3, 6), "auto": (2, 4, 6)}
LEVEL_SPREAD = {  # weight of a 읍 and of a 면 relative to a 동, and the boost of a 군's share, per level
    "els": (3.0, 1.3, 2.2),
    "mis": (2.0, 0.5, 1.6),
    "his": (1.2, 0.12, 1.2),
    "sps": (0.3, 0.02, 0.6),
}
PRIVATE = {
    "els": 0.012,
    "mis": 0.19,
    "sps": 0.5,
    "gen": 0.45,
    "auto": 0.7,
    "voc": 0.4,
    "lang": 0.4,
    "art": 0.6,
}


class SchoolMaker:
    """Builds one office's schools: places weighted per level, names unique within the office, addresses."""

    def __init__(
        self, ctx: GenContext, params: Mapping[str, Any], office: Office, cal_ids: dict[str, list[int]]
    ):
        self.ctx = ctx
        self.params = params
        self.office = office
        self.cal_ids = cal_ids
        self.rng = ctx.rng(f"neis:schools:{office.code}")
        self.places = load_places(ctx, office.sido)
        self.sido = self.places[0].sido
        self.used: set[str] = set()
        self.firsts: set[str] = set()
        self.postal = self._postal_codes()
        self.pickers = {level: self._picker(level) for level in LEVELS}
        self.support = self._support_offices()
        self.last = last_day(ctx)

    def _postal_codes(self) -> dict[str, str]:
        """Each 시군구 gets an equal slice of the 시도's 3-digit postal prefixes; each 동 a code in its slice."""
        districts = list(dict.fromkeys(p.district for p in self.places))
        lo, hi = self.office.post
        share = (hi - lo + 1) / len(districts)
        start = {d: lo + int(i * share) for i, d in enumerate(districts)}
        rng = self.ctx.rng(f"neis:postal:{self.office.code}")
        return {
            p.region_cd: f"{start[p.district] + rng.randrange(max(1, int(share))):03d}{rng.randrange(100):02d}"
            for p in self.places
        }

    def _picker(self, level: str) -> Picker[Place]:
        eup, myeon, gun_boost = LEVEL_SPREAD[level]
        weights_of = self.params["district_weights"]
        children: dict[str, int] = {}
        for p in self.places:
            children[p.region_cd[:8]] = children.get(p.region_cd[:8], 0) + 1
        local = [
            1.0 if p.setting == "dong" else (eup if p.setting == "eup" else myeon) / children[p.region_cd[:8]]
            for p in self.places
        ]
        totals: dict[str, float] = {}
        for p, w in zip(self.places, local, strict=True):
            totals[p.district] = totals.get(p.district, 0.0) + w
        weights = []
        for p, w in zip(self.places, local, strict=True):
            gun = p.top.endswith("군")
            share = weights_of.get(p.district, weights_of.get(f"{p.sido} {p.top}"))
            if share is None:
                share = (0.6 if self.office.metro else 0.25) if gun else 1.0
            weights.append(float(share) * (gun_boost if gun else 1.0) * w / totals[p.district])
        return Picker(self.places, weights)

    def _support_offices(self) -> dict[str, str]:
        mapping = self.params["support_offices"].get(self.sido, {})
        return {district: name for name, districts in mapping.items() for district in districts}

    # -------------------------------------------------------------- decisions

    def place_for(self, level: str, where: str | None) -> Place:
        if where:
            exact = [p for p in self.places if p.name == where]
            if exact:
                return exact[0]
            inside = [p for p in self.places if p.name.startswith(where + " ")]
            if not inside:
                raise ValueError(f"neis anchor place {where!r} is not a current 법정동 of {self.sido}")
            return self.rng.choice(inside)
        return self.pickers[level].pick(self.rng)

    def name_for(self, s: School, spec: Mapping[str, Any]) -> tuple[str, str]:
        """(Korean name, English name), unique within the office."""
        rng, p, short = self.rng, s.place, self.office.short
        suffix, eng = str(spec["suffix"]), str(spec["eng"])
        local, town = stem(p.local), stem(p.umd)
        city = stem(p.top) if p.sgg and len(p.top) > 2 else local
        words: list[str] = self.params["name_words"]
        if s.level == "sps":
            special = rng.sample(self.params["special_words"], 6)
            first = [rng.choice((city, local, short)), special[0]]
            options = [first] + [[place, w] for w in special for place in (city, local, short)]
        else:
            if s.track in ("sci", "lang", "intl", "art", "pe") and s.track not in self.firsts:
                self.firsts.add(s.track)
                first = [short]
            elif s.level == "els" and p.setting == "dong":
                first = [short, local] if self.office.code == "B10" and rng.random() < 0.3 else [local]
            elif s.level == "els":
                first = [rng.choice((local, town))]
            elif s.FOND_SC_NM == "사립" and rng.random() < 0.45:
                first = [rng.choice(words)]
            elif p.setting == "dong":
                first = [rng.choice((local, local, city))]
            else:
                first = [rng.choice((town, town, city, local))]
            options = [first, [local], [town], [city, local], ["신" + local], [local + "중앙"]]
            options += [[local + side] for side in ("동", "서", "남", "북")] + [
                [w] for w in rng.sample(words, 8)
            ]
        for parts in options:
            name = "".join(parts) + suffix
            if name not in self.used and all(parts) and len(set(parts)) == len(parts):
                self.used.add(name)
                return name, " ".join(romanize(x) for x in parts) + " " + eng
        name = f"{local}제{len(self.used)}{suffix}"
        self.used.add(name)
        return name, f"{romanize(local)} No.{len(self.used)} {eng}"

    def fill(self, s: School, spec: Mapping[str, Any], anchor: Mapping[str, Any]) -> None:
        """Everything but the code: name, size, meals, address, contact, dates."""
        rng, p, office = self.rng, s.place, self.office
        key = "etc" if s.SCHUL_KND_SC_NM.startswith("각종") else s.track or s.level
        if s.FOND_SC_NM != "국립" and "FOND_SC_NM" not in anchor and rng.random() < PRIVATE.get(key, 0.0):
            s.FOND_SC_NM = "사립"
        named = {"COEDU_SC_NM", "SCHUL_NM"} & set(anchor)
        if s.level in ("mis", "his") and s.track in (None, "gen") and not named:
            mixed = 0.9 if s.FOND_SC_NM != "사립" else 0.3
            s.COEDU_SC_NM = "남여공학" if rng.random() < mixed else rng.choice(("남", "여"))
        if s.COEDU_SC_NM == "여" and spec["suffix"] in ("중학교", "고등학교"):
            spec = {"suffix": "여자" + spec["suffix"], "eng": "Girls' " + spec["eng"]}
        if "SCHUL_NM" in anchor:
            s.SCHUL_NM = str(anchor["SCHUL_NM"])
            own = (
                s.SCHUL_NM.removesuffix(str(spec["suffix"]))
                if s.SCHUL_NM.endswith(spec["suffix"])
                else s.SCHUL_NM
            )
            s.ENG_SCHUL_NM = (
                national_english(s.SCHUL_NM) if "대학교" in own else f"{romanize(own)} {spec['eng']}"
            )
            self.used.add(s.SCHUL_NM)
        else:
            s.SCHUL_NM, s.ENG_SCHUL_NM = self.name_for(s, spec)
        lo, mode, hi = (RURAL_SIZES if p.setting != "dong" else SIZES).get(key, SIZES[key])
        s.size = int(anchor.get("size") or round(rng.triangular(lo, hi, mode)))
        grades = {"els": 6, "sps": 13}.get(s.level, 3)
        per_class = {"els": 23, "mis": 26, "his": 25, "sps": 5}[s.level] * (
            0.6 if p.setting == "myeon" else 1
        )
        s.students = max(8, round(s.size * grades * per_class * rng.uniform(0.85, 1.1)))
        if s.level == "his" and s.track in ("sci", "lang", "intl", "pe", "meister"):
            s.meals = "123"
        elif s.level == "his" and s.track in ("gen", "auto", "art"):
            roll = rng.random()
            s.meals = "123" if roll < 0.12 else "23" if roll < 0.45 else "2"
        s.cal_id = rng.choice(self.cal_ids[s.level])
        s.origin_id = 1 + rng.randrange(int(self.params["origins"]))
        s.LCTN_SC_NM = p.sido
        s.JU_ORG_NM = self.ju_org(s)
        s.ORG_RDNZC = self.postal[p.region_cd]
        s.ORG_RDNMA = p.road_address(road_name(p, rng, office.code == "B10"), building_number(rng))
        s.ORG_RDNDA = f"({p.local})"
        area = self.params["area_codes"].get(f"{p.sido} {p.top}", office.tel)
        exchange = rng.randint(200, 999) if area == "02" or rng.random() < 0.7 else rng.randint(8000, 8999)
        number = rng.randint(1000, 9980)
        s.ORG_TELNO = f"{area}-{exchange}-{number}"
        s.ORG_FAXNO = f"{area}-{exchange}-{number + rng.randint(1, 19)}"
        own_words = s.ENG_SCHUL_NM.lower().removesuffix(str(spec["eng"]).lower())
        if s.FOND_SC_NM == "국립":
            own_words = own_words.split(" ")[0]
        slug = re.sub("[^a-z]", "", own_words) + ("-g" if s.COEDU_SC_NM == "여" else "")
        tld = {"els": "es", "mis": "ms", "his": "hs", "sps": "sc"}[s.level]
        s.HMPG_ADRES = f"https://{slug or 'school'}.{office.domain}.{tld}.kr"
        founded = self.founded(s)
        s.FOND_YMD = ymd(founded)
        opened = dt.date(founded.year + (founded.month > 2), 3, 1) if founded.year >= 1970 else founded
        s.FOAS_MEMRD = ymd(min(opened, self.last))
        s.LOAD_DTM = ymd(some_day(rng, dt.date(self.last.year, 2, 20), self.last))
        for name, value in anchor.items():
            if name.isupper() and hasattr(s, name):
                setattr(s, name, str(value))

    def founded(self, s: School) -> dt.date:
        rng = self.rng
        if self.office.code == "I10" and s.place.setting == "dong":
            lo, hi = 2012, 2025
        else:
            eras = {
                "els": ((1905, 1945), (1946, 1979), (1946, 1979), (1980, 1999), (2000, 2025)),
                "mis": ((1946, 1970), (1971, 1999), (1971, 1999), (2000, 2025)),
                "his": ((1900, 1960), (1961, 1999), (1961, 1999), (2000, 2025)),
                "sps": ((1950, 1989), (1990, 2024)),
            }[s.level]
            lo, hi = rng.choice(eras)
        return some_day(rng, dt.date(lo, 1, 1), min(dt.date(hi, 12, 31), self.last))

    def ju_org(self, s: School) -> str:
        office, p = self.office, s.place
        if office.code == "I10" or (office.metro and s.level in ("his", "sps")):
            return office.name
        name = self.support.get(p.top)
        if name is None:
            name = stem(p.top)
        return f"{p.sido}{name}교육지원청"


def his_tracks(n: int, code: str) -> list[str]:
    """How many 고등학교 of each kind an office with n of them has (≈ national shares)."""
    special = {
        "sci": 2 if n > 300 else 1,
        "pe": 1 if n > 50 else 0,
        "art": max(1, round(n * 0.012)),
        "lang": max(1, round(n * 0.013)),
        "intl": (2 if code == "J10" else 1) if n > 100 else 0,
        "meister": max(1, round(n * 0.022)),
        "voc": round(n * 0.2),
        "auto": round(n * 0.035),
    }
    tracks = [t for t, k in special.items() for _ in range(k)]
    return tracks + ["gen"] * max(0, n - len(tracks))


def track_spec(
    params: Mapping[str, Any], track: str, rng: random.Random, anchor: Mapping[str, Any]
) -> dict[str, Any]:
    """hs/ord/majors/pool/suffix/eng of a high school of this track (voc/meister: of a drawn field)."""
    if track in ("voc", "meister"):
        fields: list[dict[str, Any]] = params["vocational" if track == "voc" else "meister"]
        chosen = next((f for f in fields if f["word"] == anchor.get("field")), None) or rng.choice(fields)
        k = min(len(chosen["majors"]), rng.randint(2, 4 if track == "voc" else 3))
        return {
            "hs": "특성화고" if track == "voc" else "특목고",
            "purpose": None if track == "voc" else "마이스터고",
            "ord": chosen["ord"],
            "majors": anchor.get("majors") or rng.sample(chosen["majors"], k),
            "pool": "his-" + chosen["pool"],
            "suffix": chosen["word"] + "고등학교",
            "eng": chosen["eng"] + " High School",
        }
    spec = dict(params["tracks"][track])
    if len(spec["majors"]) > 1:
        spec["majors"] = rng.sample(spec["majors"], min(len(spec["majors"]), rng.randint(3, 4)))
    return spec


ETC_NAMES = {
    "각종학교(초)": [("삼육초등학교", "Sahmyook Elementary School"), ("국제학교", "International School")],
    "각종학교(중)": [("드림중학교", "Dream Middle School"), ("자연중학교", "Nature Middle School")],
    "각종학교(고)": [
        ("실용음악고등학교", "Practical Music High School"),
        ("글로벌고등학교", "Global High School"),
        ("드림고등학교", "Dream High School"),
    ],
}
LEVEL_SPEC = {
    "els": {"suffix": "초등학교", "eng": "Elementary School", "pool": "els"},
    "mis": {"suffix": "중학교", "eng": "Middle School", "pool": "mis"},
    "sps": {"suffix": "학교", "eng": "School", "pool": "sps"},
}


def national_english(name: str) -> str:
    """서울교육대학교부설초등학교 -> Seoul National University of Education Affiliated Elementary School."""
    kind = next((k for k in ("초등학교", "중학교", "고등학교") if name.endswith(k)), "")
    eng = {"초등학교": "Elementary", "중학교": "Middle", "고등학교": "High", "": ""}[kind]
    univ = re.split("교육대학교|대학교", name)[0]
    school = "National University of Education" if "교육대학교" in name else "National University"
    return f"{romanize(univ)} {school} Affiliated {eng} School".replace("  ", " ")


def plan_office(maker: SchoolMaker, anchors: Sequence[Mapping[str, Any]]) -> list[School]:
    """All schools of one office, anchors first, with codes assigned (older schools get lower codes)."""
    office, rng, params = maker.office, maker.rng, maker.params
    counts = dict(office.counts)
    plans: list[tuple[str, str, str | None, Mapping[str, Any]]] = []  # (level, kind, track, anchor)
    for a in anchors:
        kind = a["SCHUL_KND_SC_NM"]
        plans.append((level_of(kind), kind, a.get("track") if level_of(kind) == "his" else None, a))
    national = params["national"].get(office.code, [])
    for name in national:
        kind = next(k for k in ("초등학교", "중학교", "고등학교") if name.endswith(k))
        extra = {"SCHUL_NM": name, "FOND_SC_NM": "국립", "ENG_SCHUL_NM": national_english(name)}
        plans.append((level_of(kind), kind, "gen" if kind == "고등학교" else None, extra))
    for level, _kind, _, _ in plans:
        counts[level] -= 1
    kinds = {level: kind for kind, level in LEVEL_OF_KIND.items()}
    for level in ("els", "mis", "sps"):
        plans += [(level, kinds[level], None, {})] * counts[level]
    plans += [("his", "고등학교", t, {}) for t in his_tracks(counts["his"], office.code)]
    for _ in range(counts["etc"]):
        kind = rng.choice(("각종학교(초)", "각종학교(중)", "각종학교(고)", "각종학교(고)", "각종학교(고)"))
        plans.append((level_of(kind), kind, "gen" if kind.endswith("(고)") else None, {"FOND_SC_NM": "사립"}))

    schools: list[School] = []
    for level, kind, track, anchor in plans:
        place = maker.place_for(level, anchor.get("place"))
        fond = str(anchor.get("FOND_SC_NM", "공립"))
        s = School(level, track, place, office.code, office.name, kind, fond)
        if kind.startswith("각종"):
            word, eng = rng.choice(ETC_NAMES[kind])
            spec: dict[str, Any] = {
                "suffix": word,
                "eng": eng,
                "pool": LEVEL_SPEC.get(level, {"pool": "his"})["pool"],
            }
        elif level == "his":
            spec = track_spec(params, track or "gen", rng, anchor)
            s.HS_SC_NM, s.SPCLY_PURPS_HS_ORD_NM = spec["hs"], spec.get("purpose")
            s.HS_GNRL_BUSNS_SC_NM = "전문계" if track in ("voc", "meister") else "일반계"
            s.ENE_BFE_SEHF_SC_NM = "후기" if track in ("gen", None) else "전기"
            s.INDST_SPECL_CCCCL_EXST_YN = "Y" if track == "voc" and rng.random() < 0.08 else "N"
        else:
            spec = dict(LEVEL_SPEC[level])
        if level == "his":
            s.ord = str(spec.get("ord", "일반계"))
            s.majors = "|".join(spec.get("majors", ["7차일반"]))
        s.pool = str(spec["pool"])
        maker.fill(s, spec, anchor)
        schools.append(s)

    taken = {s.SD_SCHUL_CODE for s in schools if s.SD_SCHUL_CODE}
    for pool_prefixes, members in (
        (office.prefixes, [s for s in schools if not s.SD_SCHUL_CODE and s.FOND_SC_NM != "국립"]),
        (("700",), [s for s in schools if not s.SD_SCHUL_CODE and s.FOND_SC_NM == "국립"]),
    ):
        fresh: set[str] = set()
        while len(fresh) < len(members):
            i = below(rng, len(pool_prefixes) * 10000)
            code = f"{pool_prefixes[i // 10000]}{i % 10000:04d}"
            if code not in taken:
                fresh.add(code)
        codes = sorted(fresh)
        for s, code in zip(sorted(members, key=lambda s: (s.FOND_YMD, s.SCHUL_NM)), codes, strict=True):
            s.SD_SCHUL_CODE = code
    return schools


@generator("neis_schools")
def schools(ctx: GenContext, table: Table) -> Iterator[Row]:
    params = dict(table.params)
    cal_ids: dict[str, list[int]] = {}
    for cal_id, level in ctx.rows("SELECT DISTINCT cal_id, level FROM edu_calendar_events ORDER BY cal_id"):
        cal_ids.setdefault(level, []).append(int(cal_id))
    pool_n = int(ctx.rows("SELECT max(idx) + 1 FROM edu_menus")[0][0])
    params["origins"] = int(ctx.rows("SELECT count(*) FROM edu_origins")[0][0])
    everything: list[School] = []
    for raw in params["offices"]:
        office = Office.of(raw)
        maker = SchoolMaker(ctx, params, office, cal_ids)
        anchors = [a for a in table.anchors if a["ATPT_OFCDC_SC_CODE"] == office.code]
        everything += plan_office(maker, anchors)
    everything.sort(key=lambda s: (s.ATPT_OFCDC_SC_CODE, s.SD_SCHUL_CODE))
    for school_id, s in enumerate(everything, 1):
        s.school_id = school_id
        s.menu_n = pool_n
        s.menu_base = 1 + LEVELS.index(s.level) * 3 * pool_n
        yield tuple(getattr(s, c.name) for c in table.columns)


# ---------------------------------------------------------------------------------------------- classes, majors


def first_school_day(ctx: GenContext) -> dt.date:
    return dt.datetime.strptime(str(ctx.rows("SELECT min(ymd) FROM edu_school_days")[0][0]), "%Y%m%d").date()


@generator("neis_majors")
def majors(ctx: GenContext, table: Table) -> Iterator[Row]:
    loaded = ymd(first_school_day(ctx) - dt.timedelta(days=3))
    rows = ctx.rows(
        "SELECT school_id, ord, majors FROM edu_schools WHERE majors IS NOT NULL ORDER BY school_id"
    )
    for school_id, ord_name, names in rows:
        for name in names.split("|"):
            yield (school_id, DAY, ord_name, name, loaded)


@generator("neis_tracks")
def tracks(ctx: GenContext, table: Table) -> Iterator[Row]:
    rows = ctx.rows(
        "SELECT school_id, DGHT_CRSE_SC_NM, ORD_SC_NM, min(LOAD_DTM) FROM edu_majors "
        "GROUP BY school_id, DGHT_CRSE_SC_NM, ORD_SC_NM ORDER BY school_id, min(rowid)"
    )
    yield from rows


@generator("neis_classes")
def classes(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Grades × classes of every school; a high school's classes of a grade are split among its 학과 in order."""
    rng = ctx.rng("neis:classes")
    start = first_school_day(ctx)
    ay = str(start.year)
    pools = {
        p: (int(base), int(n) // 2)
        for p, base, n in ctx.rows("SELECT pool, min(rowid), count(*) FROM edu_subjects GROUP BY pool")
    }
    rows = ctx.rows(
        "SELECT school_id, level, track, pool, ord, majors, size FROM edu_schools ORDER BY school_id"
    )
    class_id = 0
    for school_id, level, track, pool, ord_name, major_list, size in rows:
        loaded = ymd(start - dt.timedelta(days=rng.randint(1, 6)))
        if level == "sps":
            courses = [(c, SPS_COURSES[c][1], f"sps-{c}") for c in rng.choice(SPS_LAYOUTS)]
        else:
            courses = [(COURSE_OF_LEVEL[level], 6 if level == "els" else 3, pool)]
        names = major_list.split("|") if major_list else [None]
        for course, grades, pool_prefix in courses:
            for g in range(1, grades + 1):
                low = len(names) if track in ("voc", "meister", "lang", "art") else 1
                n = max(low, min(9, int(size) + rng.choice((-1, 0, 0, 0, 1))))
                if level == "sps":
                    n = max(1, min(3, int(size) + rng.choice((0, 0, 1)) - 1 + (course != "초등학교")))
                pool_name = pool_prefix if level == "sps" else f"{pool_prefix}{g}"
                if pool_name not in pools:
                    raise ValueError(f"edu_subjects has no pool {pool_name!r} (school {school_id})")
                base, subject_n = pools[pool_name]
                sched = ELS_SCHEDULES[g] if level == "els" else level
                short = SPS_COURSES[course][0] if level == "sps" else ""
                for c in range(1, n + 1):
                    class_id += 1
                    major = names[(c - 1) * len(names) // n]
                    clrm = f"{short}{g}-{c}"
                    order = ord_name if major else None
                    yield (class_id, school_id, ay, str(g), DAY, course, order, major, str(c), clrm, sched, base,
                           subject_n, loaded)  # fmt: skip


@generator("neis_school_courses")
def school_courses(ctx: GenContext, table: Table) -> Iterator[Row]:
    yield from ctx.rows(
        "SELECT school_id, SCHUL_CRSE_SC_NM, DGHT_CRSE_SC_NM, max(CAST(GRADE AS INTEGER)) FROM edu_classes "
        "GROUP BY school_id, SCHUL_CRSE_SC_NM, DGHT_CRSE_SC_NM ORDER BY school_id, min(class_id)"
    )


# ---------------------------------------------------------------------------------------------- academies


@dataclass(frozen=True)
class Realm:
    realm: str
    order: str
    course: str
    weights: tuple[float, float]  # as 학원, as 교습소
    fee: tuple[int, int]
    lists: tuple[str, ...]
    words: tuple[str, ...]


@cache
def ordinal_ymd(ordinal: int) -> str:
    return ymd(dt.date.fromordinal(ordinal))


def academy_dates(rng: random.Random, last: dt.date) -> tuple[int, int]:
    """(등록일, 개설일) as ordinals: registrations grow denser toward today."""
    year = max(1985, last.year - int(rng.expovariate(1 / 7)))
    first = dt.date(year, 1, 1).toordinal()
    registered = first + below(rng, min(dt.date(year, 12, 31), last).toordinal() - first + 1)
    return registered, min(registered + below(rng, 21), last.toordinal())


@generator("neis_academies")
def academies(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Each academy stands in the 동 of a school drawn by pupils × academy-district weight; its postal code and
    telephone area follow that school's."""
    params = table.params
    last = last_day(ctx)
    realms = [
        Realm(
            r[0],
            r[1],
            r[2],
            (float(r[3]), float(r[4])),
            (int(r[5][0]), int(r[5][1])),
            tuple(r[6]),
            tuple(r[7]),
        )
        for r in params["realms"]
    ]
    kinds: dict[str, Picker[Realm]] = {
        "학원": Picker(realms, [r.weights[0] for r in realms]),
        "교습소": Picker(realms, [r.weights[1] for r in realms]),
    }
    hubs: Mapping[str, float] = params["hubs"]
    columns = operator.itemgetter(*(c.name for c in table.columns))
    schools = ctx.rows(
        "SELECT ATPT_OFCDC_SC_CODE, ATPT_OFCDC_SC_NM, region_cd, students, level, ORG_RDNZC, ORG_TELNO "
        "FROM edu_schools WHERE level IN ('els', 'mis', 'his') ORDER BY school_id"
    )
    by_office: dict[str, list[tuple[Any, ...]]] = {}
    for found in schools:
        by_office.setdefault(found[0], []).append(found)
    for code, count in params["counts"].items():
        rng = ctx.rng(f"neis:academies:{code}")
        members = by_office[code]
        places = {p.region_cd: p for p in load_places(ctx, members[0][2][:2])}
        factor = {"els": 1.0, "mis": 1.3, "his": 0.8}
        weights = []
        for _, _, region_cd, students, level, _, _ in members:
            p = places[region_cd]
            hub = hubs.get(p.district, hubs.get(f"{p.sido} {p.top}", 1.0))
            weights.append(students * factor[level] * hub)
        picker: Picker[tuple[Any, ...]] = Picker(members, weights)
        anchors = [a for a in table.anchors if a["ATPT_OFCDC_SC_CODE"] == code]
        rows: list[dict[str, Any]] = []
        for i in range(int(count)):
            anchor = anchors[i] if i < len(anchors) else {}
            school = picker.pick(rng)
            place = places[school[2]]
            if anchor.get("place"):
                place = next(p for p in places.values() if p.name == anchor["place"])
                school = next((m for m in members if m[2] == place.region_cd), school)
            row = academy(rng, params, kinds, place, school, last, anchor)
            row.update((k, v) for k, v in anchor.items() if k != "place")
            rows.append(row)
        prefix = params["number_prefixes"][code]
        reserved = {a["ACA_ASNUM"] for a in anchors}
        counter = 1000 + below(rng, 1000)
        for row in sorted(
            (r for r in rows if "ACA_ASNUM" not in r), key=lambda r: (r["REG_YMD"], r["ACA_NM"])
        ):
            while (number := f"{prefix}{counter:08d}") in reserved:
                counter += 1
            row["ACA_ASNUM"] = number
            counter += 1 + below(rng, 8)
        for row in sorted(rows, key=lambda r: r["ACA_ASNUM"]):
            yield columns(row)


def academy(
    rng: random.Random,
    params: Mapping[str, Any],
    kinds: Mapping[str, Picker[Realm]],
    place: Place,
    school: tuple[Any, ...],
    last: dt.date,
    anchor: Mapping[str, Any],
) -> dict[str, Any]:
    """One 학원 or 교습소 (without its 지정번호); an anchor fixes its kind and 분야."""
    kind = "학원" if rng.random() < 0.62 else "교습소"
    kind = str(anchor.get("ACA_INSTI_SC_NM", kind))
    realm = kinds[kind].pick(rng)
    if "LE_CRSE_NM" in anchor:
        realm = next(r for r in kinds[kind].items if r.course == anchor["LE_CRSE_NM"])
    brands: Sequence[str] = params["brands"]
    word = realm.words[below(rng, len(realm.words))]
    roll = rng.random()
    prefix = stem(place.local) if roll < 0.3 else brands[below(rng, len(brands))] if roll < 0.9 else ""
    if realm.realm == "독서실":
        name = prefix + word if word != "독서실" else f"{prefix or brands[below(rng, len(brands))]}독서실"
    else:
        suffix = "어학원" if kind == "학원" and realm.order == "외국어" and rng.random() < 0.4 else kind
        name = f"{prefix}{word}{suffix}"
    registered, opened = academy_dates(rng, last)
    paused = rng.random() < 0.04
    lo, hi = realm.fee
    lists = [str(anchor.get("LE_CRSE_LIST_NM") or realm.lists[below(rng, len(realm.lists))])]
    if rng.random() < 0.4 and (more := realm.lists[below(rng, len(realm.lists))]) not in lists:
        lists.append(more)
    targets = ("(초등)", "(중등)", "(고등)") if realm.order in ("보습", "외국어") else ("",)
    fees = [
        f"{x}{targets[below(rng, len(targets))]} : {round(lo + rng.random() * (hi - lo), -4):.0f}"
        for x in lists
    ]
    seats = 20 + below(rng, 281) if kind == "학원" else 9 + below(rng, 28)
    floor = 1 + below(rng, 6)
    detail = rng.random()
    if detail < 0.5:
        rest = f", {floor}층 ({place.local})"
    elif detail < 0.85:
        building = params["buildings"][below(rng, len(params["buildings"]))]
        rest = f", {floor}0{1 + below(rng, 9)}호 ({place.local}, {stem(place.local)}{building})"
    else:
        rest = f", {floor}층 {floor}0{1 + below(rng, 9)}호 ({place.local})"
    if kind == "교습소" and rng.random() < 0.35:
        phone = f"010-{2000 + below(rng, 8000)}-{1000 + below(rng, 9000)}"
    else:
        phone = f"{school[6].split('-')[0]}-{200 + below(rng, 800)}-{1000 + below(rng, 9000)}"
    pause = last.toordinal() - below(rng, 300) if paused else 0
    return {
        "region_cd": place.region_cd,
        "ATPT_OFCDC_SC_CODE": school[0],
        "ATPT_OFCDC_SC_NM": school[1],
        "ADMST_ZONE_NM": place.top,
        "ACA_INSTI_SC_NM": kind,
        "ACA_NM": name,
        "ESTBL_YMD": ordinal_ymd(opened),
        "REG_YMD": ordinal_ymd(registered),
        "REG_STTUS_NM": "휴원" if paused else "개원",
        "CAA_BEGIN_YMD": ordinal_ymd(pause) if paused else None,
        "CAA_END_YMD": ordinal_ymd(pause + 30 + below(rng, 336)) if paused else None,
        "TOFOR_SMTOT": seats,
        "DTM_RCPTN_ABLTY_NMPR_SMTOT": max(1, seats // (2 + below(rng, 3)))
        if kind == "학원"
        else min(9, seats),
        "REALM_SC_NM": realm.realm,
        "LE_ORD_NM": realm.order,
        "LE_CRSE_LIST_NM": ",".join(lists),
        "LE_CRSE_NM": realm.course,
        "PSNBY_THCC_CNTNT": " / ".join(fees),
        "THCC_OTHBC_YN": "Y" if rng.random() < 0.9 else "N",
        "BRHS_ACA_YN": "Y" if realm.order == "입시" and rng.random() < 0.05 else "N",
        "FA_RDNZC": f"{school[5][:3]}{below(rng, 100):02d}",
        "FA_RDNMA": place.road_address(
            road_name(place, rng, place.sido == "서울특별시"), building_number(rng)
        ),
        "FA_RDNDA": rest,
        "FA_TELNO": phone,
        "LOAD_DTM": ordinal_ymd(last.toordinal() - below(rng, 330)),
    }
