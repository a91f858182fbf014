"""The 학원·교습소 register (학원교습소정보): academies placed in the 동 of schools weighted by pupils and academy
districts, with realm, fees, capacity, address, contact and registration dates; 지정번호 in registration order.

Code, not a declaration: academies are placed near schools weighted by pupils and academy districts, their realm,
name, fee and capacity drawn together, and numbers assigned in registration order.
"""

from __future__ import annotations

import datetime as dt
import operator
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.draws import Picker, below
from kopa_gen.world.generators.neis_calendar import last_day, ymd
from kopa_gen.world.places import Place, building_number, load_places, road_name, stem
from kopa_gen.world.registry import GenContext, Row, generator


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
