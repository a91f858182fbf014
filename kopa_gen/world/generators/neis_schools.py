"""The edu_schools table: each education office's school mix (anchors first, national schools, counts per level,
high-school tracks, 각종학교), made one by one by `SchoolMaker`, with school codes assigned oldest first.

Code, not a declaration: the school mix of an office is counted per level and track, made school by school, and
coded oldest first over the whole office.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kopa_gen.language.world import Table
from kopa_gen.world.draws import below
from kopa_gen.world.generators.neis_codes import LEVEL_OF_KIND, LEVELS, level_of
from kopa_gen.world.generators.neis_school_maker import Office, School, SchoolMaker, national_english
from kopa_gen.world.registry import GenContext, Row, generator


def his_tracks(n: int, code: str) -> list[str]:
    """How many 고등학교 of each kind an office with n of them has (≈ national shares)."""
    special = {
        "sci": 2 if n > 300 else 1,
        "pe": 1 if n > 50 else 0,
        "art": max(1, round(n * 0.012)),
        "lang": max(1, round(n * 0.013)),
        "intl": (2 if code == "J10" else 1) if n > 100 else 0,
        "meister": max(1, round(n * 0.022)),
        "voc": round(n * 0.2),
        "auto": round(n * 0.035),
    }
    tracks = [t for t, k in special.items() for _ in range(k)]
    return tracks + ["gen"] * max(0, n - len(tracks))


def track_spec(
    params: Mapping[str, Any], track: str, rng: random.Random, anchor: Mapping[str, Any]
) -> dict[str, Any]:
    """hs/ord/majors/pool/suffix/eng of a high school of this track (voc/meister: of a drawn field)."""
    if track in ("voc", "meister"):
        fields: list[dict[str, Any]] = params["vocational" if track == "voc" else "meister"]
        chosen = next((f for f in fields if f["word"] == anchor.get("field")), None) or rng.choice(fields)
        k = min(len(chosen["majors"]), rng.randint(2, 4 if track == "voc" else 3))
        return {
            "hs": "특성화고" if track == "voc" else "특목고",
            "purpose": None if track == "voc" else "마이스터고",
            "ord": chosen["ord"],
            "majors": anchor.get("majors") or rng.sample(chosen["majors"], k),
            "pool": "his-" + chosen["pool"],
            "suffix": chosen["word"] + "고등학교",
            "eng": chosen["eng"] + " High School",
        }
    spec = dict(params["tracks"][track])
    if len(spec["majors"]) > 1:
        spec["majors"] = rng.sample(spec["majors"], min(len(spec["majors"]), rng.randint(3, 4)))
    return spec


ETC_NAMES = {
    "각종학교(초)": [("삼육초등학교", "Sahmyook Elementary School"), ("국제학교", "International School")],
    "각종학교(중)": [("드림중학교", "Dream Middle School"), ("자연중학교", "Nature Middle School")],
    "각종학교(고)": [
        ("실용음악고등학교", "Practical Music High School"),
        ("글로벌고등학교", "Global High School"),
        ("드림고등학교", "Dream High School"),
    ],
}
LEVEL_SPEC = {
    "els": {"suffix": "초등학교", "eng": "Elementary School", "pool": "els"},
    "mis": {"suffix": "중학교", "eng": "Middle School", "pool": "mis"},
    "sps": {"suffix": "학교", "eng": "School", "pool": "sps"},
}


def plan_office(maker: SchoolMaker, anchors: Sequence[Mapping[str, Any]]) -> list[School]:
    """All schools of one office, anchors first, with codes assigned (older schools get lower codes)."""
    office, rng, params = maker.office, maker.rng, maker.params
    counts = dict(office.counts)
    plans: list[tuple[str, str, str | None, Mapping[str, Any]]] = []  # (level, kind, track, anchor)
    for a in anchors:
        kind = a["SCHUL_KND_SC_NM"]
        plans.append((level_of(kind), kind, a.get("track") if level_of(kind) == "his" else None, a))
    national = params["national"].get(office.code, [])
    for name in national:
        kind = next(k for k in ("초등학교", "중학교", "고등학교") if name.endswith(k))
        extra = {"SCHUL_NM": name, "FOND_SC_NM": "국립", "ENG_SCHUL_NM": national_english(name)}
        plans.append((level_of(kind), kind, "gen" if kind == "고등학교" else None, extra))
    for level, _kind, _, _ in plans:
        counts[level] -= 1
    kinds = {level: kind for kind, level in LEVEL_OF_KIND.items()}
    for level in ("els", "mis", "sps"):
        plans += [(level, kinds[level], None, {})] * counts[level]
    plans += [("his", "고등학교", t, {}) for t in his_tracks(counts["his"], office.code)]
    for _ in range(counts["etc"]):
        kind = rng.choice(("각종학교(초)", "각종학교(중)", "각종학교(고)", "각종학교(고)", "각종학교(고)"))
        plans.append((level_of(kind), kind, "gen" if kind.endswith("(고)") else None, {"FOND_SC_NM": "사립"}))

    schools: list[School] = []
    for level, kind, track, anchor in plans:
        place = maker.place_for(level, anchor.get("place"))
        fond = str(anchor.get("FOND_SC_NM", "공립"))
        s = School(level, track, place, office.code, office.name, kind, fond)
        if kind.startswith("각종"):
            word, eng = rng.choice(ETC_NAMES[kind])
            spec: dict[str, Any] = {
                "suffix": word,
                "eng": eng,
                "pool": LEVEL_SPEC.get(level, {"pool": "his"})["pool"],
            }
        elif level == "his":
            spec = track_spec(params, track or "gen", rng, anchor)
            s.HS_SC_NM, s.SPCLY_PURPS_HS_ORD_NM = spec["hs"], spec.get("purpose")
            s.HS_GNRL_BUSNS_SC_NM = "전문계" if track in ("voc", "meister") else "일반계"
            s.ENE_BFE_SEHF_SC_NM = "후기" if track in ("gen", None) else "전기"
            s.INDST_SPECL_CCCCL_EXST_YN = "Y" if track == "voc" and rng.random() < 0.08 else "N"
        else:
            spec = dict(LEVEL_SPEC[level])
        if level == "his":
            s.ord = str(spec.get("ord", "일반계"))
            s.majors = "|".join(spec.get("majors", ["7차일반"]))
        s.pool = str(spec["pool"])
        maker.fill(s, spec, anchor)
        schools.append(s)

    taken = {s.SD_SCHUL_CODE for s in schools if s.SD_SCHUL_CODE}
    for pool_prefixes, members in (
        (office.prefixes, [s for s in schools if not s.SD_SCHUL_CODE and s.FOND_SC_NM != "국립"]),
        (("700",), [s for s in schools if not s.SD_SCHUL_CODE and s.FOND_SC_NM == "국립"]),
    ):
        fresh: set[str] = set()
        while len(fresh) < len(members):
            i = below(rng, len(pool_prefixes) * 10000)
            code = f"{pool_prefixes[i // 10000]}{i % 10000:04d}"
            if code not in taken:
                fresh.add(code)
        codes = sorted(fresh)
        for s, code in zip(sorted(members, key=lambda s: (s.FOND_YMD, s.SCHUL_NM)), codes, strict=True):
            s.SD_SCHUL_CODE = code
    return schools


@generator("neis_schools")
def schools(ctx: GenContext, table: Table) -> Iterator[Row]:
    params = dict(table.params)
    cal_ids: dict[str, list[int]] = {}
    for cal_id, level in ctx.rows("SELECT DISTINCT cal_id, level FROM edu_calendar_events ORDER BY cal_id"):
        cal_ids.setdefault(level, []).append(int(cal_id))
    pool_n = int(ctx.rows("SELECT max(idx) + 1 FROM edu_menus")[0][0])
    params["origins"] = int(ctx.rows("SELECT count(*) FROM edu_origins")[0][0])
    everything: list[School] = []
    for raw in params["offices"]:
        office = Office.of(raw)
        maker = SchoolMaker(ctx, params, office, cal_ids)
        anchors = [a for a in table.anchors if a["ATPT_OFCDC_SC_CODE"] == office.code]
        everything += plan_office(maker, anchors)
    everything.sort(key=lambda s: (s.ATPT_OFCDC_SC_CODE, s.SD_SCHUL_CODE))
    for school_id, s in enumerate(everything, 1):
        s.school_id = school_id
        s.menu_n = pool_n
        s.menu_base = 1 + LEVELS.index(s.level) * 3 * pool_n
        yield tuple(getattr(s, c.name) for c in table.columns)
