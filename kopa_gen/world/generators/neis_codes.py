"""Education (NEIS): the vocabulary every education table shares, and the small code tables written out in the spec.

The NEIS modules (neis_*) place schools in real 법정동 and give them an academic-year calendar, classes, 학과, meal
menus, subject pools and a 학원·교습소 register. Every table draws from its own `ctx.rng(...)` streams (per office,
per calendar, per pool), so changing one table never shifts another's values. Content (offices, dishes, subjects,
holidays) lives in specs/world/neis.yaml; the huge per-day sets (meals, timetables) are views joining these compact
tables.
"""

from __future__ import annotations

LEVELS = ("els", "mis", "his", "sps")
LEVEL_OF_KIND = {"초등학교": "els", "중학교": "mis", "고등학교": "his", "특수학교": "sps"}
DAY = "주간"


def level_of(kind: str) -> str:
    """초등학교 -> els; 각종학교(고) -> his."""
    if kind in LEVEL_OF_KIND:
        return LEVEL_OF_KIND[kind]
    return {"초": "els", "중": "mis", "고": "his"}[kind[-2]]
