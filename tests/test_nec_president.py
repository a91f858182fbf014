"""The 21st presidential election on the NEC's services: found by its name in the election codes (not by a known
sgId), its one nationwide 선거구, its winner (the candidate with the most votes in every winners query) and its
개표 rows, whose 구시군 add up to each 시도's 합계 and the 시도 to the published national result declared in the world
spec (specs/world/elections.yaml)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from kopa_gen.compose import sandbox_client
from kopa_gen.project import Project
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import BuiltWorld
from kopa_gen.world.lazy import open_world
from tests.conftest import repository_project

pytestmark = pytest.mark.skipif(
    "nec" not in {p.id for p in repository_project().platforms},
    reason="the NEC platform is not in this project",
)

PRESIDENTIAL = "1"  # sgTypecode of a presidential election (the API's vocabulary)
MEASURES = ("sunsu", "tusu", "yutusu", "mutusu", "gigwonsu")


def anchors(project: Project, table: str) -> list[dict[str, Any]]:
    """The rows the world spec declares for a static table (the published figures)."""
    return project.world.table(table).anchors


def slots(row: dict[str, str]) -> dict[str, int]:
    """Candidate name -> 득표수 of one wide 개표 row (empty slots left out; numbers may carry commas)."""
    return {
        row[f"hbj{k:02d}"]: int(row[f"dugsu{k:02d}"].replace(",", ""))
        for k in range(1, 51)
        if row[f"hbj{k:02d}"]
    }


@pytest.mark.anyio
async def test_presidential_election_found_by_name_has_one_winner(
    project: Project, world: BuiltWorld
) -> None:
    (national,) = anchors(project, "nec_national_counts")
    declared = {c["name"]: c for c in anchors(project, "nec_president_candidates")}
    leader = max(declared.values(), key=lambda c: int(c["dugsu"]))
    valid = sum(int(c["dugsu"]) for c in declared.values())
    sandbox = open_sandbox(project)
    async with sandbox_client(sandbox, "nec") as nec:
        elections = await nec.call("nec_list_elections", {"numOfRows": 100})
        (sg_id,) = {
            e["sgId"]
            for e in elections.rows
            if e["sgTypecode"] == PRESIDENTIAL and e["sgId"] in {c["sgId"] for c in declared.values()}
        }
        named = [e["sgName"] for e in elections.rows if e["sgId"] == sg_id and e["sgTypecode"] == "0"]
        assert named and "대통령선거" in named[0]

        districts = await nec.call("nec_list_districts", {"sgId": sg_id, "sgTypecode": PRESIDENTIAL})
        assert [(d["sggName"], d["sdName"]) for d in districts.rows] == [
            (national["sggName"], national["sdName"])
        ]

        candidates = await nec.call("nec_list_candidates", {"sgId": sg_id, "sgTypecode": PRESIDENTIAL})
        assert {c["name"]: (c["giho"], c["jdName"]) for c in candidates.rows} == {
            n: (c["giho"], c["jdName"]) for n, c in declared.items()
        }
        # every way of asking for the winner names the leader, once
        for narrow in ({}, {"sdName": national["sdName"]}, {"sggName": national["sggName"]}):
            winners = await nec.call(
                "nec_list_winners", {"sgId": sg_id, "sgTypecode": PRESIDENTIAL, **narrow}
            )
            assert [w["name"] for w in winners.rows] == [leader["name"]], narrow
            (winner,) = winners.rows
            assert int(winner["dugsu"]) == int(leader["dugsu"])
            assert float(winner["dugyul"]) == pytest.approx(100 * int(leader["dugsu"]) / valid, abs=0.005)

        # any other sgId (the documented example 20240410 among them) gives no presidential result
        guessed = {e["sgId"] for e in elections.rows} - {sg_id}
        for other in sorted(guessed):
            none = await nec.call("nec_list_winners", {"sgId": other, "sgTypecode": PRESIDENTIAL})
            assert none.total == 0, other


@pytest.mark.anyio
async def test_counting_rows_add_up_to_the_published_national_result(
    project: Project, world: BuiltWorld
) -> None:
    (national,) = anchors(project, "nec_national_counts")
    declared = {c["name"]: int(c["dugsu"]) for c in anchors(project, "nec_president_candidates")}
    sandbox = open_sandbox(project)
    async with sandbox_client(sandbox, "nec") as nec:
        counts = await nec.call(
            "nec_list_vote_counts",
            {"sgId": national["sgId"], "sgTypecode": PRESIDENTIAL, "numOfRows": 1000},
        )
        gusiguns = await nec.call("nec_list_gusiguns", {"sgId": national["sgId"], "numOfRows": 1000})
    assert counts.total == len(counts.rows)
    totals = [r for r in counts.rows if r["wiwName"] == "합계"]
    nation = [r for r in totals if r["sdName"] == national["sdName"]]
    assert len(nation) == 1 and counts.rows[0] is nation[0], "the nation's 합계 comes first"
    top = nation[0]
    assert (int(top["sunsu"]), int(top["tusu"])) == (int(national["sunsu"]), int(national["tusu"]))
    assert slots(top) == declared
    assert int(top["yutusu"]) == sum(declared.values())

    units = [r for r in counts.rows if r["wiwName"] != "합계"]
    assert sorted((u["sdName"], u["wiwName"]) for u in units) == sorted(
        (g["sdName"], g["wiwName"]) for g in gusiguns.rows
    ), "one 개표 row per 구시군 of the code list"
    by_sido: dict[str, list[dict[str, str]]] = defaultdict(list)
    for u in units:
        by_sido[u["sdName"]].append(u)
        votes = slots(u)
        assert min(votes.values()) >= 0
        assert sum(votes.values()) == int(u["yutusu"]) == int(u["tusu"]) - int(u["mutusu"])
        assert int(u["sunsu"]) == int(u["tusu"]) + int(u["gigwonsu"]) and int(u["gigwonsu"]) > 0
    sido_totals = {r["sdName"]: r for r in totals if r is not top}
    assert set(sido_totals) == set(by_sido)
    for sd, rows in by_sido.items():
        for m in MEASURES:
            assert int(sido_totals[sd][m]) == sum(int(r[m]) for r in rows), (sd, m)
        summed: dict[str, int] = defaultdict(int)
        for r in rows:
            for name, v in slots(r).items():
                summed[name] += v
        assert slots(sido_totals[sd]) == summed, sd
    for m in MEASURES:
        assert int(top[m]) == sum(int(r[m]) for r in sido_totals.values()), m


def test_runner_up_wins_some_units_and_the_leader_others(world: BuiltWorld) -> None:
    """The regional lean shows: each of the two leading candidates tops some 구시군 (a task can ask where)."""
    db = open_world(world.path)
    tops = db.execute(
        "WITH v AS (SELECT unit_cd, huboid, votes, max(votes) OVER (PARTITION BY unit_cd) AS most FROM nec_pres_votes)"
        " SELECT count(DISTINCT huboid), count(*), (SELECT count(*) FROM nec_pres_units) FROM v WHERE votes = most"
    ).fetchone()
    db.close()
    first_places, winners, units = tops
    assert first_places == 2 and winners == units
