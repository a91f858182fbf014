"""The school calendar (학사일정): per level, a few variants of the academic year's events (holidays, vacations,
exams, school events), the school days they leave and the terms; also the day arithmetic the education tables
share (YYYYMMDD text, the last day with data).

Code, not a declaration: a year's events follow calendar rules (holidays, vacations around them, exams inside
terms), and the school days and terms are what they leave.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.generators.neis_codes import LEVELS
from kopa_gen.world.registry import GenContext, Row, generator

ENTRANCE, AUTUMN_START = "입학식", "2학기 개학식"
OFF_DAYS = ("휴업일", "공휴일")


def ymd(day: dt.date) -> str:
    return day.isoformat().replace("-", "")


def iso(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def last_day(ctx: GenContext) -> dt.date:
    """Data stops the day before the world's today."""
    return ctx.today - dt.timedelta(days=1)


def days_between(first: dt.date, last: dt.date) -> Iterator[dt.date]:
    for n in range((last - first).days + 1):
        yield first + dt.timedelta(days=n)


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
