"""Write the law platform's catalog (specs/platforms/law/catalog.yaml) from the guide draft of this folder.

    python pending/catalogs/law/bind.py          # catalog_add.yaml + root_keys.yaml -> specs/platforms/law/catalog.yaml
    kopa-gen build && python pending/catalogs/law/bind.py --examples     # each dataset's query example, from its rows

What is bound, and what is not (counted on stderr and in the catalog's header):
- the paged searches (`lawSearch.do?target=X`, with query, display and page) whose answer's root and item element
  names a live probe saw (root_keys.yaml; for the ministries' interpretations and the special administrative
  appeals, the names promoted for their whole family);
- a variant of another target (`&mobileYn=Y`, `&lj=jo`) is left out: the sandbox tells operations apart by their
  path's fixed query values, and these share their target with the bound one;
- a row holds the guide's response fields, less the search head the envelope sends (target, 키워드, section,
  totalCnt, page): `<x> id` is the item element's `id` attribute (the position of the row in the whole answer), and
  the spaces the guide writes inside a name (`법령해석 상세링크`) are dropped, as the other copy of the guide and the
  bound operations write them (unconfirmed against a live answer);
- `query` searches the row's name (안건명, 사건명, ...; the first of those the row has), as the bound searches do;
  the other search parameters (dates, codes, sort) are left out: the guide names no field they select on.
Each dataset keeps the draft's provenance (docs where two copies of the guide agree, else one-source); the element
names rest on one probe, which the header says.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
HEAD = {"target", "키워드", "section", "totalCnt", "page", "numOfRows", "resultCode", "resultMsg"}
NAMES = ("안건명", "사건명", "법령명한글", "법령명", "법령용어명", "조약명", "신구법명", "제목", "사건")
FAMILIES = {"CgmExpc": "cgmExpc", "Decc": "decc"}  # root -> item promoted for the whole family
LAW = (  # the law's version in force today (law_current_rows, a view, is not there yet when rows are synthesised)
    '(SELECT v.{column} FROM law_versions v WHERE v.법령ID = "{table}".법령ID '
    "AND v.시행일자 <= (SELECT today_ymd FROM kopa_world) ORDER BY v.버전 LIMIT 1)"
)
ANY_LAW = (
    "(SELECT l.법령명한글 FROM law_names l WHERE l.rowid = 1 + (_n * 7) % (SELECT count(*) FROM law_names))"
)
OWN_LAW = (  # the n-th (cycling) of the laws the ministry is responsible for; NULL when the world holds none of them
    "(SELECT l.법령명한글 FROM law_names l WHERE l.소관부처명 = '{body}' AND "
    "(SELECT count(*) FROM law_names y WHERE y.소관부처명 = '{body}' AND y.rowid < l.rowid) = "
    "_n % max(1, (SELECT count(*) FROM law_names z WHERE z.소관부처명 = '{body}')))"
)
ARTICLE_QUESTION = (  # a question to a ministry is about a law it is responsible for, where the world has one
    "'「' || COALESCE("
    + OWN_LAW
    + ", "
    + ANY_LAW
    + ") || '」 제' || (1 + _n % 30) || '조의 해석에 관한 질의 (합성)'"
)
# What a synthesised row's fields hold, where the rules from a Korean name would write "안건명 1": real shapes
# (dates, numbers, links as the bound searches send them), names drawn from the world's laws, the deciding body as
# the target's name says. Values are synthetic; the codes are in no official list.
CASES = [
    "영업정지처분 취소청구",
    "과징금부과처분 취소청구",
    "정보공개거부처분 취소청구",
    "운전면허취소처분 취소청구",
    "건축허가거부처분 취소청구",
    "이행강제금부과처분 취소청구",
    "국가유공자등록거부처분 취소청구",
    "종합소득세 부과처분 취소청구",
]
AUTHORITIES = [
    "서울특별시 강남구청장",
    "경기도지사",
    "부산광역시장",
    "서울지방경찰청장",
    "국세청장",
    "국가보훈부장관",
    "인천광역시 서구청장",
]
ASKERS = {
    "민원인": "",
    "서울특별시": "6110000",
    "경기도": "6410000",
    "부산광역시": "6260000",
    "대구광역시": "6270000",
    "충청남도": "6440000",
}
TERMS = [
    "선의",
    "악의",
    "하자",
    "채권",
    "채무",
    "무효",
    "취소",
    "추인",
    "대리",
    "표현대리",
    "소멸시효",
    "기한의 이익",
    "불법행위",
    "부당이득",
    "사무관리",
    "공탁",
    "상계",
    "경개",
    "면제",
    "혼동",
]
COUNTRIES = [
    "미합중국",
    "일본국",
    "중화인민공화국",
    "독일연방공화국",
    "프랑스공화국",
    "캐나다",
    "오스트레일리아",
    "베트남사회주의공화국",
]
RESULTS = {"인용": "01", "기각": "02", "각하": "03", "일부인용": "04"}
AFTER = {
    "의결일자": ("처분일자", 60, 400),
    "발효일자": ("서명일자", 30, 300),
    "관보게제일자": ("발효일자", 1, 20),
}
"""A date that follows another of the row: (the earlier field, fewest days after, most days after)."""


def gens(fields: list[dict[str, Any]], target: str, tool: str, body: str) -> None:
    """Give each field its generator (see the rules above); `body` is the deciding body the summary names."""
    table = f"auto_{tool}"
    names = [f["name"] for f in fields]
    serial = next((n for n in names if n.endswith("일련번호")), None) or next(
        (n for n in names if n.endswith("ID") and n != "법령ID"), None
    )
    start = 100001 + 10000 * (sum(map(ord, target)) % 89)  # a target's serials apart from another's
    for f in fields:
        name = f["name"]
        gen: dict[str, Any] | None = None
        if name == "id" or ("법령ID" in names and name in NAMES_HELD):
            continue  # the position; a law's name and ministry come from the law its 법령ID names (world.yaml)
        if "법령ID" in names and name in CURRENT_HELD:  # the version in force of that law
            gen = {"sql": LAW.format(column=name, table=table)}
        elif "법령ID" in names and name == "현행연혁코드":
            gen = {"value": "현행"}
        elif "법령ID" in names and name == "자법타법여부":
            gen = {"value": ""}
        elif "법령ID" in names and name == "법령상세링크":
            serial_now = LAW.format(column="법령일련번호", table=table)
            gen = {
                "sql": f"'/DRF/lawService.do?OC=test&target=law&MST=' || {serial_now} || '&type=HTML&mobileYn='"
            }
        elif name == serial or (name.endswith("ID") and name != "법령ID"):
            gen = {"seq": start, "step": 3}
        elif name == "법령명" and "법령ID" in names:
            gen = {"sql": f'(SELECT n.법령명한글 FROM law_names n WHERE n.법령ID = "{table}".법령ID)'}
        elif name.endswith(("상세링크", "상세검색")):
            gen = {
                "sql": f"'/DRF/lawService.do?OC=test&target={target}&ID=' || \"{serial or '_n'}\" || '&type=HTML'"
            }
        elif name in AFTER:  # a decision follows its disposition, a treaty's entry into force its signature
            first, low, high = AFTER[name]
            day = f"substr({first}, 1, 4) || '-' || substr({first}, 5, 2) || '-' || substr({first}, 7, 2)"
            gen = {
                "sql": f"strftime('%Y%m%d', date({day}, '+' || ({low} + _n * 37 % ({high} - {low})) || ' days'))"
            }
        elif name == "해석기관코드":  # the ministry's code where the world's laws name it
            gen = {
                "sql": f"COALESCE((SELECT n.소관부처코드 FROM law_names n WHERE n.소관부처명 = '{body}' LIMIT 1), '')"
            }
        elif name == "법령명영문":
            gen = {"sql": "'(synthetic English title of law ' || 법령ID || ')'"}
        elif name == "사전구분코드":
            gen = {
                "choice": ["011401", "011402", "011403"]
            }  # 법령용어사전, 법령정의사전, 법령한영사전 (the guide)
        elif name == "법령종류코드":
            gen = {"choice": {"010101": 4, "010102": 1}}  # 법령, 행정규칙 (the guide)
        elif name == "조약구분명":
            gen = {"choice": {"양자조약": 4, "다자조약": 1}}
        elif name == "조약구분코드":
            gen = {
                "sql": "CASE 조약구분명 WHEN '양자조약' THEN '1' ELSE '2' END"
            }  # as the cls parameter codes them
        elif name == "조약번호":
            gen = {"sql": "CAST(1000 + _n AS TEXT)"}
        elif name == "데이터기준일시":
            gen = {"date": ["today-7", "today-1"], "format": "%Y%m%d%H%M%S"}
        elif name.endswith("일자"):
            gen = {"date": ["2012-01-01", "today-450"], "format": "%Y%m%d"}  # room for the dates that follow
        elif name == "안건명":
            gen = {"sql": ARTICLE_QUESTION.format(body=body)}
        elif name == "신구법명":
            gen = {"sql": ANY_LAW}
        elif name == "사건명":
            gen = {"choice": CASES}
        elif name in ("안건번호", "사건번호", "재결번호", "청구번호"):
            gen = {"sql": "printf('%04d-%05d', 2012 + _n % 14, 100 + _n)"}
        elif name in ("해석기관명", "재결청"):
            gen = {"value": body}
        elif name == "질의기관명":
            gen = {"choice": list(ASKERS)}
        elif name == "질의기관코드":
            gen = {
                "sql": "CASE 질의기관명 "
                + " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in ASKERS.items())
                + " END"
            }
        elif name == "처분청":
            gen = {"choice": AUTHORITIES}
        elif name == "재결구분명":
            gen = {"choice": {"기각": 5, "인용": 2, "각하": 2, "일부인용": 1}}
        elif name == "재결구분코드":
            gen = {
                "sql": "CASE 재결구분명 "
                + " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in RESULTS.items())
                + " END"
            }
        elif name == "법령용어명":
            gen = {"choice": TERMS}
        elif name == "조약명":
            gen = {
                "sql": "'대한민국 정부와 ' || "
                + _pick(COUNTRIES)
                + " || ' 정부 간의 협정 (합성 ' || _n || ')'"
            }
        elif name == "국가번호":
            gen = {"integer": [1, 250]}
        if gen is not None:
            f["gen"] = gen


def _pick(values: list[str]) -> str:
    return (
        "CASE _n % "
        + str(len(values))
        + " "
        + " ".join(f"WHEN {i} THEN '{v}'" for i, v in enumerate(values))
        + " END"
    )


NAMES_HELD = {
    "법령명한글",
    "법령약칭명",
    "법령구분명",
    "소관부처코드",
    "소관부처명",
}  # law_names, the entity's table
CURRENT_HELD = {"법령일련번호", "공포일자", "공포번호", "제개정구분명", "시행일자"}  # law_versions


def bind(
    draft: list[dict[str, Any]], keys: dict[str, dict[str, str | None]]
) -> tuple[list[Any], dict[str, int]]:
    counts = {"drafted": 0, "not a paged search": 0, "a variant": 0, "names unseen": 0, "bound": 0}
    out: list[Any] = []
    for ds in draft:
        counts["drafted"] += 1
        params = {p["name"]: p for p in ds["params"]}
        if ds["kind"] != "list" or not {"query", "display", "page"} <= set(params):
            counts["not a paged search"] += 1
            continue
        if "&" in ds["code"]:
            counts["a variant"] += 1
            continue
        found = keys.get(ds["target"]) or {}
        root = found.get("root")
        item = found.get("item") or FAMILIES.get(str(root))
        if not root or not item:
            counts["names unseen"] += 1
            continue
        fields: list[dict[str, Any]] = []
        for f in ds["fields"]:
            if f["name"] in HEAD:
                continue
            if re.fullmatch(r"\S+ id", f["name"]) or f["name"] == "id":
                fields.append(
                    {
                        "name": "id",
                        "description": "결과 순번 (XML에서는 항목 요소의 id 속성)",
                        "attribute": True,
                        "gen": {"sql": "NULL"},
                    }
                )
                continue
            name = f["name"].replace(" ", "")
            if any(g["name"] == name for g in fields):
                continue
            fields.append({"name": name, "description": f.get("description") or name})
        named = next((n for n in NAMES if any(f["name"] == n for f in fields)), None)
        if named is None:
            counts["names unseen"] += 1
            continue
        body = ds["summary"].split(" 법령해석")[0].split(" 특별행정심판")[0]
        gens(fields, ds["target"], ds["tool"], "중앙행정심판위원회" if ds["target"] == "decc" else body)
        # the weakest fact decides: the element names rest on one probe, whatever the guide's copies agree on
        provenance = {
            "source": f"{ds['provenance']['source']} ({ds['provenance']['verified']}: parameters and fields); "
            "root and item elements: StatPan/lawpy's live probe (pending/catalogs/law/root_keys.yaml)",
            "retrieved": ds["provenance"]["retrieved"],
            "verified": "one-source",
        }
        out.append(
            {
                "code": ds["target"],
                "tool": ds["tool"],
                "summary": ds["summary"],
                "description": ds.get("description") or ds["summary"],
                "params": [
                    {
                        "name": "query",
                        "description": params["query"].get("description", ""),
                        "field": named,
                        "match": "contains",
                    },
                    *(
                        [
                            {
                                "name": "dicKndCd",
                                "description": params["dicKndCd"].get("description", ""),
                                "field": "법령종류코드",
                                "enum": ["010101", "010102"],
                            }
                        ]
                        if "dicKndCd" in params and any(f["name"] == "법령종류코드" for f in fields)
                        else []
                    ),
                ],
                "fields": fields,
                "envelope": {"root": str(root), "item": str(item)},
                "provenance": provenance,
            }
        )
        counts["bound"] += 1
    return out, counts


def examples() -> None:
    """Second pass, after `kopa-gen build`: each dataset's `query` example is the name in its first synthesised row
    (the world is seeded, so the same catalog gives the same example), so that every tool finds data with it."""
    import sqlite3

    from kopa_gen.project import load_project
    from kopa_gen.world.build import ensure_world
    from kopa_gen.world.lazy import open_world

    path = REPO / "specs" / "platforms" / "law" / "catalog.yaml"
    head, _, body = path.read_text(encoding="utf-8").partition("datasets:\n")
    catalog = yaml.safe_load("datasets:\n" + body)
    project = load_project(REPO)
    platform = project.platform("law")
    db = open_world(ensure_world(project.world).path)  # a catalog table is made at its first query
    for ds in catalog["datasets"]:
        op = platform.operation(ds["tool"])
        assert op.kopa.source is not None
        column = next(f.column for f in op.kopa.source.filters if f.param == "query")
        row = db.execute(f'SELECT "{column}" FROM "{op.kopa.source.table}" ORDER BY rowid LIMIT 1').fetchone()
        value = str(row[0])  # a question about a law is asked for by the law's name, as a person would
        ds["examples"] = {"query": [value[1:].split("」")[0] if value.startswith("「") else value]}
    db.close()
    path.write_text(
        head + yaml.safe_dump(catalog, allow_unicode=True, sort_keys=False, width=120), encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--examples", action="store_true", help="write each dataset's query example from the built world's rows"
    )
    if parser.parse_args().examples:
        examples()
        return
    draft = yaml.safe_load((HERE / "catalog_add.yaml").read_text(encoding="utf-8"))["datasets"]
    keys = yaml.safe_load((HERE / "root_keys.yaml").read_text(encoding="utf-8"))["targets"]
    datasets, counts = bind(draft, keys)
    said = ", ".join(f"{k} {v}" for k, v in counts.items())
    header = (HERE / "defaults.yaml").read_text(encoding="utf-8").replace("{counts}", said)
    text = header + yaml.safe_dump({"datasets": datasets}, allow_unicode=True, sort_keys=False, width=120)
    (REPO / "specs" / "platforms" / "law" / "catalog.yaml").write_text(text, encoding="utf-8")
    print(f"law: {said}", file=sys.stderr)


if __name__ == "__main__":
    main()
