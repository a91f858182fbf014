"""What a model reads of a tool result, through a real Session against the sandbox: a header line and one JSON
array per row, from which every row of the page is rebuilt exactly; a page over the tool-result budget is cut at a
row boundary with a note, and the note's advice, followed, gives the rows that were left out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kopa_gen.evaluate.runner import load_fixture
from kopa_gen.language.settings import TOOL_RESULT_CHARS
from kopa_gen.mcp.render import CUT_MARK
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session
from kopa_gen.world.build import BuiltWorld

BIG_PAGE = 1000


def longest_list(project: Project) -> tuple[str, dict[str, Any], tuple[str, str]]:
    """The benchmark's gold call over the longest paged list (most rows in all): its tool, arguments, paging."""
    best: tuple[int, str, dict[str, Any]] | None = None
    for _, task in project.tasks:
        for step in load_fixture(project, task)["steps"]:
            for call in step:
                total = call.get("total_count")
                if call.get("paging") and isinstance(total, int) and (best is None or total > best[0]):
                    best = (total, call["tool"], call["args"])
    assert best is not None, "no gold call reads a paged list"
    params = project.page_params(best[1])
    assert params is not None
    return best[1], best[2], params


def read(text: str) -> tuple[dict[str, Any], list[dict[str, Any]], str | None]:
    """The header, the rows rebuilt as objects, and the cut note (None: not cut) of a rendered list result."""
    lines = text.split("\n")
    note = lines.pop() if lines[-1].startswith(CUT_MARK) else None
    header = json.loads(lines[0])
    same, columns = header.get("same_in_every_row", {}), header["columns"]
    rows = []
    for line in lines[1:]:
        values = json.loads(line)
        assert isinstance(values, list) and len(values) == len(columns), line
        rows.append(same | dict(zip(columns, values, strict=True)))
    return header, rows, note


def whole(rebuilt: list[dict[str, Any]], original: list[dict[str, Any]]) -> bool:
    """The rows read back are the result's rows: every field, every value (a column a row lacks reads as null)."""
    return len(rebuilt) == len(original) and all(
        set(o) <= set(r) and r == {k: o.get(k) for k in r} for r, o in zip(rebuilt, original, strict=True)
    )


@pytest.mark.anyio
async def test_a_long_page_is_cut_at_a_row_and_the_note_says_how_to_read_the_rest(
    project: Project, world: BuiltWorld
) -> None:
    tool, args, (page, size) = longest_list(project)
    platform = project.platform_of(tool).id
    async with Session.open(project, [platform], result_chars=TOOL_RESULT_CHARS) as session:
        big = await session.call(tool, args | {size: BIG_PAGE, page: 1})
        assert not big.is_error and big.structured is not None, big.text
        everything: list[dict[str, Any]] = big.structured["rows"]
        plain = json.dumps(big.structured, ensure_ascii=False)
        assert len(plain) > TOOL_RESULT_CHARS, (
            "the page must be over the budget for this test to mean anything"
        )
        assert len(big.text) <= TOOL_RESULT_CHARS

        header, shown, note = read(big.text)
        n = len(shown)
        assert header["rows_on_page"] == len(everything) and 0 < n < len(everything)
        assert whole(shown, everything[:n])
        assert note is not None and f"rows 1-{n} of the {len(everything)} on this page are shown" in note
        assert f"ask for {size}={n} with {page}=2" in note

        # the advice, followed, gives the next rows
        rest = await session.call(tool, args | {size: n, page: 2})
        assert not rest.is_error, rest.text
        _, following, rest_note = read(rest.text)
        assert rest_note is None and whole(following, everything[n : 2 * n])


@pytest.mark.anyio
async def test_a_result_within_the_budget_is_compact_and_whole(project: Project, world: BuiltWorld) -> None:
    tool, args, (page, size) = longest_list(project)
    platform = project.platform_of(tool).id
    async with Session.open(project, [platform], result_chars=TOOL_RESULT_CHARS) as session:
        small = await session.call(tool, args | {size: 20, page: 1})
    assert not small.is_error and small.structured is not None
    header, rows, note = read(small.text)
    assert note is None and whole(rows, small.structured["rows"])
    assert {k: v for k, v in header.items() if k not in ("rows_on_page", "same_in_every_row", "columns")} == {
        k: v for k, v in small.structured.items() if k != "rows"
    }
    # a header and rows, not a key per value: shorter than the plain JSON of the same result
    assert len(small.text) < len(json.dumps(small.structured, ensure_ascii=False, separators=(",", ":")))
