"""Parallel calls of one turn: logged in the order they were made (not the order they finished), and the first
calls of a bulk-file tool share one download."""

from __future__ import annotations

import asyncio

import pytest

from kopa_gen.client.client import PlatformClient
from kopa_gen.language.platform import Operation
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import BuiltWorld


@pytest.mark.anyio
async def test_parallel_calls_are_logged_in_the_order_made(
    project: Project, world: BuiltWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch = PlatformClient._fetch_zip

    async def slow_fetch(self: PlatformClient, op: Operation) -> bytes:
        await asyncio.sleep(0.2)  # the first call made finishes last
        return await fetch(self, op)

    monkeypatch.setattr(PlatformClient, "_fetch_zip", slow_fetch)
    async with Session.open(project, ["dart", "workspace"]) as s:
        await asyncio.gather(
            s.call("dart_corp_code", {"corp_name": "삼성전자"}),
            s.call("workspace_write_file", {"path": "a.txt", "content": "가"}),
            s.call("workspace_list_files", {}),
        )
        assert [c.tool for c in s.calls] == ["dart_corp_code", "workspace_write_file", "workspace_list_files"]
        assert [c.index for c in s.calls] == [0, 1, 2] and not any(c.is_error for c in s.calls)
        assert s.calls[0].elapsed_ms > max(c.elapsed_ms for c in s.calls[1:])


@pytest.mark.anyio
async def test_parallel_first_calls_of_a_bulk_file_download_it_once(
    project: Project, world: BuiltWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch = PlatformClient._fetch_zip
    downloads: list[str] = []

    async def counted(self: PlatformClient, op: Operation) -> bytes:
        downloads.append(op.operation_id)
        await asyncio.sleep(0.05)  # long enough for the other calls to arrive meanwhile
        return await fetch(self, op)

    monkeypatch.setattr(PlatformClient, "_fetch_zip", counted)
    async with Session.open(project, ["dart"]) as s:
        outcomes = await asyncio.gather(
            *(s.call("dart_corp_code", {"corp_name": name}) for name in ("삼성전자", "카카오", "NAVER"))
        )
        assert not any(o.is_error for o in outcomes)
        assert len(downloads) == 1, downloads
        await s.call("dart_corp_code", {"corp_name": "LG전자"})
    assert len(downloads) == 1, "later calls use the session's copy"
    async with Session.open(project, ["dart"]) as other:
        await other.call("dart_corp_code", {"corp_name": "삼성전자"})
    assert len(downloads) == 2, "each session downloads its own copy, as a real client would"
