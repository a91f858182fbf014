"""One bill, one set of facts; one plenary vote, one tally; one roster per committee. The National Assembly's
datasets (`assembly`) walked as an agent sees them, through a Session over the sandbox world, over all rows: every
bill list in full, the member votes of every voted bill, the per-bill datasets of a fixed sample of bills, every
committee's roster. The datasets spell one fact differently (BILL_NAME = BILL_NM, PROPOSE_DT = PPSL_DT, COMMITTEE =
JRCMIT_NM ...); FACTS below groups the names, and a bill has one value per group in every row of every tool."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.world.build import BuiltWorld
from tests.conftest import repository_project

pytestmark = pytest.mark.skipif(
    "assembly" not in {p.id for p in repository_project().platforms},
    reason="the assembly platform is not in this project",
)

Row = dict[str, str]
PAGE = 1000  # the hub's largest pSize
AGE = {"AGE": "22"}  # the 22nd assembly: the datasets that require a 대수 take one of these
ERA = {"ERACO": "제22대"}

# The field names of one fact of a bill, as the datasets spell it.
FACTS: dict[str, tuple[str, ...]] = {
    "name": ("BILL_NAME", "BILL_NM", "LAW_TITLE"),
    "number": ("BILL_NO",),
    "kind": ("BILL_KIND", "BILL_KND", "BILL_KIND_CD"),
    "proposer kind": ("PROPOSER_KIND", "PPSR_KIND", "PPSR_KND", "PROPOSER_KIND_CD"),
    "proposer": ("PROPOSER", "PPSR"),
    "lead proposer": ("RST_PROPOSER",),
    "lead proposer code": ("RST_MONA_CD",),
    "co-proposers": ("PUBL_PROPOSER",),
    "proposed": ("PROPOSE_DT", "PPSL_DT"),
    "session proposed": ("PPSL_SESS",),
    "committee": ("COMMITTEE", "CURR_COMMITTEE", "JRCMIT_NM", "COMMITTEE_NM"),
    "committee code": ("COMMITTEE_ID", "CURR_COMMITTEE_ID"),
    "referred": ("COMMITTEE_DT", "JRCMIT_CMMT_DT", "BDG_CMMT_DT", "COMMITTEE_SUBMIT_DT"),
    "presented": ("CMT_PRESENT_DT", "JRCMIT_PRSNT_DT", "COMMITTEE_PRESENT_DT"),
    "committee decided": ("CMT_PROC_DT", "JRCMIT_PROC_DT", "COMMITTEE_PROC_DT"),
    "committee result": ("CMT_PROC_RESULT_CD", "JRCMIT_PROC_RSLT"),
    "법사위 referred": ("LAW_SUBMIT_DT", "LAW_CMMT_DT"),
    "법사위 presented": ("LAW_PRESENT_DT", "LAW_PRSNT_DT"),
    "법사위 decided": ("LAW_PROC_DT",),
    "법사위 result": ("LAW_PROC_RESULT_CD", "LAW_PROC_RSLT"),
    "plenary": ("RGS_PRESENT_DT", "RGS_PRSNT_DT", "RGS_PROC_DT", "RGS_RSLN_DT"),
    "plenary sitting": ("RGS_CONF_NM",),
    "plenary result": ("RGS_CONF_RSLT",),
    "decided": ("PROC_DT",),
    "result": ("PROC_RESULT_CD", "PROC_RESULT", "PROC_RSLT"),
    "sent": ("GVRN_TRSF_DT", "CURR_TRANS_DT"),
    "promulgated": ("PROM_DT", "ANNOUNCE_DT"),
    "promulgation number": ("PROM_NO",),
    "notice ends": ("NOTI_ED_DT",),
    "members": ("MEMBER_TCNT",),
    "votes": ("VOTE_TCNT",),
    "yes": ("YES_TCNT",),
    "no": ("NO_TCNT",),
    "abstain": ("BLANK_TCNT",),
}
# Dated stages in order; a 위원장 bill (the committee's own) has no referral or presentation.
STAGES = (
    ("PPSL_DT", "접수"),
    ("JRCMIT_CMMT_DT", "소관위접수"),
    ("JRCMIT_PRSNT_DT", "소관위상정"),
    ("JRCMIT_PROC_DT", "소관위의결"),
    ("LAW_CMMT_DT", "법사위접수"),
    ("LAW_PRSNT_DT", "법사위상정"),
    ("LAW_PROC_DT", "법사위의결"),
    ("RGS_RSLN_DT", "본회의의결"),
    ("GVRN_TRSF_DT", "정부이송"),
    ("PROM_DT", "공포"),
)
PASSED = ("원안가결", "수정가결")
ALL_BILLS = "assembly_list_all_bills"  # 의안정보 통합: every bill, every stage
SAMPLE = (
    25  # the per-bill datasets are called for every SAMPLE-th bill (and every voted one where it matters)
)


async def rows_of(session: Session, tool: str, args: Mapping[str, Any]) -> list[Row]:
    """Every row of a call, page by page, as the tool gives them."""
    out: list[Row] = []
    page = 1
    while True:
        outcome = await session.call(tool, {**args, "pIndex": page, "pSize": PAGE})
        assert not outcome.is_error, f"{tool}({args}): {outcome.text[:300]}"
        data = outcome.structured
        assert data is not None, tool
        if "record" in data:
            return [data["record"]] if data["record"] else []
        out.extend(data["rows"])
        if len(out) >= data["total_count"] or not data["rows"]:
            assert len(out) == data["total_count"], tool
            return out
        page += 1


def open_session(project: Project) -> Session:
    return Session.open(project, ["assembly"], sandbox=SandboxConfig(limits=False))


def bill_lists(project: Project) -> list[tuple[str, dict[str, str]]]:
    """The tools that list bills with no argument but the 대수: from the spec, every operation whose rows carry
    BILL_ID and whose required arguments are only AGE or ERACO."""
    out = []
    for op in project.platform("assembly").operations:
        required = {p.name for p in op.params if p.required}
        if "BILL_ID" in op.row_fields and required <= {"AGE", "ERACO"}:
            out.append((op.tool, {k: v for k, v in {**AGE, **ERA}.items() if k in required}))
    return out


class Facts:
    """Each bill's value of each fact, and where it was seen first; a second, different value is a problem."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], tuple[str, str, str]] = {}
        self.problems: list[str] = []

    def add(self, tool: str, rows: Iterable[Row], bills: Mapping[str, Row]) -> int:
        checked = 0
        for row in rows:
            bill = row.get("BILL_ID", "")
            if bill not in bills:  # petitions, budgets and hearings have their own ids
                continue
            for fact, names in FACTS.items():
                for name in names:
                    if name not in row:
                        continue
                    checked += 1
                    first = self.seen.setdefault((bill, fact), (row[name], tool, name))
                    if first[0] != row[name] and len(self.problems) < 20:
                        self.problems.append(
                            f"{bill} {fact}: {first[1]}.{first[2]}={first[0]!r} but {tool}.{name}={row[name]!r}"
                        )
        return checked


def tallies(votes: Iterable[Row]) -> Counter[str]:
    return Counter(v["RESULT_VOTE_MOD"] for v in votes)


@pytest.mark.anyio
async def test_every_tool_gives_a_bill_one_value_per_fact(project: Project, world: BuiltWorld) -> None:
    """Every row of every bill list, and the detail, proposers and committee and 법사위 meetings of a sample of
    bills: one name, one date per stage, one committee, one result, one tally per bill, whichever tool shows it
    and whatever it calls the field."""
    facts = Facts()
    async with open_session(project) as session:
        bills = {b["BILL_ID"]: b for b in await rows_of(session, ALL_BILLS, {})}
        assert len(bills) >= 1000
        lists = bill_lists(project)
        assert len(lists) >= 15
        checked = 0
        for tool, args in lists:
            checked += facts.add(tool, await rows_of(session, tool, args), bills)
        sample = sorted(bills, key=lambda b: int(bills[b]["BILL_NO"]))[::SAMPLE]
        for bill in sample:
            for tool in (
                "assembly_get_bill_detail",
                "assembly_list_bill_proposers",
                "assembly_list_bill_committee_meetings",
                "assembly_list_bill_judiciary_meetings",
            ):
                checked += facts.add(tool, await rows_of(session, tool, {"BILL_ID": bill}), bills)
    assert checked > 100_000
    assert facts.problems == []


@pytest.mark.anyio
async def test_every_list_holds_the_bills_its_name_says(project: Project, world: BuiltWorld) -> None:
    """A bill is in the pending list while it has no result, in the processed list once it has one, in the vote
    tally list once it was put to the vote; a member's bills are the bills members proposed."""
    expect: dict[str, Callable[[Row], bool]] = {
        "assembly_list_member_bills": lambda b: b["PPSR_KND"] == "의원",
        "assembly_search_bills": lambda b: True,
        "assembly_list_pending_bills": lambda b: b["result"] == "",
        "assembly_list_processed_bills": lambda b: b["result"] != "",
        "assembly_list_bill_votes": lambda b: b["RGS_RSLN_DT"] != "",
        "assembly_list_plenary_bills": lambda b: b["RGS_RSLN_DT"] != "",
        "assembly_list_committee_pending_bills": lambda b: b["result"] == "" and b["JRCMIT_PROC_DT"] == "",
        "assembly_list_plenary_agenda_bills": lambda b: b["LAW_PROC_DT"] != "" and b["RGS_RSLN_DT"] == "",
        "assembly_list_committee_alternative_bills": lambda b: b["PPSR_KND"] == "위원장",
    }
    async with open_session(project) as session:
        bills = {b["BILL_ID"]: b for b in await rows_of(session, ALL_BILLS, {})}
        searched = {b["BILL_ID"]: b for b in await rows_of(session, "assembly_search_bills", AGE)}
        for bill, row in bills.items():
            row["result"] = searched[bill]["PROC_RESULT_CD"]
        for tool, wanted in expect.items():
            required = {p.name for p in project.platform("assembly").operation(tool).params if p.required}
            args = AGE if "AGE" in required else {}
            got = {r["BILL_ID"] for r in await rows_of(session, tool, args)}
            assert got, tool
            assert got == {b for b, row in bills.items() if wanted(row)}, tool


@pytest.mark.anyio
async def test_a_bills_stages_come_in_order_and_stop_where_it_stands(
    project: Project, world: BuiltWorld
) -> None:
    """Stage dates are in order and before today; a stage not reached is blank and so is every later one (a
    committee's own bill has no referral or presentation); only a passed bill goes to the government and is
    promulgated; the final result is the plenary's when there was a vote. The daily activity list of a day
    shows exactly the stages that bills reached that day."""
    today = project.world.today.isoformat()
    async with open_session(project) as session:
        bills = await rows_of(session, ALL_BILLS, {})
        final = {b["BILL_ID"]: b for b in await rows_of(session, "assembly_search_bills", AGE)}
        by_day: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for b in bills:
            committee_bill = b["PPSR_KND"] == "위원장"
            stages = [
                (f, s)
                for f, s in STAGES
                if not (committee_bill and f in ("JRCMIT_CMMT_DT", "JRCMIT_PRSNT_DT"))
            ]
            dates = [b[f] for f, _ in stages]
            reached = [d for d in dates if d]
            assert dates[: len(reached)] == reached, (
                b["BILL_ID"],
                dates,
            )  # no gap: blank from the first blank on
            assert reached == sorted(reached) and reached[-1] < today, (b["BILL_ID"], dates)
            for (field, stage), day in zip(stages, reached, strict=False):
                if not (
                    committee_bill and field == "JRCMIT_PROC_DT"
                ):  # its committee decision is its proposal
                    by_day[day].add((b["BILL_ID"], stage))
            result = final[b["BILL_ID"]]["PROC_RESULT_CD"]
            plenary = b["RGS_CONF_RSLT"]
            assert (plenary != "") == (b["RGS_RSLN_DT"] != "")
            if plenary:
                assert result == plenary and final[b["BILL_ID"]]["PROC_DT"] == b["RGS_RSLN_DT"]
            if b["GVRN_TRSF_DT"]:
                assert plenary in PASSED
            assert (b["PROM_NO"] != "") == (b["PROM_DT"] != "")
            if result == "대안반영폐기":
                assert (
                    b["JRCMIT_PROC_RSLT"] == result and final[b["BILL_ID"]]["PROC_DT"] == b["JRCMIT_PROC_DT"]
                )
            if result == "":
                assert final[b["BILL_ID"]]["PROC_DT"] == ""
        voted_days = sorted({b["RGS_RSLN_DT"] for b in bills if b["RGS_RSLN_DT"]})
        days = sorted(set(voted_days[-10:]) | set(sorted(by_day)[-10:]))
        for day in days:
            rows = await rows_of(session, "assembly_list_daily_bill_activities", {**AGE, "DT": day})
            shown = {(r["BILL_ID"], r["ACT_STATUS"]) for r in rows if r["ACT_STATUS"] != "철회"}
            assert shown == by_day[day], day
            assert [int(r["SEQ"]) for r in rows] == list(range(1, len(rows) + 1)), day


@pytest.mark.anyio
async def test_tallies_are_the_counts_of_the_member_votes(project: Project, world: BuiltWorld) -> None:
    """Every voted bill has one vote row per member of the assembly, the member as the member list gives them,
    and its 찬성/반대/기권 counts, 총투표 (찬성+반대+기권) and 재적 (the rows) are those rows counted; it passed when
    찬성 is more than half of the votes cast."""
    async with open_session(project) as session:
        members = {m["MONA_CD"]: m for m in await rows_of(session, "assembly_list_members", {})}
        voted = await rows_of(session, "assembly_list_bill_votes", AGE)
        assert len(voted) >= 100
        parties: Counter[str] = Counter()
        for bill in voted:
            votes = await rows_of(session, "assembly_list_member_votes", {**AGE, "BILL_ID": bill["BILL_ID"]})
            codes = [v["MONA_CD"] for v in votes]
            assert sorted(codes) == sorted(members), bill["BILL_ID"]
            for v in votes:
                member = members[v["MONA_CD"]]
                assert (v["HG_NM"], v["POLY_NM"], v["ORIG_NM"]) == (
                    member["HG_NM"],
                    member["POLY_NM"],
                    member["ORIG_NM"],
                )
                assert v["VOTE_DATE"][:8] == bill["PROC_DT"].replace("-", "")
            count = tallies(votes)
            assert set(count) <= {"찬성", "반대", "기권", "불참"}
            yes, no, abstain = count["찬성"], count["반대"], count["기권"]
            assert (int(bill["YES_TCNT"]), int(bill["NO_TCNT"]), int(bill["BLANK_TCNT"])) == (
                yes,
                no,
                abstain,
            ), bill
            assert int(bill["VOTE_TCNT"]) == yes + no + abstain and int(bill["MEMBER_TCNT"]) == len(votes)
            assert (bill["PROC_RESULT_CD"] in PASSED) == (2 * yes > yes + no + abstain), bill
            parties.update(v["POLY_NM"] for v in votes if v["RESULT_VOTE_MOD"] == "반대")
        assert len(parties) >= 2  # votes against come from more than one party


@pytest.mark.anyio
async def test_proposers_are_the_members_the_bill_names(project: Project, world: BuiltWorld) -> None:
    """'홍길동의원 등 N인': the 대표발의자 is the member RST_MONA_CD names, N is the number of proposers the
    proposer list gives (the 대표발의자 first, then the 공동발의자 of PUBL_PROPOSER), all of them members."""
    async with open_session(project) as session:
        members = {m["MONA_CD"]: m for m in await rows_of(session, "assembly_list_members", {})}
        names = {m["HG_NM"] for m in members.values()}
        own = await rows_of(session, "assembly_list_member_bills", AGE)
        assert len(own) >= 1000
        for bill in own:
            match = re.fullmatch(r"(.+)의원 등 (\d+)인", bill["PROPOSER"])
            assert match, bill["PROPOSER"]
            assert match[1] == bill["RST_PROPOSER"] == members[bill["RST_MONA_CD"]]["HG_NM"]
            co = bill["PUBL_PROPOSER"].split(",")
            assert len(co) + 1 == int(match[2]) and set(co) <= names
            assert bill["RST_MONA_CD"] not in bill["PUBL_MONA_CD"].split(",")
        for bill in own[::SAMPLE]:
            rows = await rows_of(session, "assembly_list_bill_proposers", {"BILL_ID": bill["BILL_ID"]})
            assert [r["REP_DIV"] for r in rows] == ["대표발의"] + ["공동발의"] * (len(rows) - 1)
            assert rows[0]["PPSR_NM"] == bill["RST_PROPOSER"]
            assert [r["PPSR_NM"] for r in rows[1:]] == bill["PUBL_PROPOSER"].split(",")
            for r, code in zip(rows, [bill["RST_MONA_CD"], *bill["PUBL_MONA_CD"].split(",")], strict=True):
                assert r["PPSR_POLY_NM"] == members[code]["POLY_NM"]


@pytest.mark.anyio
async def test_each_committee_has_one_roster_one_chair_two_secretaries(
    project: Project, world: BuiltWorld
) -> None:
    """A committee's roster is the members whose committees include it, each once, with the member list's
    JOB_RES_NM: one 위원장 and two 간사; the committee table names the same 위원장 and 간사 and counts the
    roster."""
    async with open_session(project) as session:
        members = await rows_of(session, "assembly_list_members", {})
        roster = await rows_of(session, "assembly_list_committee_members", {})
        committees = await rows_of(session, "assembly_list_committees", {})
    seats = {m["MONA_CD"]: m for m in members}
    placed = Counter((r["DEPT_NM"], r["MONA_CD"]) for r in roster)
    assert max(placed.values()) == 1, "a member twice on one roster"
    expected = {(c, m["MONA_CD"]) for m in members for c in m["CMITS"].split(", ") if c}
    assert set(placed) == expected
    assert all(m["CMIT_NM"] in m["CMITS"].split(", ") for m in members)
    by_committee: dict[str, list[Row]] = defaultdict(list)
    for r in roster:
        assert r["JOB_RES_NM"] == seats[r["MONA_CD"]]["JOB_RES_NM"], r
        assert (r["HG_NM"], r["POLY_NM"]) == (seats[r["MONA_CD"]]["HG_NM"], seats[r["MONA_CD"]]["POLY_NM"])
        by_committee[r["DEPT_NM"]].append(r)
    assert {c["COMMITTEE_NAME"] for c in committees} == set(by_committee)
    for c in committees:
        rows = by_committee[c["COMMITTEE_NAME"]]
        jobs = Counter(r["JOB_RES_NM"] for r in rows)
        assert (jobs["위원장"], jobs["간사"]) == (1, 2), (c["COMMITTEE_NAME"], jobs)
        assert c["HG_NM"] == next(r["HG_NM"] for r in rows if r["JOB_RES_NM"] == "위원장")
        assert sorted(c["HG_NM_LIST"].split(", ")) == sorted(
            r["HG_NM"] for r in rows if r["JOB_RES_NM"] == "간사"
        )
        assert int(c["CURR_CNT"]) == len(rows) == int(c["POLY_CNT"]) + int(c["POLY99_CNT"])
        assert {r["DEPT_CD"] for r in rows} == {c["HR_DEPT_CD"]}
