"""The shipped legal-district list: codes moved by a province change keep a name that says where they are (the
province renamed, or the row's own name where it never named the province, e.g. 출장소)."""

from __future__ import annotations

import csv

from kopa_gen.world.registry import DATA

MOVES = [("47720", "27720", "경상북도 군위군", "대구광역시 군위군"), ("42", "51", "강원도", "강원특별자치도"),
         ("45", "52", "전라북도", "전북특별자치도")]  # fmt: skip


def test_moved_codes_keep_a_true_name() -> None:
    with open(DATA / "legal_districts.tsv", encoding="utf-8") as fh:
        names = {r["region_cd"]: r["name"] for r in csv.DictReader(fh, delimiter="\t")}
    checked = 0
    for old, new, old_name, new_name in MOVES:
        for code, name in names.items():
            before = names.get(old + code[len(new) :]) if code.startswith(new) else None
            if before is None:
                continue
            expected = new_name + before[len(old_name) :] if before.startswith(old_name) else before
            assert name == expected, (code, name, before)
            checked += 1
    assert checked > 1000
    assert names["5110500000"] == "동해출장소"
