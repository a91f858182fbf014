"""Places of the education tables: the current leaf 법정동 (from `regions`) where schools and academies stand, road
addresses in them, and the words their names are built from (naming stems, Revised Romanization)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache, cached_property

from kopa_gen.world.draws import below
from kopa_gen.world.registry import GenContext

# ---------------------------------------------------------------------------------------------- names


# Revised Romanization of the 19 initials, 21 vowels and 28 finals ("-" = silent)
_INITIAL = "g kk n d tt r m b pp s ss - j jj ch k t p h".split()
_VOWEL = "a ae ya yae eo e yeo ye o wa wae oe yo u wo we wi yu eu ui i".split()
_FINAL = "- k k k n n n t l k m l l l p l m p p t t ng t t k t p t".split()
# the sound a final consonant carries into a following ㅇ (liaison)
_CARRY = "- g kk ks n nj n d r lg lm lb ls lt lp r m b ps s ss ng j ch k t p -".split()


def romanize(text: str) -> str:
    """Revised Romanization of Hangul with the common sound changes (liaison, nasalisation, ㄹ assimilation)."""
    parts: list[tuple[int, int, int]] = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            parts.append((code // 588, (code % 588) // 28, code % 28))
    out: list[str] = []
    for i, (ini, med, fin) in enumerate(parts):
        head = _INITIAL[ini]
        if i:
            prev_fin = parts[i - 1][2]
            tail = out.pop()
            if ini == 11 and prev_fin not in (0, 21):
                tail, head = tail[: -len(_FINAL[prev_fin])], _CARRY[prev_fin]
            elif ini == 5 and prev_fin in (4, 8):
                tail, head = tail[: -len(_FINAL[prev_fin])] + "l", "l"
            elif ini == 2 and prev_fin == 8:
                head = "l"
            elif ini == 5 and prev_fin in (16, 21, 1, 17):
                head = "n"
            if ini in (2, 5, 6) and prev_fin in (1, 2, 24):
                tail = tail[: -len(_FINAL[prev_fin])] + "ng"
            elif ini in (2, 5, 6) and prev_fin in (17, 26):
                tail = tail[: -len(_FINAL[prev_fin])] + "m"
            elif ini in (2, 6) and prev_fin in (7, 19, 20, 22, 23, 25):
                tail = tail[: -len(_FINAL[prev_fin])] + "n"
            out.append(tail)
        out.append(head + _VOWEL[med] + _FINAL[fin])
    word = "".join(out).replace("-", "")
    return word[:1].upper() + word[1:]


@cache
def stem(name: str) -> str:
    """The naming stem of a place: 종로1가 -> 종로, 일도이동 -> 일도, 양근리 -> 양근, 수원시 -> 수원, 본동 -> 본동."""
    s = re.sub(r"\d+[가동]$", "", name)
    if len(s) >= 4 and re.search(r"[일이삼사오육칠팔구]동$", s):
        return s[:-2]
    if len(s) > 2 and s[-1] in "동리읍면구군시":
        return s[:-1]
    return s


# ---------------------------------------------------------------------------------------------- places


@dataclass(frozen=True)
class Place:
    """A current leaf 법정동 (동, or 리 of a 읍/면) where a school or academy stands."""

    region_cd: str
    name: str
    sido: str
    sgg: str  # 시군구 part of the full name: "강남구", "수원시 장안구", "" in 세종
    umd: str
    ri: str

    @cached_property
    def top(self) -> str:
        """The 시/군/구 an academy register names (행정구역명): 강남구, 수원시; the 시도 itself in 세종."""
        return self.sgg.split(" ")[0] if self.sgg else self.sido

    @cached_property
    def setting(self) -> str:
        return "eup" if self.umd.endswith("읍") else "myeon" if self.umd.endswith("면") else "dong"

    @property
    def local(self) -> str:
        """The 동 or 리 a detail address names in parentheses."""
        return self.ri or self.umd

    @cached_property
    def district(self) -> str:
        return f"{self.sido} {self.sgg}".strip()

    def road_address(self, road: str, number: int) -> str:
        """<시도> <시군구> [<읍면>] <road> <number>."""
        town = self.umd if self.setting != "dong" else ""
        return " ".join(p for p in (self.sido, self.sgg, town, road, str(number)) if p)


def load_places(ctx: GenContext, sido_cd: str) -> list[Place]:
    """Current leaf 법정동 of a 시도, in code order."""
    rows = ctx.rows(
        "SELECT region_cd, name, umd_cd, ri_cd FROM regions WHERE abolished = 0 AND sido_cd = ? ORDER BY region_cd",
        sido_cd,
    )
    names = {r[0]: r[1] for r in rows}
    with_ri = {r[0][:8] for r in rows if r[3] != "00"}
    sido = names[sido_cd + "00000000"]
    places: list[Place] = []
    for code, name, umd_cd, ri_cd in rows:
        if umd_cd == "000" or (ri_cd == "00" and code[:8] in with_ri):
            continue
        sgg_name = names.get(code[:5] + "00000", sido)
        if not name.startswith(sgg_name + " "):
            continue
        rest = name[len(sgg_name) + 1 :].split(" ")
        sgg = sgg_name[len(sido) :].strip()
        places.append(Place(code, name, sido, sgg, rest[0], rest[1] if len(rest) > 1 else ""))
    return places


def road_name(place: Place, rng: random.Random, seoul: bool) -> str:
    base = stem(place.local) if place.setting == "dong" or rng.random() < 0.5 else stem(place.umd)
    road = base if base.endswith("로") else base + "로"
    roll = rng.random()
    if roll < 0.45:
        return road
    if roll < 0.55:
        return road.removesuffix("로") + "대로"
    return f"{road}{1 + below(rng, 60)}{'길' if seoul else '번길'}"


def building_number(rng: random.Random) -> int:
    return min(int(rng.expovariate(1 / 60)) + 1, 999)
