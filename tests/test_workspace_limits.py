"""The workspace has edges a model can reach, and each is a tool error naming the limit: the file count (the world
spec's `max_rows`), the file size (the write tool's `maxLength`) and the listing's page size (the platform's
paging). Past the file count a new file is refused while rewriting or deleting one still works, and the listing
pages through every file. The limits are read from the specs."""

from __future__ import annotations

from typing import Any

import pytest

from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.sandbox.config import SandboxConfig
from kopa_gen.world.build import BuiltWorld


def workspace(project: Project) -> tuple[int, int, int]:
    """(file count limit, content length limit, largest page) as the specs declare them."""
    (table,) = [t for t in project.world.episode if t.max_rows is not None]
    platform = project.platform("workspace")
    write = platform.operation("workspace_write_file")
    assert write.kopa.source is not None and write.kopa.source.table == table.name
    content = write.param("content")
    assert content is not None and table.max_rows is not None and platform.kopa.paging is not None
    return table.max_rows, int(content.schema["maxLength"]), platform.kopa.paging.max_size


@pytest.mark.anyio
async def test_a_full_workspace_refuses_a_new_file_naming_the_limit(
    project: Project, world: BuiltWorld
) -> None:
    files, chars, page = workspace(project)
    async with Session.open(project, ["workspace"], sandbox=SandboxConfig(limits=False)) as session:

        async def write(path: str, content: str) -> Any:
            return await session.call("workspace_write_file", {"path": path, "content": content})

        for i in range(files):
            assert not (await write(f"f/{i:05d}.txt", "x")).is_error
        new = await write("one-more.txt", "x")
        assert (
            new.is_error and f"workspace_files: at most {files:,} in an episode, and it is full" in new.text
        )
        rewritten = await write("f/00001.txt", "y" * chars)
        assert not rewritten.is_error and rewritten.structured is not None
        assert rewritten.structured["record"]["size"] == chars
        too_long = await write("f/00002.txt", "y" * (chars + 1))
        assert (
            too_long.is_error and f"content: String should have at most {chars} characters" in too_long.text
        )
        assert not (await session.call("workspace_delete_file", {"path": "f/00000.txt"})).is_error
        assert not (await write("one-more.txt", "x")).is_error  # room again

        seen: list[str] = []
        number = 1
        while True:
            listing = await session.call("workspace_list_files", {"page_no": number})
            assert not listing.is_error and listing.structured is not None
            assert listing.structured["total_count"] == files
            rows = listing.structured["rows"]
            assert len(rows) <= page
            if not rows:
                break
            seen += [r["path"] for r in rows]
            number += 1
        assert number - 1 == -(-files // page)
        assert seen == sorted({f"f/{i:05d}.txt" for i in range(1, files)} | {"one-more.txt"})
        wide = await session.call("workspace_list_files", {"page_count": page + 1})
        assert wide.is_error and f"page_count: Input should be less than or equal to {page}" in wide.text
