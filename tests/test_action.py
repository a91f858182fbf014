"""ACTION axis: call matching, page coverage, alternatives, Corr, CR, MPC on constructed gold chains and agent
call logs.

Every expected value below is worked out by hand; none is computed by the code under test.
ACTION = (Corr + Eff) / 2 (the paper's), action_gated = (Corr + Corr * Eff) / 2, Eff = (CR + MPC) / 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kopa_gen.evaluate.action import canonical, match_calls, score_action
from kopa_gen.runtime.evidence import row_key
from kopa_gen.runtime.session import CallRecord

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Call:
    index: int
    tool: str
    arguments: Any
    is_error: bool = False
    structured: dict[str, Any] | None = None


CORP: dict[str, Any] = {"id": "corp", "tool": "dart_corp_code", "args": {"corp_name": "삼성전자"}}
A25: dict[str, Any] = {
    "id": "a25",
    "tool": "dart_major_accounts",
    "args": {"corp_code": "00126380", "bsns_year": "2025", "reprt_code": "11011"},
}
A24: dict[str, Any] = {
    "id": "a24",
    "tool": "dart_major_accounts",
    "args": {"corp_code": "00126380", "bsns_year": "2024", "reprt_code": "11011"},
}
NOTE: dict[str, Any] = {
    "id": "note",
    "tool": "workspace_write_file",
    "args": {"path": "r.txt", "content": "매출 비교"},
}
# 4 gold calls in 3 steps; the middle step is parallel.
GOLD: list[list[dict[str, Any]]] = [[CORP], [A25, A24], [NOTE]]


def replay(*golds: dict[str, Any], start: int = 0) -> list[Call]:
    return [Call(start + i, g["tool"], dict(g["args"])) for i, g in enumerate(golds)]


def with_args(gold: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**gold, "args": {**gold["args"], **changes}}


def scores(gold: Any, calls: list[Any], turns: list[list[int]]) -> tuple[float, ...]:
    s = score_action(gold, calls, turns)
    return (s.corr, s.cr, s.mpc, s.eff, s.action)


def test_perfect_replay_scores_one() -> None:
    score = score_action(GOLD, replay(CORP, A25, A24, NOTE), [[0], [1, 2], [3]])
    assert (score.corr, score.cr, score.mpc, score.eff, score.action) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert score.matched == [("corp", 0), ("a25", 1), ("a24", 2), ("note", 3)]


def test_missing_call() -> None:
    # corr 3/4; cr min(1, 4/3) = 1; the parallel step lacks a24 -> mpc 0; eff 0.5;
    # action (0.75 + 0.5) / 2 = 0.625; gated (0.75 + 0.75 * 0.5) / 2 = 0.5625
    score = score_action(GOLD, replay(CORP, A25, NOTE), [[0], [1], [2]])
    assert (score.corr, score.cr, score.mpc, score.eff, score.action) == (0.75, 1.0, 0.0, 0.5, 0.625)
    assert score.action_gated == 0.5625
    assert score.matched == [("corp", 0), ("a25", 1), ("note", 2)]


def test_wrong_argument_does_not_match() -> None:
    calls = replay(CORP, A25, with_args(A24, bsns_year="2023"), NOTE)
    assert scores(GOLD, calls, [[0], [1, 2], [3]]) == (0.75, 1.0, 0.0, 0.5, 0.625)


def test_compare_lists_in_the_fixture_limit_the_check() -> None:
    calls = replay(CORP, A25, A24, with_args(NOTE, content="전혀 다른 내용", extra="무시"))
    assert score_action(GOLD, calls, [[0], [1, 2], [3]]).corr == 0.75
    path_only = [[CORP], [A25, A24], [{**NOTE, "compare": ["path"]}]]
    assert score_action(path_only, calls, [[0], [1, 2], [3]]).action == 1.0
    # An empty compare list checks the tool only.
    only_tool = replay(CORP, A25, A24, with_args(NOTE, path="other.txt"))
    tool_only = [[CORP], [A25, A24], [{**NOTE, "compare": []}]]
    assert score_action(tool_only, only_tool, [[0], [1, 2], [3]]).corr == 1.0


def test_extra_redundant_calls_lower_cr_only() -> None:
    # 8 agent calls for 4 gold calls: corr 1, cr 0.5, mpc 1, eff 0.75, action (1 + 0.75) / 2 = 0.875.
    calls = replay(CORP, CORP, CORP, CORP, A25, A24, NOTE, NOTE)
    score = score_action(GOLD, calls, [[0], [1], [2], [3], [4, 5], [6], [7]])
    assert (score.corr, score.cr, score.mpc, score.eff, score.action) == (1.0, 0.5, 1.0, 0.75, 0.875)
    assert score.matched == [("corp", 0), ("a25", 4), ("a24", 5), ("note", 6)]


def test_parallel_step_issued_sequentially() -> None:
    calls = replay(CORP, A25, A24, NOTE)
    assert scores(GOLD, calls, [[0], [1], [2], [3]]) == (1.0, 1.0, 0.0, 0.5, 0.75)
    # No turn record at all: every call is its own turn.
    assert score_action(GOLD, calls, []).mpc == 0.0
    # A turn may hold more than the parallel step.
    assert score_action(GOLD, calls, [[0, 1, 2], [3]]).mpc == 1.0


def test_the_gated_variant_counts_efficiency_only_as_far_as_the_calls_were_correct() -> None:
    # One call that errors: corr 0, cr 1, mpc 1, eff 1: the paper's ACTION (0 + 1) / 2 = 0.5; gated (0 + 0) / 2 = 0
    erroring = [Call(0, "dart_corp_code", {"corp_name": "삼성전자"}, is_error=True)]
    assert scores([[CORP]], erroring, [[0]]) == (0.0, 1.0, 1.0, 1.0, 0.5)
    assert score_action([[CORP]], erroring, [[0]]).action_gated == 0.0
    # One wrong call for a one-call chain: the same.
    wrong = score_action([[CORP]], replay(with_args(CORP, corp_name="LG")), [[0]])
    assert (wrong.action, wrong.action_gated) == (0.5, 0.0)


def test_error_calls_do_not_match_but_count() -> None:
    calls = [
        Call(0, "dart_corp_code", {"corp_name": "삼성전자"}, is_error=True),
        *replay(A25, A24, NOTE, start=1),
    ]
    score = score_action(GOLD, calls, [[0], [1, 2], [3]])
    # corr 3/4; cr 4/4; mpc 1; eff 1; action (0.75 + 1) / 2 = 0.875; gated (0.75 + 0.75) / 2 = 0.75
    assert (score.corr, score.cr, score.mpc, score.action, score.action_gated) == (
        0.75,
        1.0,
        1.0,
        0.875,
        0.75,
    )
    assert score.matched == [("a25", 1), ("a24", 2), ("note", 3)]

    retried = [calls[0], *replay(CORP, A25, A24, NOTE, start=1)]
    score = score_action(GOLD, retried, [[0], [1], [2, 3], [4]])
    # corr 1; cr 4/5 = 0.8; mpc 1; eff 0.9; action (1 + 0.9) / 2 = 0.95
    assert (score.corr, score.cr, score.mpc) == (1.0, 0.8, 1.0)
    assert score.eff == pytest.approx(0.9)
    assert score.action == pytest.approx(0.95)
    assert score.matched[0] == ("corp", 1)


PAGING = {"params": ["pageNo", "numOfRows"]}
# a list call read to the end at 10 rows a page: 25 rows, 3 pages, each its own (sequential) step
PAGED = [
    [{"id": "d", "key": f"d@{p}", "tool": "t", "args": {"q": "x", "pageNo": p, "numOfRows": 10},
      "paging": {**PAGING, "rows": rows}}]
    for p, rows in ((1, [0, 10]), (2, [10, 20]), (3, [20, 25]))
]  # fmt: skip


def page(index: int, number: int, size: int, q: str = "x", total: int = 25) -> Call:
    return Call(
        index,
        "t",
        {"q": q, "pageNo": number, "numOfRows": size},
        structured={"page": number, "page_size": size, "total_count": total, "rows": []},
    )


def test_pages_are_matched_by_the_rows_they_cover() -> None:
    every = [page(0, 1, 10), page(1, 2, 10), page(2, 3, 10)]
    assert scores(PAGED, every, [[0], [1], [2]]) == (1.0, 1.0, 1.0, 1.0, 1.0)
    # one large page covers all three gold pages: corr 1, cr min(1, 3/1) = 1
    score = score_action(PAGED, [page(0, 1, 100)], [[0]])
    assert (score.corr, score.cr, score.action) == (1.0, 1.0, 1.0)
    assert score.matched == [("d", 0)], "the pages of one gold call are one call"


def test_page_one_twice_never_covers_page_two() -> None:
    # d is one gold call of 3 pages, 1 covered: corr 1/3; cr min(1, 3/2) = 1; mpc 1 (no parallel step);
    # action (1/3 + 1) / 2 = 2/3; gated (1/3 + 1/3) / 2 = 1/3
    score = score_action(PAGED, [page(0, 1, 10), page(1, 1, 10)], [[0], [1]])
    assert score.corr == pytest.approx(1 / 3)
    assert score.action == pytest.approx(2 / 3)
    assert score.action_gated == pytest.approx(1 / 3)
    assert score.matched == [("d", 0)]


def test_a_gap_between_pages_leaves_the_page_uncovered() -> None:
    # rows 0-9 (page 1 of 10) and 15-24 (page 2 of 15): gold page 2 (10-19) has a gap at 10-14; pages 1 and 3
    # are covered: 2 of 3
    score = score_action(PAGED, [page(0, 1, 10), page(1, 2, 15)], [[0], [1]])
    assert score.corr == pytest.approx(2 / 3)
    # the wrong query argument covers nothing
    assert score_action(PAGED, [page(0, 1, 100, q="y")], [[0]]).corr == 0.0


def test_alternatives_match_in_place_of_the_gold_call() -> None:
    gold = [[{"id": "a", "tool": "t", "args": {"x": "1"}, "alternatives": [
        {"tool": "u", "args": {"y": "2", "z": "free"}, "compare": ["y"]}
    ]}]]  # fmt: skip
    assert score_action(gold, [Call(0, "u", {"y": 2, "z": "other"})], [[0]]).action == 1.0
    assert score_action(gold, [Call(0, "u", {"y": 3})], [[0]]).corr == 0.0
    assert score_action(gold, [Call(0, "t", {"x": 1})], [[0]]).action == 1.0


def test_indices_and_turns_use_call_index() -> None:
    calls = replay(CORP, A25, A24, NOTE, start=10)
    score = score_action(GOLD, calls, [[10], [11, 12], [13]])
    assert score.action == 1.0
    assert score.matched == [("corp", 10), ("a25", 11), ("a24", 12), ("note", 13)]


def test_session_call_records_fit() -> None:
    records = [
        CallRecord(i, g["tool"], dict(g["args"]), False, "{}", {}, None, 1.0)
        for i, g in enumerate([CORP, A25, A24, NOTE])
    ]
    assert score_action(GOLD, records, [[0], [1, 2], [3]]).action == 1.0


def test_gold_fixture_replays_to_one() -> None:
    fixture = json.loads((ROOT / "generated/fixtures/finance/fin-005.json").read_text(encoding="utf-8"))
    units = [u for step in fixture["steps"] for u in step]
    calls = [Call(i, u["tool"], u["args"], structured=_result(u)) for i, u in enumerate(units)]
    turns, i = [], 0
    for step in fixture["steps"]:  # the calls of one gold step go out in one turn
        turns.append(list(range(i, i + len(step))))
        i += len(step)
    score = score_action(fixture["steps"], calls, turns)
    assert score.action == 1.0
    assert [key for key, _ in score.matched] == list(dict.fromkeys(u["key"].split("@")[0] for u in units))


def _result(unit: dict[str, Any]) -> dict[str, Any] | None:
    paging = unit.get("paging")
    if not paging:
        return None
    start = paging["rows"][0]
    size = unit["args"].get(paging["params"][1], 10)
    return {"page": start // size + 1, "page_size": size, "total_count": unit["total_count"], "rows": []}


def test_numeric_strings_equal_numbers() -> None:
    calls = replay(
        CORP, with_args(A25, bsns_year=2025, reprt_code=11011), with_args(A24, bsns_year=2024.0), NOTE
    )
    assert score_action(GOLD, calls, [[0], [1, 2], [3]]).action == 1.0
    # A leading zero makes a code an identifier: 126380 is not "00126380".
    wrong_code = replay(CORP, with_args(A25, corp_code=126380), A24, NOTE)
    assert score_action(GOLD, wrong_code, [[0], [1, 2], [3]]).corr == 0.75


def test_value_normalization() -> None:
    assert canonical("2025") == canonical(2025) == canonical(2025.0) == canonical(" 2025.00 ")
    assert canonical("-3.5") == canonical(-3.5)
    assert canonical("005930") != canonical(5930)
    assert canonical("005930") == canonical(" 005930")
    assert canonical(" 삼성전자\n") == canonical("삼성전자")
    assert canonical("A,B,C") == canonical("C, B ,A") == canonical(["B", "A", "C"])
    assert canonical("1,2") == canonical([2, "1"])
    assert canonical("A,B") != canonical("A,B,C")
    assert canonical(["A"]) == canonical("A")
    assert canonical(True) != canonical(1)
    assert canonical(True) != canonical("true")
    assert canonical(None) != canonical("")
    assert canonical({"a": "1"}) == canonical({"a": 1})


def test_none_equals_absent_argument() -> None:
    gold = [[{"id": "x", "tool": "t", "args": {"a": "1"}, "compare": ["a", "b"]}]]
    assert score_action(gold, [Call(0, "t", {"a": 1, "b": None})], [[0]]).corr == 1.0
    assert score_action(gold, [Call(0, "t", {"a": 1, "b": 0})], [[0]]).corr == 0.0


def test_odd_agent_arguments_never_raise() -> None:
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep]
    odd: list[Any] = [None, "corp_name=삼성전자", ["삼성전자"], 7, {"corp_name": deep}, {1: "a", None: 2}]
    calls = [Call(i, "dart_corp_code", arguments) for i, arguments in enumerate(odd)]
    calls.append(Call(len(odd), "dart_corp_code", {"corp_name": object()}))
    score = score_action(GOLD, calls, [list(range(len(calls)))])
    assert score.corr == 0.0
    assert score.matched == []
    # A gold call without arguments is matched by a call with non-dict arguments (nothing to compare).
    bare = [[{"id": "k", "tool": "t", "args": {}}]]
    assert score_action(bare, [Call(0, "t", "garbage")], [[0]]).corr == 1.0


def test_no_calls() -> None:
    assert scores(GOLD, [], []) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert scores([[CORP], [NOTE]], [], []) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert scores([], [], []) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_matching_is_one_to_one_and_greedy_in_order() -> None:
    twice = [[{"id": "p", "tool": "t", "args": {"a": 1}}, {"id": "q", "tool": "t", "args": {"a": 1}}]]
    assert match_calls(twice, [Call(0, "t", {"a": 1})]) == [("p", 0)]
    assert match_calls(twice, [Call(0, "t", {"a": 1}), Call(1, "t", {"a": "1"})]) == [("p", 0), ("q", 1)]
    # Agent order does not matter: the gold call takes the earliest matching agent call.
    assert match_calls(GOLD, replay(NOTE, A24, A25, CORP)) == [
        ("corp", 3),
        ("a25", 2),
        ("a24", 1),
        ("note", 0),
    ]


# ---------------------------------------------------------------------------------------- rows covered
# a gold list call read to the end (3 pages of 10 rows), whose later reference reads two of its rows
ROW_A = {"name": "갑", "date": "20260101"}
ROW_B = {"name": "을", "date": "20261130"}
ROW_C = {"name": "병", "date": "20250505"}
EVIDENCE_INFOS = {
    "d": {
        "evidence": {"rows": [row_key(ROW_A), row_key(ROW_B)], "total": False, "record": None},
        "feeds": [],
        "answer": True,
    }
}


def listing(index: int, rows: list[dict[str, str]], q: str = "y") -> Call:
    return Call(
        index, "t", {"q": q}, structured={"page": 1, "page_size": 10, "total_count": len(rows), "rows": rows}
    )


def test_any_query_that_returns_the_rows_read_is_credited() -> None:
    # the gold pages through 25 rows; a sorted or filtered call (other arguments) returning both rows read:
    # corr 1, cr min(1, 3/1) = 1, mpc 1 -> 1.0
    score = score_action(PAGED, [listing(0, [ROW_B, ROW_A])], [[0]], EVIDENCE_INFOS)
    assert (score.corr, score.action) == (1.0, 1.0)
    # one of the two rows: corr 1/2; action (0.5 + 1) / 2 = 0.75
    half = score_action(PAGED, [listing(0, [ROW_A, ROW_C])], [[0]], EVIDENCE_INFOS)
    assert (half.corr, half.action) == (0.5, 0.75)
    # the rows from another tool do not count
    other = [Call(0, "u", {}, structured={"rows": [ROW_A, ROW_B]})]
    assert score_action(PAGED, other, [[0]], EVIDENCE_INFOS).corr == 0.0
    # a row with one field changed is another row
    changed = score_action(PAGED, [listing(0, [ROW_A, {**ROW_B, "date": "20261129"}])], [[0]], EVIDENCE_INFOS)
    assert changed.corr == 0.5


def test_a_lookup_whose_value_the_agent_already_held_is_credited() -> None:
    # corp feeds a25 and a24; the agent skips corp and calls both with the right corp_code: corp counts, as the
    # agent held its value. corr 4/4; cr min(1, 4/3) = 1; mpc 1 -> 1.0
    infos = {
        "corp": {"evidence": None, "feeds": ["a24", "a25"], "answer": False},
        "a25": {"evidence": None, "feeds": [], "answer": True},
        "a24": {"evidence": None, "feeds": [], "answer": True},
        "note": {"evidence": None, "feeds": [], "answer": False},
    }
    score = score_action(GOLD, replay(A25, A24, NOTE), [[0, 1], [2]], infos)
    assert (score.corr, score.action) == (1.0, 1.0)
    # a wrong a24 leaves corp uncredited too: corr (0 + 1 + 0 + 1) / 4 = 0.5
    wrong = score_action(GOLD, replay(A25, with_args(A24, bsns_year="2023"), NOTE), [[0, 1], [2]], infos)
    assert wrong.corr == 0.5
    # without the fixture's information nothing is inferred: corp is missing, corr 3/4
    assert score_action(GOLD, replay(A25, A24, NOTE), [[0, 1], [2]]).corr == 0.75
