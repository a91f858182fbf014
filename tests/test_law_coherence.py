"""One document, one identity: on 국가법령정보센터 (platform `law`) a law, an ordinance (자치법규), a precedent, an
administrative rule, an interpretation or a constitutional decision is one id with one set of facts (name, kind,
field, the government or ministry behind it, dates) on every tool that shows it: the search lists, the detail
services and their nested 기본정보, the version lists. Versions of a law or an ordinance share its identity, come
in order, and the lists show the one in force. Read over all rows from the world tables and views the tools are
served from (each operation's `x-kopa.source` and `x-kopa.nested`), so a new tool on the same tables is checked
too."""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise

import pytest

from kopa_gen.project import Project
from tests.conftest import repository_project

PID = "law"
pytestmark = pytest.mark.skipif(
    PID not in {p.id for p in repository_project().platforms}, reason="no law platform in this project"
)

# The names a nested 기본정보 gives the list's fields (lawService.do answers 법령명_한글 where lawSearch.do answers
# 법령명한글), and the detail's name of the precedent serial number.
ALIASES = {
    "법령명_한글": "법령명한글",
    "법령명약칭": "법령약칭명",
    "법종구분": "법령구분명",
    "소관부처": "소관부처명",
    "제개정구분": "제개정구분명",
    "현행여부": "현행연혁코드",
    "판례정보일련번호": "판례일련번호",
}

# Each identity and the facts it fixes wherever a tool shows them beside it. A law's or an ordinance's versions
# differ in their dates and numbers, so those are facts of the version's serial number, not of the document's id.
IDENTITIES: dict[str, tuple[str, ...]] = {
    "법령ID": ("법령명한글", "법령약칭명", "법령구분명", "소관부처코드", "소관부처명"),
    "법령일련번호": (
        "법령ID",
        "법령명한글",
        "법령약칭명",
        "법령구분명",
        "소관부처코드",
        "소관부처명",
        "공포일자",
        "공포번호",
        "제개정구분명",
        "시행일자",
        "현행연혁코드",
    ),
    "자치법규ID": ("자치법규명", "자치법규종류", "자치법규분야명", "지자체코드", "지자체기관명"),
    "자치법규일련번호": (
        "자치법규ID",
        "자치법규명",
        "자치법규종류",
        "자치법규분야명",
        "지자체코드",
        "지자체기관명",
        "공포일자",
        "공포번호",
        "시행일자",
        "제개정구분명",
    ),
    "판례일련번호": ("사건명", "사건번호", "선고일자", "법원명", "법원종류코드", "사건종류명", "판결유형"),
    "행정규칙ID": ("행정규칙명", "행정규칙종류", "소관부처명", "소관부처코드"),
    "행정규칙일련번호": (
        "행정규칙ID",
        "행정규칙명",
        "행정규칙종류",
        "발령일자",
        "발령번호",
        "소관부처명",
        "제개정구분명",
        "시행일자",
    ),
    "법령해석례일련번호": ("안건명", "안건번호", "질의기관명", "회신기관명", "회신일자"),
    "헌재결정례일련번호": ("사건번호", "사건명", "종국일자"),
}

# A name (or case number) and the one id it stands for, on the tools listing the id: two rows with the same name
# are the same document.
NAMES = {
    "법령ID": ("법령명한글",),
    "자치법규ID": ("자치법규명",),
    "행정규칙ID": ("행정규칙명",),
    "판례일련번호": ("사건번호",),
    "법령해석례일련번호": ("안건번호", "안건명"),
    "헌재결정례일련번호": ("사건번호",),
}


@dataclass(frozen=True)
class Served:
    """A world table or view as one tool serves it: a list's or a detail's rows, or a nested sub-list's items;
    `columns` maps the canonical field name to the table's column for every field the tool sends."""

    tool: str
    table: str
    columns: dict[str, str]


def _table_columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}


def _served(project: Project, db: sqlite3.Connection) -> list[Served]:
    """Every table the law tools read, with the fields each shows (writeOnly ones included: they filter, so they
    are the same facts)."""
    platform = next(p for p in project.platforms if p.id == PID)
    out: list[Served] = []
    for op in platform.operations:
        if op.kopa.source is None:
            continue
        have = _table_columns(db, op.kopa.source.table)
        out.append(
            Served(op.tool, op.kopa.source.table, {ALIASES.get(f, f): f for f in op.row_fields if f in have})
        )
        for entry in op.kopa.nested:
            items = op.row_props.get(entry.field, {}).get("items", {}).get("properties", {})
            have = _table_columns(db, entry.table)
            fields = {ALIASES.get(f, f): f for f in items if f in have and items[f].get("type") != "array"}
            out.append(Served(f"{op.tool}.{entry.field}", entry.table, fields))
    return out


def _today(db: sqlite3.Connection) -> str:
    return str(db.execute("SELECT today_ymd FROM kopa_world").fetchone()[0])


@pytest.fixture(scope="module")
def db(world_db: sqlite3.Connection) -> sqlite3.Connection:
    return world_db


@pytest.fixture(scope="module")
def served(project: Project, db: sqlite3.Connection) -> list[Served]:
    return _served(project, db)


def _source(served: list[Served], tool: str) -> Served:
    return next(s for s in served if s.tool == tool)


def _facts(db: sqlite3.Connection, s: Served, key: str, facts: list[str]) -> dict[str, set[tuple[str, ...]]]:
    """id -> the sets of facts its rows in one served table show (as text, blank for NULL)."""
    cols = ", ".join(f'"{s.columns[f]}"' for f in [key, *facts])
    out: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for row in db.execute(f'SELECT DISTINCT {cols} FROM "{s.table}"'):
        out[str(row[0])].add(tuple("" if v is None else str(v) for v in row[1:]))
    return out


def test_every_id_shows_one_set_of_facts_on_every_tool(db: sqlite3.Connection, served: list[Served]) -> None:
    """Inside one tool's rows an id never carries two values of a fact, and every two tools showing the same id
    agree on every fact both show."""
    problems: list[str] = []
    compared = 0
    for key, facts in IDENTITIES.items():
        showing = [s for s in served if key in s.columns]
        assert len(showing) >= 2, f"{key}: shown by {[s.tool for s in showing]} only"
        seen: dict[
            tuple[str, str], tuple[str, str]
        ] = {}  # (fact, id) -> (the first tool showing it, its value)
        read: set[tuple[str, tuple[str, ...]]] = set()
        for s in showing:
            own = [f for f in facts if f in s.columns]
            if not own or (s.table, tuple(s.columns[f] for f in [key, *own])) in read:
                continue  # nothing to compare, or the same columns of the same table read already
            read.add((s.table, tuple(s.columns[f] for f in [key, *own])))
            for ident, values in _facts(db, s, key, own).items():
                if len(values) > 1:
                    problems.append(f"{s.tool}: {key}={ident} shows several {own}: {sorted(values)[:2]}")
                    continue
                (one,) = values
                for fact, value in zip(own, one, strict=True):
                    tool, shown = seen.setdefault((fact, ident), (s.tool, value))
                    if tool != s.tool:
                        compared += 1
                        if shown != value:
                            problems.append(
                                f"{key}={ident}: {fact} is {shown!r} on {tool} but {value!r} on {s.tool}"
                            )
    assert compared > 10_000
    assert problems[:10] == []


def test_one_name_is_one_document(db: sqlite3.Connection, served: list[Served]) -> None:
    """A law's, an ordinance's or a rule's name, and a case or 안건 number, stand for one id on every tool: an
    ordinance name is never given to three 자치법규ID with three fields."""
    problems: list[str] = []
    for key, names in NAMES.items():
        for s in served:
            if key not in s.columns:
                continue
            for name in names:
                if name not in s.columns:
                    continue
                n, k = s.columns[name], s.columns[key]
                wrong = db.execute(
                    f'SELECT "{n}", count(DISTINCT "{k}") FROM "{s.table}" GROUP BY "{n}" '
                    f'HAVING count(DISTINCT "{k}") > 1 LIMIT 1'
                ).fetchone()
                if wrong is not None:
                    problems.append(f"{s.tool}: {name} {wrong[0]!r} names {wrong[1]} different {key}")
    assert problems == []


def _ordinance_tables(served: list[Served]) -> tuple[Served, Served]:
    """The search list, and the detail's 기본정보 with its government's code (its table's column: the code the
    list shows beside the same 자치법규ID, the first test checks, and the list's org filter reads)."""
    listed = _source(served, "law_search_ordinances")
    detail = _source(served, "law_get_ordinance.자치법규기본정보")
    return listed, Served(
        detail.tool, detail.table, {**detail.columns, "지자체코드": listed.columns["지자체코드"]}
    )


def test_ordinance_versions_share_the_identity_and_the_list_shows_the_latest(
    db: sqlite3.Connection, served: list[Served]
) -> None:
    """The detail service serves every version (one per 자치법규일련번호); the versions of one 자치법규ID come one
    after another (제정 first and only first, each later one promulgated later, in force from its promulgation on,
    numbered on by its government in the same order), and the search list shows exactly the latest version of
    each 자치법규."""
    listed, detail = _ordinance_tables(served)
    c = detail.columns
    rows = db.execute(
        f'SELECT "{c["자치법규ID"]}", "{c["자치법규일련번호"]}", "{c["공포일자"]}", "{c["시행일자"]}", '
        f'"{c["제개정구분명"]}", "{c["지자체코드"]}", "{c["자치법규종류"]}", "{c["공포번호"]}" FROM "{detail.table}"'
    ).fetchall()
    versions: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
    numbering: dict[tuple[str, str], list[tuple[str, int, str]]] = defaultdict(list)
    serials = set()
    for ident, mst, promulgated, effective, kind_of_change, government, kind, number in rows:
        versions[str(ident)].append((str(promulgated), str(mst), str(effective), str(kind_of_change)))
        numbering[(str(government), str(kind))].append((str(promulgated), int(number), str(mst)))
        serials.add(str(mst))
    assert len(serials) == len(rows)
    revised = 0
    problems: list[str] = []
    for ident, vs in versions.items():
        vs.sort()
        dates = [v[0] for v in vs]
        if len(set(dates)) != len(dates):
            problems.append(f"{ident}: two versions promulgated the same day")
        if [v[3] == "제정" for v in vs] != [True] + [False] * (len(vs) - 1):
            problems.append(f"{ident}: 제정 is not its first version and only that: {[v[3] for v in vs]}")
        if any(v[2] < v[0] for v in vs):
            problems.append(f"{ident}: a version in force before it was promulgated")
        revised += len(vs) > 1
    assert revised > 1000, "no ordinance has a history"
    for (government, kind), numbers in numbering.items():
        numbers.sort()
        if any(b[1] <= a[1] for a, b in pairwise(numbers)):
            problems.append(f"{government} {kind}: 공포번호 do not grow with 공포일자")

    lc = listed.columns
    shown = {
        str(i): str(m)
        for i, m in db.execute(
            f'SELECT "{lc["자치법규ID"]}", "{lc["자치법규일련번호"]}" FROM "{listed.table}"'
        )
    }
    total = db.execute(f'SELECT count(*) FROM "{listed.table}"').fetchone()[0]
    assert total == len(shown) == len(versions), "the list shows one row per 자치법규, every one of them"
    for ident, vs in versions.items():
        if shown.get(ident) != vs[-1][1]:
            problems.append(
                f"{ident}: the list shows MST {shown.get(ident)}, its latest version is {vs[-1][1]}"
            )
    assert problems[:5] == []


def test_ordinances_are_enacted_by_the_governments_of_the_district_table(
    project: Project, db: sqlite3.Connection, served: list[Served]
) -> None:
    """The government of every ordinance is a current 시도 or autonomous 시군구 of the legal-district tool (the
    same name for the same code, one code per name, no 출장소 or 행정시), and none of its ordinances is older
    than that code."""
    region = next(p for p in project.platforms if p.id == "region")
    districts = region.operation("region_list_legal_districts").source.table
    _, detail = _ordinance_tables(served)
    c = detail.columns
    governments = db.execute(
        f'SELECT DISTINCT o."{c["지자체코드"]}", o."{c["지자체기관명"]}" FROM "{detail.table}" o'
    ).fetchall()
    names = [n for _, n in governments]
    assert len(names) == len(set(names)) > 200
    problems = []
    for code, name in governments:
        found = db.execute(
            f'SELECT locatadd_nm, adpt_de FROM "{districts}" WHERE region_cd = ?', (code,)
        ).fetchone()
        if found is None or found[0] != name:
            problems.append(f"{code} {name}: the district tool says {found}")
            continue
        if "출장" in name or re.search(r"출$", name) or (code[:2] in ("36", "50") and code[2:5] != "000"):
            problems.append(f"{code} {name}: no government that enacts ordinances")
        older = db.execute(
            f'SELECT count(*) FROM "{detail.table}" WHERE "{c["지자체코드"]}" = ? AND "{c["공포일자"]}" < ?',
            (code, found[1]),
        ).fetchone()[0]
        if older:
            problems.append(f"{name}: {older} versions older than its code ({found[1]})")
    assert problems == []


def test_ordinance_kind_follows_the_name(db: sqlite3.Connection, served: list[Served]) -> None:
    """A 규칙 is named ... 규칙 and a 조례 ... 조례, and the name starts with the government's."""
    listed, _ = _ordinance_tables(served)
    c = listed.columns
    wrong = db.execute(
        f'SELECT "{c["자치법규명"]}", "{c["자치법규종류"]}" FROM "{listed.table}" '
        f"WHERE (\"{c['자치법규종류']}\" = '규칙') != (\"{c['자치법규명']}\" LIKE '%규칙') "
        f'OR instr("{c["자치법규명"]}", "{c["지자체기관명"]}" || \' \') != 1 LIMIT 3'
    ).fetchall()
    assert wrong == []


def test_law_versions_come_in_order_and_the_list_shows_the_one_in_force(
    db: sqlite3.Connection, served: list[Served]
) -> None:
    """Per 법령ID the 시행일 versions (target=eflaw) are promulgated and come into force in one order; exactly
    one is 현행 (the latest already in force), later ones are 시행예정, earlier ones 연혁; the current list
    (target=law) and the current document show that one."""
    today = _today(db)
    ef = _source(served, "law_search_effective_laws")
    cur = _source(served, "law_search_laws")
    c = ef.columns
    versions: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
    for ident, mst, promulgated, effective, state in db.execute(
        f'SELECT "{c["법령ID"]}", "{c["법령일련번호"]}", "{c["공포일자"]}", "{c["시행일자"]}", '
        f'"{c["현행연혁코드"]}" FROM "{ef.table}"'
    ):
        versions[str(ident)].append((str(effective), str(promulgated), str(mst), str(state)))
    current = {
        str(i): str(m)
        for i, m in db.execute(
            f'SELECT "{cur.columns["법령ID"]}", "{cur.columns["법령일련번호"]}" FROM "{cur.table}"'
        )
    }
    problems = []
    for ident, vs in versions.items():
        vs.sort()
        if [v[1] for v in vs] != sorted(v[1] for v in vs):
            problems.append(f"{ident}: promulgated in another order than in force")
        in_force = [v for v in vs if v[0] <= today]
        expected = (
            ["연혁"] * (len(in_force) - 1)
            + ["현행"] * bool(in_force)
            + ["시행예정"] * (len(vs) - len(in_force))
        )
        if [v[3] for v in vs] != expected:
            problems.append(f"{ident}: states {[v[3] for v in vs]}, expected {expected}")
        if in_force and current.get(ident) != in_force[-1][2]:
            problems.append(
                f"{ident}: the current list shows {current.get(ident)}, in force is {in_force[-1][2]}"
            )
    assert set(current) == set(versions)
    document = _source(served, "law_get_law")
    shown = {
        str(i): str(m)
        for i, m in db.execute(
            f'SELECT "{document.columns["법령ID"]}", "{document.columns["법령일련번호"]}" FROM "{document.table}"'
        )
    }
    assert shown == current
    assert problems == []


def _law_names(db: sqlite3.Connection, served: list[Served]) -> dict[str, tuple[str, str]]:
    """Every current law's name -> (법령ID, 소관부처명), as law_search_laws lists them."""
    cur = _source(served, "law_search_laws")
    c = cur.columns
    return {
        str(n): (str(i), str(m))
        for n, i, m in db.execute(
            f'SELECT "{c["법령명한글"]}", "{c["법령ID"]}", "{c["소관부처명"]}" FROM "{cur.table}"'
        )
    }


def test_case_law_cites_laws_that_exist_and_is_not_older_than_them(
    db: sqlite3.Connection, served: list[Served]
) -> None:
    """Precedents, interpretations, decisions and 행정규칙 name a current law (in 참조조문, 안건명, 사건명, the
    rule's name), say the same law and article throughout, keep its ministry, carry case numbers that fit their
    court and date, and are dated no earlier than the law came into force (law_enactments)."""
    laws = _law_names(db, served)
    first = {
        str(i): str(d).replace("-", "") for i, d in db.execute("SELECT 법령ID, 시행일 FROM law_enactments")
    }
    problems: list[str] = []

    def check_date(what: str, law: str, day: str) -> None:
        ident = laws[law][0]
        if ident in first and day.replace(".", "") < first[ident]:
            problems.append(f"{what}: dated {day}, before 「{law}」 came into force ({first[ident]})")

    prec = _source(served, "law_get_precedent")
    c = prec.columns
    letters = {
        "대법원": ("도", "다", "두"),
        "고등법원": ("노", "나", "누"),
        "지방법원": ("고합", "가합", "구합"),
    }
    for case, name, number, day, court, kind, cited, held in db.execute(
        f'SELECT "{c["판례일련번호"]}", "{c["사건명"]}", "{c["사건번호"]}", "{c["선고일자"]}", "{c["법원명"]}", '
        f'"{c["사건종류명"]}", "{c["참조조문"]}", "{c["판시사항"]}" FROM "{prec.table}"'
    ):
        found = re.fullmatch(r"「(.+)」 (제\d+조)", cited)
        if found is None or found[1] not in laws:
            problems.append(f"precedent {case}: 참조조문 {cited!r} names no current law")
            continue
        law, article = found[1], found[2]
        if f"「{law}」 {article}" not in held or (kind == "형사" and name != f"{law}위반"):
            problems.append(f"precedent {case}: 사건명 {name!r} or 판시사항 cites another law than {cited!r}")
        level = next(k for k in letters if court.endswith(k))
        own = letters[level][{"형사": 0, "민사": 1}.get(kind, 2)]
        if not re.fullmatch(rf"{int(day[:4]) - 1}{own}\d+", number):
            problems.append(f"precedent {case}: 사건번호 {number} does not fit {court} {kind} {day}")
        check_date(f"precedent {case}", law, day)

    expc = _source(served, "law_get_interpretation")
    c = expc.columns
    for case, title, number, day in db.execute(
        f'SELECT "{c["법령해석례일련번호"]}", "{c["안건명"]}", "{c["안건번호"]}", "{c["회신일자"]}" FROM "{expc.table}"'
    ):
        found = re.match(r"「(.+?)」 제\d+조", title)
        if found is None or found[1] not in laws:
            problems.append(f"interpretation {case}: {title!r} names no current law")
            continue
        if not number.startswith(day[2:4] + "-"):
            problems.append(f"interpretation {case}: 안건번호 {number} is not of {day}")
        check_date(f"interpretation {case}", found[1], day)

    detc = _source(served, "law_get_constitutional_decision")
    c = detc.columns
    for case, name, day in db.execute(
        f'SELECT "{c["헌재결정례일련번호"]}", "{c["사건명"]}", "{c["종국일자"]}" FROM "{detc.table}"'
    ):
        law = next((n for n in sorted(laws, key=len, reverse=True) if name.startswith(n + " 제")), None)
        if law is None:
            problems.append(f"decision {case}: {name!r} names no current law")
            continue
        check_date(f"decision {case}", law, day)

    rules = _source(served, "law_search_admin_rules")
    c = rules.columns
    for serial, name, ministry, day in db.execute(
        f'SELECT "{c["행정규칙일련번호"]}", "{c["행정규칙명"]}", "{c["소관부처명"]}", "{c["발령일자"]}" FROM "{rules.table}"'
    ):
        law = next((n for n in sorted(laws, key=len, reverse=True) if name.startswith(n + " ")), None)
        if law is None or laws[law][1] != ministry:
            problems.append(f"rule {serial}: {name!r} ({ministry}) is no rule of a current law's ministry")
            continue
        check_date(f"rule {serial}", law, day)
    assert problems == []
