"""Classes and what the timetable views join them with: subject pools per grade and semester, the 학과 of high
schools, and every school's classes (edu_classes). The bell periods, tracks and school courses are declared
(specs/world/neis.yaml: edu_periods, edu_tracks, edu_school_courses).

Code, not a declaration: subject pools are shuffled so that no subject follows itself, and a school's classes depend
on its level, track, 학과 and size together.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator, Mapping, Sequence

from kopa_gen.language.world import Table
from kopa_gen.world.generators.neis_calendar import ymd
from kopa_gen.world.generators.neis_codes import DAY
from kopa_gen.world.registry import GenContext, Row, generator

COURSE_OF_LEVEL = {"els": "초등학교", "mis": "중학교", "his": "고등학교"}
SPS_COURSES = {"초등학교": ("초", 6), "중학교": ("중", 3), "고등학교": ("고", 3), "전공과": ("전공", 2)}
ELS_SCHEDULES = {1: "els12", 2: "els12", 3: "els34", 4: "els34", 5: "els56", 6: "els56"}  # edu_periods
SPS_LAYOUTS = (("초등학교", "중학교", "고등학교", "전공과"),) * 2 + (
    ("중학교", "고등학교", "전공과"), ("초등학교", "중학교", "고등학교"), ("초등학교", "중학교")
)  # fmt: skip


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
