"""One politics world across platforms: the lawmakers of the National Assembly (`assembly`) are the winners of the
22nd general election on the NEC's services (`nec`), found by the chain an agent would follow through the real
clients, and every 지역구 of the election has exactly one winner, the candidate with the most votes."""

from __future__ import annotations

import pytest

from kopa_gen.compose import sandbox_client
from kopa_gen.sandbox.local import open_sandbox
from kopa_gen.world.build import BuiltWorld
from kopa_gen.world.lazy import open_world
from tests.conftest import repository_project

pytestmark = pytest.mark.skipif(
    not {"nec", "assembly"} <= {p.id for p in repository_project().platforms},
    reason="the politics platforms are not in this project",
)

GENERAL = "국회의원선거"  # sgName of the 지역구 contest of a general election (sgTypecode 2)
# A list party's members sit with the party it merged into after the election.
MERGED = {"더불어민주연합": "더불어민주당", "국민의미래": "국민의힘"}


@pytest.mark.anyio
@pytest.mark.parametrize("district", ["강동구갑", "세종특별자치시을", "수원시장안구"])
async def test_winner_is_the_assembly_member_with_their_bills(world: BuiltWorld, district: str) -> None:
    project = repository_project()
    sandbox = open_sandbox(project)
    async with sandbox_client(sandbox, "nec") as nec, sandbox_client(sandbox, "assembly") as assembly:
        elections = await nec.call("nec_list_elections", {"numOfRows": 100})
        general = [e for e in elections.rows if e["sgName"] == GENERAL and e["sgTypecode"] == "2"]
        sg_id = max(e["sgId"] for e in general)
        assert sg_id == "20240410"

        districts = await nec.call(
            "nec_list_districts", {"sgId": sg_id, "sgTypecode": "2", "numOfRows": 1000}
        )
        assert districts.total == 254
        place = next(d for d in districts.rows if d["sggName"] == district)

        winners = await nec.call("nec_list_winners", {"sgId": sg_id, "sgTypecode": "2", "sggName": district})
        assert winners.total == 1
        winner = winners.rows[0]
        assert (winner["sdName"], winner["wiwName"]) == (place["sdName"], place["wiwName"])

        members = await assembly.call("assembly_list_members", {"HG_NM": winner["name"]})
        (member,) = [m for m in members.rows if m["ORIG_NM"].endswith(district)]
        # the assembly writes the district with the short 시도 name (서울 강동구갑; 세종특별자치시을 alone)
        assert member["ORIG_NM"] in (district, f"{winner['sdName'][:2]} {district}")
        assert member["POLY_NM"] == winner["jdName"]
        assert member["ELECT_GBN_NM"] == "지역구"
        assert member["SEX_GBN_NM"] == winner["gender"]
        assert member["BTH_DATE"].replace("-", "") == winner["birthday"]

        bills = await assembly.call("assembly_list_member_bills", {"AGE": "22", "PROPOSER": winner["name"]})
        mine = [b for b in bills.rows if b["RST_MONA_CD"] == member["MONA_CD"]]
        assert mine, f"no bills of {winner['name']} ({member['MONA_CD']})"
        assert all(b["RST_PROPOSER"] == winner["name"] for b in mine)

        counts = await nec.call(
            "nec_list_vote_counts", {"sgId": sg_id, "sgTypecode": "2", "sggName": district}
        )
        total = next(r for r in counts.rows if r["wiwName"] == "합계")
        votes = {
            total[f"hbj{k:02d}"]: int(total[f"dugsu{k:02d}"]) for k in range(1, 51) if total[f"hbj{k:02d}"]
        }
        assert votes[winner["name"]] == int(winner["dugsu"]) == max(votes.values())
        assert sum(votes.values()) == int(total["yutusu"])


@pytest.mark.anyio
async def test_list_winners_are_the_proportional_members(world: BuiltWorld) -> None:
    project = repository_project()
    sandbox = open_sandbox(project)
    async with sandbox_client(sandbox, "nec") as nec, sandbox_client(sandbox, "assembly") as assembly:
        winners = await nec.call(
            "nec_list_winners", {"sgId": "20240410", "sgTypecode": "7", "numOfRows": 100}
        )
        members = await assembly.call("assembly_list_members", {"ORIG_NM": "비례대표", "pSize": 100})
    assert winners.total == members.total == 46
    assert sorted((w["name"], MERGED.get(w["jdName"], w["jdName"])) for w in winners.rows) == sorted(
        (m["HG_NM"], m["POLY_NM"]) for m in members.rows
    )


def test_every_district_has_one_winner_with_the_most_votes(world: BuiltWorld) -> None:
    db = open_world(world.path)
    districts = db.execute("SELECT count(*) FROM nec_districts").fetchone()[0]
    per_district = db.execute(
        "WITH c AS (SELECT district_no, elected, dugsu, max(dugsu) OVER (PARTITION BY district_no) AS most"
        "           FROM nec_candidates WHERE sgTypecode = '2')"
        " SELECT district_no, sum(elected), sum(elected * (dugsu = most)), sum(dugsu = most)"
        " FROM c GROUP BY district_no"
    ).fetchall()
    assert len(per_district) == districts == 254
    for district_no, elected, elected_with_most, with_most in per_district:
        assert elected == 1 and elected_with_most == 1, (
            f"district {district_no}: the winner has not the most votes"
        )
        assert with_most == 1, f"district {district_no}: a tie for the most votes"
    # each district's 득표수 are the sums of its 읍면동's, and the 합계 row adds up
    mismatched = db.execute(
        "SELECT count(*) FROM nec_candidates c JOIN (SELECT huboid, sum(votes) AS v FROM nec_emd_votes GROUP BY huboid) e"
        " ON e.huboid = c.huboid WHERE c.dugsu != e.v"
    ).fetchone()[0]
    assert mismatched == 0
    # every 지역구 lies in one real, current 시군구 and holds current 법정 읍면동 of it
    outside = db.execute(
        "SELECT count(*) FROM nec_district_emds e JOIN nec_districts d USING (district_no)"
        " JOIN regions r ON r.region_cd = e.region_cd"
        " WHERE r.abolished = 1 OR substr(r.region_cd, 1, 5) != substr(d.unit_cd, 1, 5)"
    ).fetchone()[0]
    assert outside == 0
    # the assembly is the elected: 254 지역구 and 46 비례대표 members, with the winners' names and districts
    assert db.execute(
        "SELECT count(*), sum(ELECT_GBN_NM = '지역구') FROM assembly_members m WHERE EXISTS (SELECT 1 FROM"
        " nec_candidates c WHERE c.elected = 1 AND c.name = m.HG_NM AND c.ORIG_NM = m.ORIG_NM)"
    ).fetchone() == (300, 254)
    db.close()


BILL_NAMES = ("BILL_NAME", "BILL_NM")
MEMBER_NAMES = {"MONA_CD": "HG_NM", "NAAS_CD": "NAAS_NM", "RST_MONA_CD": "RST_PROPOSER"}


def test_every_bill_and_member_dataset_agrees_with_the_assembly(world: BuiltWorld) -> None:
    """A bill is the same bill in every dataset that shows it, and a member code goes with that member's name:
    checked on the rows of every assembly tool's table, against assembly_bills and assembly_members."""
    project = repository_project()
    tables = {op.source.table for op in project.platform("assembly").operations}
    db = open_world(world.path)
    checked = 0
    for table in sorted(tables):
        columns = {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}
        for name in (c for c in BILL_NAMES if c in columns and "BILL_ID" in columns):
            wrong = db.execute(
                f'SELECT COUNT(*) FROM "{table}" t JOIN assembly_bills b ON b.BILL_ID = t.BILL_ID '
                f'WHERE t."{name}" != b.BILL_NAME'
            ).fetchone()[0]
            assert wrong == 0, f"{table}.{name}: {wrong} rows name another bill than their BILL_ID"
            checked += 1
        for code, name in MEMBER_NAMES.items():
            if code in columns and name in columns:
                wrong = db.execute(
                    f'SELECT COUNT(*) FROM "{table}" t JOIN assembly_members m ON m.MONA_CD = t."{code}" '
                    f'WHERE t."{name}" != m.HG_NM'
                ).fetchone()[0]
                assert wrong == 0, f"{table}.{name}: {wrong} rows name another member than their {code}"
                checked += 1
    assert checked >= 10
