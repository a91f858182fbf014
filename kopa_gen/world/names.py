"""Korean person names, in one place for the declared `person` kind and the generators alike.

Two sources, kept apart because each world table's rows depend on the one it draws from: the bundled weighted list
(kopa_gen/world/data/korean_names.tsv, drawn by the declared `person` kind) and the short uniform lists the code
generators draw with `rng.choice` (company CEOs, FSC officers, DART officers and shareholders). Folding one into the
other would change every name of the tables drawing from it.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from functools import cache

from kopa_gen.world.registry import DATA

Weighted = tuple[list[str], list[float]]
"""Names and their weights, in the bundled list's order."""


@cache
def weighted_names() -> tuple[Weighted, Weighted]:
    """(surnames, weights), (given names, weights) from the bundled list (kopa_gen/world/data/README.md)."""
    out: dict[str, Weighted] = {"surname": ([], []), "given": ([], [])}
    with open(DATA / "korean_names.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            out[row["kind"]][0].append(row["name"])
            out[row["kind"]][1].append(float(row["weight"]))
    return out["surname"], out["given"]


# The code generators' uniform lists (order matters: rng.choice picks by position).
FAMILY = "김 이 박 최 정 강 조 윤 장 임 한 오 서 신 권 황 안 송 류 전 홍 고 문 양 손 배 백 허 유 남".split()
GIVEN = "민준 서준 도윤 예준 시우 하준 주원 지호 지후 준서 서연 서윤 지우 서현 하은 민서 하윤 윤서 지민 채원 영수 정호 성민 재현 동훈 상철 경희 미경 은정 혜진".split()  # fmt: skip
MALE = "민준 서준 도윤 예준 시우 하준 주원 지호 지후 준서 영수 정호 성민 재현 동훈 상철 종훈 병철 승우 태호".split()  # fmt: skip
FEMALE = "서연 서윤 지우 서현 하은 민서 하윤 윤서 지민 채원 경희 미경 은정 혜진 수진 지영 은주 현정".split()  # fmt: skip


def person(rng: random.Random, given: Sequence[str] = GIVEN) -> str:
    """A full name: a surname of FAMILY, then a given name of `given` (GIVEN, or MALE / FEMALE), each uniform."""
    return rng.choice(FAMILY) + rng.choice(given)
