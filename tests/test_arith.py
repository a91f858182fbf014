"""Arithmetic, group-by, argmax over groups and key joins in the path language and in `answer_from` (docs/tasks.md).
The figures below are worked by hand from the rows written here: a 시도's five 구 and their votes, as a
politics task reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kopa_gen.language.task import Combine, From
from kopa_gen.runtime.answer import answer_pool, derive_answer
from kopa_gen.runtime.paths import PathError, evaluate, pool

COUNTS = {
    "rows": [
        {"wiwName": "합계", "sunsu": "2,000", "tusu": "1,500", "dugsu02": "900"},
        {"wiwName": "창원시의창구", "sunsu": "400", "tusu": "300", "dugsu02": "150"},
        {"wiwName": "창원시성산구", "sunsu": "500", "tusu": "350", "dugsu02": "200"},
        {"wiwName": "김해시", "sunsu": "600", "tusu": "480", "dugsu02": "300"},
        {"wiwName": "하동군", "sunsu": "500", "tusu": "370", "dugsu02": "250"},
    ]
}
STATIONS = {
    "rows": [
        {"wiwName": "창원시의창구", "name": "의창 제1투표소"},
        {"wiwName": "창원시의창구", "name": "의창 제2투표소"},
        {"wiwName": "김해시", "name": "김해 제1투표소"},
        {"wiwName": "김해시", "name": "김해 제2투표소"},
        {"wiwName": "김해시", "name": "김해 제3투표소"},
        {"wiwName": "하동군", "name": "하동 제1투표소"},
    ]
}
PER_GU = {
    "rows": [
        {"gu": "창원시의창구", "stations": "2"},
        {"gu": "김해시", "stations": "3"},
        {"gu": "하동군", "stations": "1"},
        {"gu": "창원시성산구", "stations": "0"},
    ]
}


def test_arithmetic_between_fields_of_one_row() -> None:
    # turnout = 투표수 / 선거인수: 370 / 500 = 74%
    assert evaluate(COUNTS, "rows[wiwName=하동군] | calc('tusu / sunsu * 100')") == 74
    assert evaluate(COUNTS, "rows[wiwName=김해시] | calc(tusu / sunsu * 100)") == 80
    # 300 / 400 = 0.75; (350 - 200) / 350 = 42.857.. -> 42.9
    assert evaluate(COUNTS, "rows[wiwName=창원시의창구] | calc('dugsu02 / tusu')") == 0.5
    assert (
        evaluate(COUNTS, "rows[wiwName=창원시성산구] | calc('(tusu - dugsu02) / tusu * 100') | round(1)")
        == 42.9
    )
    backticked = {"rows": [{"주당 현금배당금(원)": "1,444", "주가": "72,200"}]}
    assert evaluate(backticked, "rows[0] | calc('`주당 현금배당금(원)` / 주가 * 100') | round(2)") == 2


def test_group_by_with_aggregates_and_argmax_over_groups() -> None:
    districts = "rows[wiwName!=합계]"
    # the 시 of each 구: 창원시 (의창 150 + 성산 200 = 350), 김해시 300, 하동군 250
    by_city = f"{districts} | group(wiwName, 'sum(dugsu02)')"
    assert evaluate(COUNTS, by_city + " | argmax") == "김해시"
    assert evaluate(COUNTS, f"{districts}[wiwName^=창원시][*].dugsu02 | sum") == 350
    assert evaluate(COUNTS, by_city + " | list") == [
        {"key": "창원시의창구", "value": 150},
        {"key": "창원시성산구", "value": 200},
        {"key": "김해시", "value": 300},
        {"key": "하동군", "value": 250},
    ]
    # the 구 with the most polling stations: 김해시 (3)
    assert evaluate(STATIONS, "rows | group(wiwName, count()) | argmax") == "김해시"
    assert evaluate(STATIONS, "rows | group(wiwName, count()) | argmin(first)") == "하동군"
    # turnout per group as a ratio of sums, not a sum of ratios: 김해시 480/600 = 80% is the highest
    assert (
        evaluate(COUNTS, f"{districts} | group(wiwName, sum(tusu) / sum(sunsu) * 100) | argmax") == "김해시"
    )
    # per row: turnout 의창 75%, 성산 70%, 김해 80%, 하동 74%; the lowest is 성산
    assert evaluate(COUNTS, f"{districts} | by(wiwName, 'tusu / sunsu') | argmin") == "창원시성산구"


def test_a_tie_is_an_error_unless_a_tie_break_is_declared() -> None:
    tied = {"rows": [{"g": "가", "v": "3"}, {"g": "나", "v": "5"}, {"g": "다", "v": "5"}]}
    with pytest.raises(PathError, match="argmax: a tie at 5 between 나, 다; no single answer"):
        evaluate(tied, "rows | group(g, sum(v)) | argmax")
    assert evaluate(tied, "rows | group(g, sum(v)) | argmax(first)") == "나"
    assert evaluate(tied, "rows | group(g, sum(v)) | argmax('last')") == "다"
    with pytest.raises(PathError, match="the tie-break is 'first' or 'last'"):
        evaluate(tied, "rows | group(g, sum(v)) | argmax(middle)")
    # a row filter at an extreme already refuses a tie where one value is needed
    with pytest.raises(PathError, match="selects 2 values where one is needed"):
        evaluate(tied, "rows[v=@max].g")


def test_a_join_of_two_results_on_a_key() -> None:
    env = {"stations": PER_GU["rows"]}
    # voters per polling station: 의창 400/2 = 200, 김해 600/3 = 200, 하동 500/1 = 500 (성산: 0 stations)
    path = "rows[wiwName!=합계][wiwName!=창원시성산구] | merge({stations}, wiwName, gu) | by(wiwName, 'sunsu / joined.stations')"
    assert evaluate(COUNTS, path + " | argmax", env) == "하동군"
    with pytest.raises(PathError, match="a tie at 200 between 창원시의창구, 김해시"):
        evaluate(COUNTS, path + " | argmin", env)
    with pytest.raises(PathError, match=r"division by zero in 'sunsu / joined\.stations'"):
        evaluate(
            COUNTS,
            "rows[wiwName!=합계] | merge({stations}, wiwName, gu) | by(wiwName, 'sunsu / joined.stations') | argmax",
            env,
        )
    doubled = {"stations": [*PER_GU["rows"], {"gu": "김해시", "stations": "9"}]}
    with pytest.raises(PathError, match="merge: gu=김해시 is on several rows of the other result"):
        evaluate(COUNTS, "rows[wiwName=김해시] | merge({stations}, wiwName, gu) | list", doubled)
    with pytest.raises(
        PathError, match="merge: no row's wiwName equals the other result's gu; nothing joins"
    ):
        evaluate(COUNTS, "rows[wiwName=합계] | merge({stations}, wiwName, gu) | list", env)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("rows | calc('tusu ** 2')", "'tusu ** 2' is not arithmetic"),
        ("rows | calc('__import__(1)')", "is not arithmetic"),
        ("rows | group(wiwName, tusu)", "the field 'tusu' needs an aggregate around it"),
        ("rows | group(wiwName, median(tusu))", "unknown aggregate 'median'"),
        ("rows | group(wiwName, sum(none))", "no field 'none' in the row"),
        ("rows[0] | calc('tusu / (sunsu - sunsu)')", "division by zero"),
        (
            "rows[*].tusu | argmax",
            "argmax chooses among {key, value} pairs; give it `group(...)` or `by(...)`",
        ),
        ("rows[*].tusu | group(x, count())", "group: item 0 is '1,500', not a row"),
    ],
)
def test_mistakes_say_what_is_wrong(path: str, message: str) -> None:
    with pytest.raises(PathError) as info:
        evaluate(COUNTS, path)
    assert message in str(info.value)


def test_the_pool_of_an_argmax_over_groups_is_every_group() -> None:
    assert pool(STATIONS, "rows | group(wiwName, count()) | argmax") == ["창원시의창구", "김해시", "하동군"]


def _ref(call: str, path: str) -> From:
    return From.model_validate({"from": call, "path": path})


def test_arithmetic_between_results() -> None:
    # the paper's example: a convertible bond's refixing floor 532원 against the prior close 1,680원 -> 31.7%
    results = {"bond": {"record": {"floor": "532"}}, "price": {"rows": [{"clpr": "1,680"}]}}
    of = [_ref("bond", "record.floor"), _ref("price", "rows[0].clpr")]
    assert derive_answer(results, Combine(op="percent", of=of, digits=1)) == 31.7
    assert derive_answer(results, Combine(op="ratio", of=of, digits=3)) == 0.317
    assert derive_answer(results, Combine(op="change", of=of, digits=1)) == -68.3  # (532 - 1680) / 1680
    assert derive_answer(results, Combine(op="product", of=of)) == 893760
    assert derive_answer(results, Combine(op="avg", of=of)) == 1106
    assert 31.7 in answer_pool(results, Combine(op="percent", of=of, digits=1))
    zero = {"bond": {"record": {"floor": "532"}}, "price": {"rows": [{"clpr": "0"}]}}
    with pytest.raises(PathError, match="op percent: the second value is 0"):
        derive_answer(zero, Combine(op="percent", of=of))


def test_an_argmax_between_results_refuses_a_tie_without_a_rule() -> None:
    results = {"a": {"record": {"n": "가", "v": "7"}}, "b": {"record": {"n": "나", "v": "7"}}}
    of = [_ref("a", "record.v"), _ref("b", "record.v")]
    labels = [_ref("a", "record.n"), _ref("b", "record.n")]
    with pytest.raises(PathError, match="argmax: a tie at 7 between 가, 나; no single answer"):
        derive_answer(results, Combine(op="argmax", of=of, labels=labels))
    assert derive_answer(results, Combine(op="argmax", of=of, labels=labels, tie_break="last")) == "나"


@pytest.mark.parametrize(
    ("combine", "message"),
    [
        (
            {"op": "percent", "of": [{"from": "a"}, {"from": "b"}, {"from": "c"}]},
            "op percent takes exactly 2",
        ),
        ({"op": "list", "of": [{"from": "a"}, {"from": "b"}], "digits": 1}, "op list does not give one"),
        (
            {"op": "sum", "of": [{"from": "a"}, {"from": "b"}], "tie_break": "first"},
            "belongs to argmax / argmin",
        ),
    ],
)
def test_a_combine_that_cannot_mean_anything_is_refused(combine: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Combine.model_validate(combine)


def test_tasks_md_documents_every_function() -> None:
    from kopa_gen.language.functions import FUNCTIONS

    guide = (Path(__file__).parents[1] / "docs" / "tasks.md").read_text("utf-8")
    missing = [name for name in FUNCTIONS if f"`{name}" not in guide]
    assert missing == []
