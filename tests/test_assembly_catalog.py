"""The National Assembly catalog's datasets join up with its member list: a row that names a member by code names the
same member as 국회의원 인적사항 does, and the party seat table counts the members of the member list."""

from __future__ import annotations

from collections import Counter

import pytest

from kopa_gen.compose import sandbox_client
from kopa_gen.sandbox.emulator import Sandbox
from tests.conftest import repository_project

pytestmark = pytest.mark.skipif(
    "assembly" not in {p.id for p in repository_project().platforms},
    reason="the assembly platform is not in this project",
)

MEMBERS = "assembly_list_members"
SEATS = "assembly_list_party_seats"
MAX_PAGE = 1000  # the hub's pSize limit


def member_keyed() -> list[str]:
    """Tools whose rows carry both a member code (MONA_CD) and a member name (HG_NM), read from the spec."""
    platform = repository_project().platform("assembly")
    return [
        op.tool
        for op in platform.operations
        if op.tool != MEMBERS and {"MONA_CD", "HG_NM"} <= set(op.row_fields)
    ]


def first_call(tool: str) -> dict[str, str | int]:
    """The tool's required arguments from the platform's examples, and the largest page."""
    platform = repository_project().platform("assembly")
    op = platform.operation(tool)
    examples = platform.examples(tool)
    args: dict[str, str | int] = {p.name: examples[p.name][0] for p in op.params if p.required}
    return {**args, "pSize": MAX_PAGE}


@pytest.mark.anyio
@pytest.mark.parametrize("tool", member_keyed())
async def test_member_code_and_name_agree_with_the_member_list(sandbox: Sandbox, tool: str) -> None:
    async with sandbox_client(sandbox, "assembly") as assembly:
        members = await assembly.call(MEMBERS, {"pSize": MAX_PAGE})
        names = {m["MONA_CD"]: m["HG_NM"] for m in members.rows}
        result = await assembly.call(tool, first_call(tool))
    assert result.rows, f"{tool}: no rows for its example arguments"
    wrong = [(r["MONA_CD"], r["HG_NM"]) for r in result.rows if names.get(r["MONA_CD"]) != r["HG_NM"]]
    assert not wrong, f"{tool}: rows whose MONA_CD is another member (or none): {wrong[:3]}"


@pytest.mark.anyio
async def test_party_seats_count_the_members(sandbox: Sandbox) -> None:
    async with sandbox_client(sandbox, "assembly") as assembly:
        members = await assembly.call(MEMBERS, {"pSize": MAX_PAGE})
        seats = await assembly.call(SEATS, {"pSize": MAX_PAGE})
    by_party = Counter(m["POLY_NM"] for m in members.rows)
    district = Counter(m["POLY_NM"] for m in members.rows if m["ELECT_GBN_NM"] == "지역구")
    assert {s["POLY_NM"]: int(s["N3"]) for s in seats.rows} == dict(by_party)
    for row in seats.rows:
        assert int(row["N1"]) == district[row["POLY_NM"]], row
        assert int(row["N1"]) + int(row["N2"]) == int(row["N3"]), row
    assert sum(int(s["N3"]) for s in seats.rows) == members.total
    ranked = [int(s["N3"]) for s in seats.rows]
    assert ranked == sorted(ranked, reverse=True), "largest party first"
