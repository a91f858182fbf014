"""Sessions: isolated episodes with their own workspace state, a call log and a call budget."""

from __future__ import annotations

import pytest

from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import BuiltWorld

EMPTY = "c6b08d41eeea70ceffb181b29976ea8a96003ffa63d9746c5008d47c6210b8b3"  # sha256 of {"workspace_files":[]}


def test_empty_state_hash_is_the_hash_of_the_canonical_empty_snapshot() -> None:
    import hashlib

    assert hashlib.sha256(b'{"workspace_files":[]}').hexdigest() == EMPTY


@pytest.mark.anyio
async def test_sessions_are_isolated_and_hash_their_workspace(project: Project, world: BuiltWorld) -> None:
    async with (
        Session.open(project, ["dart", "workspace"]) as a,
        Session.open(project, ["dart", "workspace"]) as b,
    ):
        assert a.state_hash() == b.state_hash() == EMPTY
        corp = await a.call("dart_corp_code", {"corp_name": "삼성전자"})
        assert corp.structured is not None and corp.structured["rows"][0]["corp_code"] == "00126380"
        wrote = await a.call("workspace_write_file", {"path": "answer.txt", "content": "00126380"})
        assert not wrote.is_error
        assert a.state_hash() != EMPTY and b.state_hash() == EMPTY
        await b.call("workspace_write_file", {"path": "answer.txt", "content": "00126380"})
        assert a.state_hash() == b.state_hash(), "same writes, same state, same hash"
        await b.call("workspace_write_file", {"path": "answer.txt", "content": "00164779"})
        assert a.state_hash() != b.state_hash()
        assert [c.tool for c in a.calls] == ["dart_corp_code", "workspace_write_file"]


@pytest.mark.anyio
async def test_budget_and_exposure_are_enforced_as_tool_errors(project: Project, world: BuiltWorld) -> None:
    async with Session.open(project, ["region"], max_calls=2, tools=["region_list_legal_districts"]) as s:
        assert [t["name"] for t in s.tools()] == ["region_list_legal_districts"]
        hidden = await s.call("dart_company", {"corp_code": "00126380"})
        assert hidden.is_error and hidden.error_code == "unknown_tool"
        broken = await s.call("region_list_legal_districts", "{not json")
        assert (
            broken.is_error
            and broken.text
            == "arguments for region_list_legal_districts must be a JSON object {...}, not a string"
        )
        over = await s.call("region_list_legal_districts", {})
        assert over.is_error and over.error_code == "budget" and s.exhausted
        assert len(s.calls) == 3 and [c.error_code for c in s.calls] == [
            "unknown_tool",
            "bad_arguments",
            "budget",
        ]


@pytest.mark.anyio
async def test_parallel_calls_cannot_overrun_the_budget(project: Project, world: BuiltWorld) -> None:
    import asyncio

    async with Session.open(project, ["region"], max_calls=2) as s:
        outcomes = await asyncio.gather(
            *(
                s.call("region_list_legal_districts", {"locatadd_nm": name})
                for name in ("서울", "부산", "대구")
            )
        )
        assert [o.error_code for o in outcomes].count("budget") == 1
        assert len(s.calls) == 3 and s.exhausted
