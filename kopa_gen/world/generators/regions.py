"""Legal-district codes (법정동코드) from the shipped public master file; no randomness.

Code, not a declaration: the rows come from a shipped file, and each district's parent and order are computed over
the whole list; a declaration reads only earlier tables.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator

from kopa_gen.language.world import Table
from kopa_gen.world.registry import GenContext, Row, generator


def parent_code(code: str, existing: set[str]) -> str:
    """Nearest existing ancestor: 리 -> 읍면동 -> (일반구 -> 시) -> 시군구 -> 시도; 시도 -> '0000000000'."""
    sido, sgg, umd, ri = code[:2], code[2:5], code[5:8], code[8:]
    candidates: list[str] = []
    if ri != "00":
        candidates.append(code[:8] + "00")
    if umd != "000" or ri != "00":
        candidates.append(code[:5] + "00000")
    if sgg != "000" and sgg[2] != "0":
        candidates.append(code[:4] + "000000")
    if sgg != "000":
        candidates.append(sido + "00000000")
    for c in candidates:
        if c != code and c in existing:
            return c
    return "0000000000"


@generator("legal_districts")
def legal_districts(ctx: GenContext, table: Table) -> Iterator[Row]:
    """Columns: region_cd, sido_cd, sgg_cd, umd_cd, ri_cd, name, low_name, high_cd, locat_order, created,
    abolished (0/1)."""
    with open(ctx.data("legal_districts.tsv"), encoding="utf-8") as fh:
        records = list(csv.DictReader(fh, delimiter="\t"))
    current = {r["region_cd"] for r in records if not r["abolished"]}
    every = {r["region_cd"] for r in records}
    order: dict[str, int] = {}
    for r in records:
        code = r["region_cd"]
        alive = code in current
        high = parent_code(code, current if alive else every)
        if alive:
            order[high] = order.get(high, 0) + 1
        yield (
            code,
            code[:2],
            code[2:5],
            code[5:8],
            code[8:],
            r["name"],
            r["name"].rsplit(" ", 1)[-1],
            high,
            order.get(high, 0) if alive else 0,
            r["created"],
            0 if alive else 1,
        )
