"""School meals (급식식단정보): pools of menus per level and meal kind, drawn from the spec's dishes, with calories
and nutrients, and the variants of the ingredient-origin notice; the per-day meal view picks from these pools.

Code, not a declaration: a menu is composed from the spec's dishes per meal kind, with its calories and nutrients
summed from them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from kopa_gen.language.world import Table
from kopa_gen.world.generators.neis_codes import LEVELS
from kopa_gen.world.registry import GenContext, Row, generator


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
