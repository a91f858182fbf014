"""Write a platform's data.go.kr catalog (specs/platforms/<platform>/catalog.yaml) from a draft of this folder.

    python pending/catalogs/datagokr/bind.py fsc              # fsc.yaml -> specs/platforms/fsc/catalog.yaml
    python pending/catalogs/datagokr/bind.py molit            # molit_other.yaml -> specs/platforms/molit/catalog.yaml
    kopa-gen build && python pending/catalogs/datagokr/bind.py --examples fsc   # sample arguments from the rows

What is bound, and what is not (counted on stderr, and in the catalog's header):
- an operation the spec already has by hand (same path) is left to it;
- an operation whose source names no row field is left out: its rows would be invented; so is one with a required
  parameter that selects on a field the source does not name (served without it, it would answer every row);
- a parameter that selects on a field the source does not list is left out (the sandbox could not apply it, and
  ignoring it would answer wrong rows); so is a `begin`/`end` range on a field that is not a date (the real
  service compares numbers, the sandbox's text would compare digits);
- `beginX` is `X >= value`, `endX` is `X < value`, `likeX` is `X contains value`, anything else equality on the
  field of its own name (data.go.kr's 금융위원회 convention, as the bound operations' guides state it).
Each dataset keeps its provenance (one-source: data-go-kr-client 4.16.0) and says how many fields a row has by the
source (`field_count`) where it lists only some.

Where the client names no row field, `found_fields_<org>.yaml` may: row field names read off public code that
parses that operation's answers (each entry cites its repositories and files; gathered with the code search of
../.library, facts only). Such an operation is bound with those fields, its provenance naming both sources.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from build import FORMAT  # the switch names the drafts were sorted by (this folder's build.py)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DATE = re.compile(r"(Dt|Ymd|Ym|Yr|Year|Dd|Mm)$")
RANGE = {"begin": "gte", "end": "lt", "like": "contains"}
# Values for the required arguments no platform example covers (a value the argument takes, not a row's value).
REQUIRED_EXAMPLES: dict[str, str] = {
    "bondIsurNm": "삼성전자",
    "stckIssuCmpyNm": "삼성전자",
    "nowVhclNo": "12가3456",
    "ntnlAstLctnSidoNm": "서울특별시",
}


NAMED_REPO = re.compile(r"^[\w.-]+/[\w.-]+$")


def found_fields() -> dict[str, dict[str, Any]]:
    """Row fields of operations the client names none of, by code, from this folder's found_fields_*.yaml."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(HERE.glob("found_fields_*.yaml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            # a source is cited by its repository and file; one the search could not name is not a citation
            named = [s for s in entry.get("sources") or [] if NAMED_REPO.match(str(s.get("repo", "")))]
            if entry.get("fields") and named and not entry.get("skip"):  # skip: why the binder leaves it
                if entry["code"] in out:
                    raise SystemExit(f"{path.name}: {entry['code']} is cited in another found_fields file too")
                out[entry["code"]] = {**entry, "sources": named}
    return out


def with_found(ds: dict[str, Any], found: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The draft with the found row fields where the client names none."""
    entry = found.get(ds["code"])
    if entry is None or ({f["name"] for f in ds.get("fields") or []} - SAFETY_ENVELOPE):
        return ds
    cited = "; ".join(dict.fromkeys(f"{s['repo']} {s['path']}" for s in entry["sources"]))
    provenance = dict(ds["provenance"], source=f"{ds['provenance']['source']}; row fields: {cited}")
    fields = [{"name": f["name"], "description": f.get("description") or ""} for f in entry["fields"]]
    return {**ds, "fields": fields, "provenance": provenance, "field_count": None}


SAFETY_ENVELOPE = {"head", "row"}  # 행정안전부's statistics services list their envelope, not a row field
OTHER_PAGING = {"pageIndex", "recordCountPerPage", "page", "perPage", "pageNum"}


def switch(ds: dict[str, Any], spec: dict[str, Any], switched: set[str]) -> tuple[dict[str, Any], ...] | None:
    """The operation's own format switch as its label names the values: () when it is the platform's (by name),
    ({},) when it takes none, None when the label of another switch names no values (left out: the value a client
    sends would be a guess). `switched`: the services of which some operation names a switch (the source leaves it
    out of some operations of a service whose others send it, as the hand-written ones do)."""
    platform = (spec.get("x-kopa") or {}).get("format") or {}
    names = [n for n in ds.get("common", []) if n in FORMAT]
    if not names:  # none named: none taken, unless another operation of its service takes a switch
        service = ds["code"].removeprefix("service/").split("/")[0]
        return () if service in switched or not platform.get("param") else ({},)
    name = names[0]
    if name == platform.get("param"):
        return ()  # the platform's switch, sent as the platform spells its values
    label = (ds.get("common_labels") or {}).get(name, "")
    if "0=xml" in label.replace(" ", "") and "1=json" in label.replace(" ", ""):
        values = {"json": "1", "xml": "0"}
    elif "json" in label:
        values = {"json": "json", "xml": "xml"}
    elif "JSON" in label:
        values = {"json": "JSON", "xml": "XML"}
    else:
        return None
    return ({"param": name, **values},)


# How a platform's synthesised rows fill fields the rules from their names get wrong (the 교통카드 statistics'
# months and years, their departure and arrival regions, drawn from the world's and named as it names them).
NAMED = "(SELECT r.{name} FROM molit_regions r WHERE r.{code} = {column} LIMIT 1)"
ENDS = ("dptre", "arvl", "ride", "alght")  # departure, arrival, boarding, alighting
FIELD_GEN: dict[
    str, dict[str, tuple[dict[str, Any], str | None] | list[tuple[dict[str, Any], str | None]]]
] = {  # field -> (generator, the field it reads), or a list of them: the first whose field the row holds
    "molit": {
        "opr_ym": ({"date": ["2023-01-01", "today-60"], "format": "%Y%m"}, None),
        "opr_yr": ({"date": ["2019-01-01", "today-400"], "format": "%Y"}, None),
        "dow_nm": ({"choice": ["월", "화", "수", "목", "금", "토", "일"]}, None),
        # 실거래가 (RTMS): asked by a 시군구 (LAWD_CD, the first five digits of its 법정동코드) and a contract month
        # (DEAL_YMD, six digits); a row's own sggCd is the 시군구 it was asked by
        "LAWD_CD": ({"ref": "molit_regions.sgg_cd"}, None),
        "DEAL_YMD": ({"date": ["today-1095", "today-30"], "format": "%Y%m"}, None),
        "sggCd": ({"sql": "CAST(LAWD_CD AS INTEGER)"}, "LAWD_CD"),
        "sggNm": ({"sql": "(SELECT r.sgg_nm FROM molit_regions r WHERE r.sgg_cd = LAWD_CD LIMIT 1)"}, "LAWD_CD"),
        "dealYear": ({"sql": "CAST(DEAL_YMD AS INTEGER) / 100"}, "DEAL_YMD"),
        "dealMonth": ({"sql": "CAST(DEAL_YMD AS INTEGER) % 100"}, "DEAL_YMD"),
        # 공동주택 단지 목록 (AptListService3): a 단지 in a current 법정동 (bjdCode, 10 digits), asked by its 시도 (2) or
        # 시군구 (5) prefix; as1-as4 name its 시도, 시군구, 읍면동 and 리 (the rows are at 읍면동 level: no 리)
        "bjdCode": ({"ref": "molit_regions.emd_cd"}, None),
        "sidoCode": ({"sql": "substr(bjdCode, 1, 2)"}, "bjdCode"),
        "sigunguCode": ({"sql": "substr(bjdCode, 1, 5)"}, "bjdCode"),
        "as1": ({"sql": "(SELECT r.ctpv_nm FROM molit_regions r WHERE r.emd_cd = bjdCode)"}, "bjdCode"),
        "as2": ({"sql": "(SELECT r.sgg_nm FROM molit_regions r WHERE r.emd_cd = bjdCode)"}, "bjdCode"),
        "as3": ({"sql": "(SELECT r.emd_nm FROM molit_regions r WHERE r.emd_cd = bjdCode)"}, "bjdCode"),
        "as4": ({"sql": "''"}, "bjdCode"),
        "kaptCode": ({"code": "A1{n:07d}"}, None),  # K-apt 단지코드: A and eight digits
        # 입찰결과 상태, as the request parameter's label lists them (4 유찰, 5 낙찰, 6 취소, 7 수정취소, 9 낙찰무효,
        # 10 계약취소)
        "bidState": ({"choice": {"5": 6, "4": 2, "6": 1, "7": 1, "9": 1, "10": 1}}, None),
        # 입찰공고 (K-apt): the 단지 is one of the 단지 codes and names above; the days a notice's
        "aptCode": ({"code": "A1{n:07d}"}, None),
        "bidKaptname": (
            {"sql": "CASE _n % 5 WHEN 0 THEN '한빛' WHEN 1 THEN '푸른마을' WHEN 2 THEN '대림' WHEN 3 THEN '현대' "
             "ELSE '주공' END || ' ' || (_n % 9 + 1) || '단지'"},
            None,
        ),
        "bidRegdate": ({"date": ["today-1095", "today-30"]}, None),
        "bidDeadline": ({"sql": "strftime('%Y%m%d', date(substr(bidRegdate, 1, 4) || '-' || substr(bidRegdate, 5, 2) "
                                "|| '-' || substr(bidRegdate, 7, 2), '+14 days'))"}, "bidRegdate"),
        "amount": ({"lognormal": [30_000_000.0, 1.2], "decimals": 0}, None),
        # 유지이력: the last completion day, the repair cycle and the years used
        "mnthEtime": ({"date": ["today-3650", "today-30"]}, None),
        "year": ({"integer": [5, 30]}, None),
        "useYear": ({"integer": [0, 30]}, None),
        "remainingYear": [  # the cycle less the years used, where the row holds the cycle; else a count of years
            ({"sql": "max(0, year - useYear)"}, "year"),
            ({"integer": [0, 30]}, None),
        ],
        "kaptName": (
            {"sql": "CASE _n % 5 WHEN 0 THEN '한빛' WHEN 1 THEN '푸른마을' WHEN 2 THEN '대림' WHEN 3 THEN '현대' "
             "ELSE '주공' END || ' ' || (_n % 9 + 1) || '단지'"},
            None,
        ),
        # 도로명 아파트 목록: asked by a 도로명코드 (시군구 5 + 도로번호 7) of a 공동주택 address of the world
        "roadCode": ({"ref": "juso_addresses.rnMgtSn", "where": "bdKdcd = '1'"}, None),
        "doroJuso": (
            {"sql": "(SELECT a.roadAddrPart1 FROM juso_addresses a WHERE a.rnMgtSn = roadCode LIMIT 1)"},
            "roadCode",
        ),
        **{f"{end}_ctpv_cd": ({"ref": "molit_regions.ctpv_cd"}, None) for end in ENDS},
        **{  # a 시군구 of the row's 시도
            f"{end}_sgg_cd": (
                {
                    "sql": f"(SELECT r.sgg_cd FROM molit_regions r WHERE r.ctpv_cd = {end}_ctpv_cd AND r.rowid = "
                    f"(SELECT min(q.rowid) FROM molit_regions q WHERE q.ctpv_cd = {end}_ctpv_cd) + (_n * 37) % "
                    f"(SELECT count(*) FROM molit_regions q WHERE q.ctpv_cd = {end}_ctpv_cd))"
                },
                f"{end}_ctpv_cd",
            )
            for end in ENDS
        },
        **{
            f"{end}_{kind}_nm": (
                {"sql": NAMED.format(name=f"{kind}_nm", code=f"{kind}_cd", column=f"{end}_{kind}_cd")},
                f"{end}_{kind}_cd",
            )
            for end in ENDS
            for kind in ("ctpv", "sgg")
        },
    }
}


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def ranged(name: str) -> bool:
    """Whether the parameter is a bound of a range (likeX, beginX, endX, ...), not a value of its own field."""
    return any(name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isupper() for prefix in RANGE)


def selects(name: str, fields: set[str]) -> tuple[str, str] | None:
    """(field, match) the parameter selects on, or None when the source does not name its field."""
    for prefix, match in RANGE.items():
        if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isupper():
            field = lower_first(name[len(prefix) :])
            if field not in fields:
                return None
            if match != "contains" and not DATE.search(field):
                return None  # a numeric range the sandbox's text columns would compare as text
            return field, match
    if name in fields:
        return name, "eq"
    # crtr_yr selects CRTR_YR: one column to SQLite, which compares names without case
    same = [f for f in fields if f.lower() == name.lower()]
    return (same[0], "eq") if len(same) == 1 else None


def example(name: str) -> str | None:
    """A value a required argument takes (dates of the world's year, a name the world has)."""
    if name in REQUIRED_EXAMPLES:
        return REQUIRED_EXAMPLES[name]
    bare = name.removeprefix("like")
    if bare.endswith(("Ym",)):
        return "202610"
    if bare.endswith(("Yr", "Year")):
        return "2025"
    if bare.endswith(("Dt", "Ymd")):
        return "2026" if name.startswith("like") else "20261127"
    return None  # the second pass (--examples) reads one from the rows


def bind(
    draft: dict[str, Any], spec: dict[str, Any], platform_examples: set[str]
) -> tuple[list[Any], dict[str, int]]:
    field_gen = FIELD_GEN.get(str((spec.get("x-kopa") or {}).get("platform")), {})
    bound_paths = set(spec.get("paths") or {})
    tools = {
        op["x-kopa"]["tool"]
        for item in (spec.get("paths") or {}).values()
        for op in item.values()
        if isinstance(op, dict) and "x-kopa" in op
    }
    out: list[Any] = []
    counts = {
        "drafted": 0,
        "by hand": 0,
        "no fields": 0,
        "other paging": 0,
        "format values unnamed": 0,
        "required on unnamed field": 0,
        "held back": 0,
        "bound": 0,
        "params left out": 0,
        "params": 0,
    }
    switched = {route.strip("/").removeprefix("service/").split("/")[0] for route in bound_paths} | {
        ds["code"].removeprefix("service/").split("/")[0]
        for ds in draft["datasets"]
        if any(n in FORMAT for n in ds.get("common", []))
    }
    found = found_fields()
    for ds in draft["datasets"]:
        counts["drafted"] += 1
        if "/" + ds["code"] in bound_paths:
            counts["by hand"] += 1
            continue
        if ds["code"] in found and ds is not (ds := with_found(ds, found)):
            counts["fields found elsewhere"] = counts.get("fields found elsewhere", 0) + 1
        if not ds.get("fields") or {f["name"] for f in ds["fields"]} <= SAFETY_ENVELOPE:
            counts["no fields"] += 1
            continue
        if OTHER_PAGING & set(ds.get("common", [])):
            counts["other paging"] += 1  # a platform pages with one pair (pageNo/numOfRows)
            continue
        fmt = switch(ds, spec, switched)
        if fmt is None:
            counts["format values unnamed"] += 1
            continue
        if ds["tool"] in tools:
            raise SystemExit(f"tool {ds['tool']} of {ds['code']} is taken by a hand-written operation")
        fields = [{"name": f["name"], "description": f.get("description", "")} for f in ds["fields"]]
        names = {f["name"] for f in fields}
        params: list[dict[str, Any]] = []
        examples: dict[str, list[str]] = {}
        # a required parameter on a field the source does not list (건축HUB's sigunguCd + bjdongCd): the world
        # holds it and selects by it, the answer does not send it (the field is not invented into the rows)
        unnamed = [p for p in ds.get("params", []) if p.get("required") and selects(p["name"], names) is None]
        if any(ranged(p["name"]) for p in unnamed):
            # a range's bounds on an unnamed field: served without them, it would answer rows it never selects
            counts["required on unnamed field"] += 1
            continue
        for p in unnamed:
            # of the type the request gives it, so that the value asked compares equal (a 시군구 code or a month
            # asked as a number is held as a number)
            held: dict[str, Any] = {"name": p["name"], "description": p.get("description", ""), "sent": False}
            if p.get("type", "string") != "string":
                held["type"] = p["type"]
            fields.append(held)
            names.add(p["name"])
            counts["held back"] += 1
        for f in fields:
            ways = field_gen.get(f["name"], [])
            for gen, reads in ways if isinstance(ways, list) else [ways]:
                if reads is None or reads in names:  # a name is read from a code the row holds
                    f["gen"] = copy.deepcopy(gen)
                    break
        for p in ds.get("params", []):
            counts["params"] += 1
            hit = selects(p["name"], names)
            if hit is None:
                counts["params left out"] += 1
                continue
            field, match = hit
            param: dict[str, Any] = {"name": p["name"], "description": p.get("description", "")}
            if p.get("type", "string") != "string":
                param["type"] = p["type"]
            if p.get("required"):
                param["required"] = True
                value = example(p["name"]) if p["name"] not in platform_examples else None
                if value is not None:
                    examples[p["name"]] = [value]
                shared = ((spec.get("x-kopa") or {}).get("examples") or {}).get(p["name"], [])
                if p.get("type", "string") == "string" and any(not isinstance(v, str) for v in shared):
                    examples[p["name"]] = [str(v) for v in shared]  # the platform's, as this one spells them
            if match != "eq":
                param["match"] = match
            if field != p["name"]:
                param["field"] = field
            elif p.get("type", "string") != "string":
                # the source types the value it selects with: so is the field (one it sends)
                selected = next(f for f in fields if f["name"] == field)
                if selected.get("sent", True):
                    selected.setdefault("type", p["type"])
            params.append(param)
        entry: dict[str, Any] = {
            "code": ds["code"],
            "tool": ds["tool"],
            "summary": ds["summary"],
            "description": ds.get("description", ""),
            "params": params,
            "fields": fields,
        }
        provenance = dict(ds["provenance"])
        if ds.get("field_count") and ds["field_count"] > len(fields):
            provenance["field_count"] = ds["field_count"]
        entry["provenance"] = provenance
        if examples:
            entry["examples"] = examples
        if fmt:
            entry["format"] = fmt[0]
        out.append(entry)
        counts["bound"] += 1
    # the same Korean name for operations of several services (TAGO's five 도시코드 목록 조회): say whose
    titles = [
        str(op.get("summary", ""))
        for item in (spec.get("paths") or {}).values()
        for op in item.values()
        if isinstance(op, dict)
    ] + [d["summary"] for d in out]
    for d in out:
        if titles.count(d["summary"]) > 1:
            d["summary"] = f"{d['summary']} ({d['code'].removeprefix('service/').split('/')[0]})"
    return out, counts


LABEL_END = re.compile(
    r"\s*(와 일치하는 값|을\(를\) 포함하는 값|이상의 값|미만의 값|초과의 값|이하의 값)(\(.*\))?$"
)
AGENCY = (
    "(SELECT a.{column} FROM mois_agencies a WHERE a.gugunCd = OPN_ATMY_GRP_CD)"  # the row's local government
)
# How the family's common columns are filled where the rules from their names would be unrealistic.
COND_GEN: dict[str, dict[str, Any]] = {
    "SALS_STTS_CD": {"choice": {"01": 6, "03": 3, "02": 1}},
    "DAT_UPDT_PNT": {"date": ["today-60", "today-2"], "format": "%Y%m%d%H%M%S"},
    "BASE_DATE": {"date": ["2026-01-01", "today-2"], "format": "%Y%m%d"},
    "ROAD_NM_ADDR": {"sql": AGENCY.format(column="full_nm") + " || ' 중앙로 ' || _n"},
    "LCTN_ROAD_NM_ADDR": {"sql": AGENCY.format(column="full_nm") + " || ' 시청로 ' || _n"},
    "LOTNO_ADDR": {"sql": AGENCY.format(column="full_nm") + " || ' ' || (100 + _n) || '-1'"},
    "SGG_NM": {"sql": AGENCY.format(column="gugunNm")},
}
COND_DATE = re.compile(r"(YMD|YM|DATE|PNT)$")


def condition(name: str) -> re.Match[str] | None:
    """A condition parameter as kopa-gen's catalogs read it (kopa_gen/language/catalog.py `COND`); the source spells
    one with a doubled bracket (`cond[BASE_DATE::LT]]`), sent as the family's other conditions are."""
    from kopa_gen.language.catalog import COND

    return COND.match(re.sub(r"\]+$", "]", name))


def bind_conditions(draft: dict[str, Any], spec: dict[str, Any]) -> tuple[list[Any], dict[str, int]]:
    """행정안전부's 인허가 family (`<업종>/info`, `<업종>/history`): every condition `cond[COLUMN::OP]` names a
    column of the rows, and the source names no other field (it lists `item` only), so a row holds the columns its
    conditions name (and the fields the source lists, where it lists some), labelled as the conditions are. A range
    (GTE/LT) on a column that is not a date or time is left out (the sandbox's text columns would compare digits)."""
    bound_paths = set(spec.get("paths") or {})
    out: list[Any] = []
    counts = {
        "drafted": 0,
        "not of the family": 0,
        "by hand": 0,
        "bound": 0,
        "params left out": 0,
        "params": 0,
    }
    for ds in draft["datasets"]:
        counts["drafted"] += 1
        if ds.get("common") != ["returnType", "pageNo", "numOfRows"]:
            counts["not of the family"] += 1  # another format switch or paging pair: not yet read
            continue
        if "/" + ds["code"] in bound_paths:
            counts["by hand"] += 1
            continue
        labels: dict[str, str] = {"OPN_ATMY_GRP_CD": "개방자치단체코드"}
        for f in ds.get("fields", []):
            labels.setdefault(f["name"], f.get("description", ""))
        params: list[dict[str, Any]] = []
        for p in ds["params"]:
            counts["params"] += 1
            hit = condition(p["name"])
            if hit is None:
                counts["params left out"] += 1
                continue
            column, op = hit.groups()
            if op in ("GTE", "GT", "LTE", "LT") and not COND_DATE.search(column):
                counts["params left out"] += 1
                continue
            labels.setdefault(column, LABEL_END.sub("", p.get("description", "")).strip())
            param: dict[str, Any] = {"name": hit.group(0), "description": p.get("description", "")}
            if p.get("required"):
                param["required"] = True
            params.append(param)
        fields = []
        for name, label in labels.items():
            field: dict[str, Any] = {"name": name, "description": label}
            if name in COND_GEN:
                field["gen"] = copy.deepcopy(COND_GEN[name])  # a copy: no YAML anchors
            fields.append(field)
        out.append(
            {
                "code": ds["code"],
                "tool": ds["tool"],
                "summary": ds["summary"],
                "description": ds.get("description", "").replace("<br/>", " "),
                "params": params,
                "fields": fields,
            }
        )
        counts["bound"] += 1
    return out, counts


def examples_from_world(pid: str) -> None:
    """Second pass, after `kopa-gen build`: give each dataset the sample arguments its per-tool tests and EDGE start
    from, read from its own synthesised rows (the first row with the values needed), so that every tool finds data
    with its examples. The world is seeded: the same spec gives the same rows, hence the same examples."""
    import sqlite3

    from kopa_gen.language.platform import tool_params
    from kopa_gen.project import load_project
    from kopa_gen.world.build import ensure_world
    from kopa_gen.world.lazy import open_world

    path = REPO / "specs" / "platforms" / pid / "catalog.yaml"
    text = path.read_text(encoding="utf-8")
    head, _, body = text.partition("datasets:\n")
    catalog = yaml.safe_load("datasets:\n" + body)
    project = load_project(REPO)
    platform = project.platform(pid)
    paging = {platform.kopa.paging.page, platform.kopa.paging.size} if platform.kopa.paging else set()
    db = open_world(ensure_world(project.world).path)  # a catalog table is made at its first query
    db.row_factory = sqlite3.Row
    for ds in catalog["datasets"]:
        op = platform.operation(ds["tool"])
        assert op.kopa.source is not None
        by_param = {f.param: f for f in op.kopa.source.filters}
        args = [a for a in tool_params(platform.kopa, op) if a.name not in paging]
        given = {**platform.kopa.examples, **ds.get("examples", {})}
        wanted = [a.name for a in args if a.required] or [next((a.name for a in args if a.name in given), "")]
        wanted = [name for name in wanted if name]
        if not wanted:
            continue
        columns = [by_param[name].column for name in wanted]
        where = " AND ".join(f'"{c}" IS NOT NULL' for c in columns)
        row = db.execute(
            f'SELECT * FROM "{op.kopa.source.table}" WHERE {where} ORDER BY rowid LIMIT 1'
        ).fetchone()
        if row is None:
            continue
        own = dict(ds.get("examples", {}))
        kinds = {a.name: a.schema.get("type") for a in args}
        for name, column in zip(wanted, columns, strict=True):
            raw = row[column]
            value = str(raw)
            lt = by_param[name].match == "lt"  # `< value` excludes it
            if kinds.get(name) in ("integer", "number"):  # a number the API takes: 202509, not 202509.0
                try:
                    number = float(raw)
                    raw = int(number) if number.is_integer() else number
                except (TypeError, ValueError):
                    pass  # the per-tool tests say so
            own[name] = ["9" * len(value) if lt else raw if isinstance(raw, int | float) else value]
        ds["examples"] = own
    db.close()
    path.write_text(
        head + yaml.safe_dump(catalog, allow_unicode=True, sort_keys=False, width=120), encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("platform", choices=["fsc", "nec", "tago", "mois", "molit"], help="the platform to bind")
    parser.add_argument(
        "--examples", action="store_true", help="write each dataset's examples from the built world's rows"
    )
    args = parser.parse_args()
    if args.examples:
        examples_from_world(args.platform)
        return
    pid = args.platform
    drafts = {"molit": "molit_other"}  # 국토교통부 beyond TAGO (tago.yaml holds the TAGO family)
    draft = yaml.safe_load((HERE / f"{drafts.get(pid, pid)}.yaml").read_text(encoding="utf-8"))
    spec_path = REPO / "specs" / "platforms" / pid / "openapi.yaml"
    spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    platform_examples = set((spec.get("x-kopa") or {}).get("examples") or {})
    # an operation whose parameters are conditions cond[COLUMN::OP] (행정안전부's 인허가 family) names its row's
    # columns by them; any other is bound by the fields its source lists
    family = [ds for ds in draft["datasets"] if any(condition(p["name"]) for p in ds.get("params", []))]
    rest = [ds for ds in draft["datasets"] if ds not in family]
    datasets, counts = bind_conditions({"datasets": family}, spec)
    more, counted = bind({"datasets": rest}, spec, platform_examples)
    datasets += more
    for name, n in counted.items():
        counts[name] = counts.get(name, 0) + n
    counts = {name: n for name, n in counts.items() if n or name in ("drafted", "bound")}
    header = (HERE / "defaults" / f"{pid}.yaml").read_text(encoding="utf-8")
    said = ", ".join(f"{k} {v}" for k, v in counts.items())
    text = header.replace("{counts}", said)
    text += yaml.safe_dump({"datasets": datasets}, allow_unicode=True, sort_keys=False, width=120)
    (spec_path.parent / "catalog.yaml").write_text(text, encoding="utf-8")
    print(f"{pid}: {said}", file=sys.stderr)


if __name__ == "__main__":
    main()
