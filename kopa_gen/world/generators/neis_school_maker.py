"""One education office's schools, one school at a time (`SchoolMaker`): where it stands (places weighted per
level), its Korean and English names (unique within the office), size, meals, calendar, address, contact and
founding dates; and the records involved (`Office`, `School`).

Code, not a declaration: a school is made as a whole (its place, names unique within the office, size, meals and
calendar depend on each other).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kopa_gen.world.draws import Picker, some_day
from kopa_gen.world.generators.neis_calendar import last_day, ymd
from kopa_gen.world.generators.neis_codes import DAY, LEVELS
from kopa_gen.world.places import (
    Place,
    building_number,
    load_places,
    road_name,
    romanize,
    stem,
)
from kopa_gen.world.registry import GenContext


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


def national_english(name: str) -> str:
    """서울교육대학교부설초등학교 -> Seoul National University of Education Affiliated Elementary School."""
    kind = next((k for k in ("초등학교", "중학교", "고등학교") if name.endswith(k)), "")
    eng = {"초등학교": "Elementary", "중학교": "Middle", "고등학교": "High", "": ""}[kind]
    univ = re.split("교육대학교|대학교", name)[0]
    school = "National University of Education" if "교육대학교" in name else "National University"
    return f"{romanize(univ)} {school} Affiliated {eng} School".replace("  ", " ")
