from __future__ import annotations

from typing import Any

import pytest

from kopa_gen.runtime.paths import PathError, evaluate, pool, select

RESULT = {
    "total_count": 3,
    "rows": [
        {"corp_code": "00126380", "stock_code": "005930", "clpr": "57,600"},
        {"corp_code": "00164779", "stock_code": "000660", "clpr": "180,000"},
        {"corp_code": "00999999", "stock_code": " ", "clpr": "-.39"},
    ],
    "record": {"jurir_no": "1301110006246"},
}


def test_fields_indexes_and_filters() -> None:
    assert evaluate(RESULT, "total_count") == 3
    assert evaluate(RESULT, "rows[1].corp_code") == "00164779"
    assert evaluate(RESULT, "rows[-1].corp_code") == "00999999"
    assert evaluate(RESULT, "rows[stock_code=005930].corp_code") == "00126380"
    assert evaluate(RESULT, "record.jurir_no") == "1301110006246"
    assert evaluate(RESULT, "rows[stock_code!=005930][clpr=-.39].corp_code") == "00999999"
    assert evaluate(RESULT, "rows[stock_code!=005930][0].corp_code") == "00164779"


def test_reductions_read_api_numbers() -> None:
    assert evaluate(RESULT, "max(rows[*].clpr)") == 180000
    assert evaluate(RESULT, "min(rows[*].clpr)") == -0.39
    assert evaluate(RESULT, "count(rows[*])") == 3
    assert evaluate(RESULT, "count(rows[stock_code=000000])") == 0
    assert evaluate(RESULT, "count(rows[stock_code!=005930])") == 2
    assert evaluate(RESULT, "first(rows[*].stock_code)") == "005930"


def test_ambiguity_and_mistakes_are_errors() -> None:
    with pytest.raises(PathError, match="selects 3 values where one is needed"):
        evaluate(RESULT, "rows[*].corp_code")
    with pytest.raises(PathError, match="no field 'corp'"):
        evaluate(RESULT, "rows[0].corp")
    with pytest.raises(PathError, match="index 7 outside 3 rows"):
        evaluate(RESULT, "rows[7].corp_code")
    with pytest.raises(PathError, match="nothing to reduce"):
        evaluate(RESULT, "max(rows[stock_code=x].clpr)")


def test_candidates_count_the_list_a_choice_was_made_from() -> None:
    assert select(RESULT, "rows[stock_code=005930].corp_code").candidates == 3
    assert select(RESULT, "record.jurir_no").candidates == 1


DATED = {
    "rows": [
        {"name": "가", "bas_dt": "20240105", "amount": "1,500", "sd": "서울"},
        {"name": "나", "bas_dt": "20231231", "amount": "900", "sd": "부산"},
        {"name": "다", "bas_dt": "20240201", "amount": "1,500", "sd": "부산"},
        {"name": "라", "bas_dt": "", "amount": "", "sd": "서울"},
        {"name": "마", "amount": "-", "sd": None},
    ]
}


def names(result: dict[str, Any], path: str) -> list[str]:
    return [row["name"] for row in select(result, path).values]


def test_comparisons_read_numbers_as_numbers() -> None:
    assert names(DATED, "rows[amount>=1000]") == ["가", "다"]  # "1,500" >= 1000 as numbers, not as strings
    assert names(DATED, "rows[amount>=1,500]") == ["가", "다"]
    assert names(DATED, "rows[amount>900]") == ["가", "다"]
    assert names(DATED, "rows[amount<=900]") == ["나", "마"]  # "-" is no number: "-" <= "900" as strings
    assert names(DATED, "rows[bas_dt>=20240101]") == ["가", "다"]  # YYYYMMDD; empty and missing drop out
    assert names(DATED, "rows[bas_dt<20240101]") == ["나"]
    assert evaluate(DATED, "rows[bas_dt>=20240101][amount>1000][sd=서울].name") == "가"
    # `>=` is never read as `>` then "=v", and `=` / `!=` keep comparing strings
    assert names(DATED, "rows[amount=1,500]") == ["가", "다"]
    assert names(DATED, "rows[amount!=1,500]") == ["나", "라", "마"]


def test_comparisons_read_other_values_as_strings_so_iso_dates_compare() -> None:
    dates = {
        "rows": [
            {"name": "가", "date": "2024-01-31"},
            {"name": "나", "date": "2023-12-31"},
            {"name": "다", "date": "2024-02-01"},
            {"name": "라", "date": None},
            {"name": "마"},
        ]
    }
    assert names(dates, "rows[date>=2024-01-31]") == ["가", "다"]
    assert names(dates, "rows[date<2024-01-31]") == ["나"]
    assert names(dates, "rows[date>2024-01-31][date<=2024-02-01]") == ["다"]
    assert names(dates, "rows[name>나]") == ["다", "라", "마"]


def test_extremes_keep_every_row_at_the_maximum_or_minimum() -> None:
    assert names(DATED, "rows[amount=@max]") == ["가", "다"]
    assert evaluate(DATED, "rows[amount=@min].name") == "나"
    assert evaluate(DATED, "rows[sd=부산][amount=@max].name") == "다"
    assert evaluate(RESULT, "rows[clpr=@min].corp_code") == "00999999"  # "-.39"
    # no numbers at all: text decides (YYYY.MM.DD dates, names)
    assert [r["name"] for r in select(DATED, "rows[name=@max]").values] == ["마"]
    with pytest.raises(PathError, match="selects 2 values where one is needed"):
        evaluate(DATED, "rows[amount=@max].name")


def test_mode_is_the_most_frequent_value_and_a_tie_has_no_answer() -> None:
    assert (
        evaluate({"rows": [{"v": "b"}, {"v": "a"}, {"v": "a"}, {"v": "b"}, {"v": "a"}]}, "mode(rows[*].v)")
        == "a"
    )
    assert evaluate(DATED, "mode(rows[*].amount)") == "1,500"
    with pytest.raises(PathError, match=r"mode: 2 values are equally frequent \(서울, 부산, each 2x\)"):
        evaluate(DATED, "mode(rows[*].sd)")
    with pytest.raises(PathError, match="nothing to reduce"):
        evaluate(DATED, "mode(rows[name=바].sd)")


def test_blank_tests_contains_and_prefixes() -> None:
    assert names(DATED, "rows[bas_dt]") == ["가", "나", "다"]  # '' and missing are blank
    assert names(DATED, "rows[!bas_dt]") == ["라", "마"]
    assert [r["corp_code"] for r in select(RESULT, "rows[stock_code]").values] == ["00126380", "00164779"]
    assert names(DATED, "rows[sd~=서]") == ["가", "라"]
    assert names(DATED, "rows[bas_dt^=2024]") == ["가", "다"]
    assert names(DATED, "rows[amount$=00]") == ["가", "나", "다"]


def test_a_broken_selector_says_what_a_selector_is() -> None:
    with pytest.raises(PathError, match=r"a selector is \[index\], \[\*\], \[field\], \[!field\]"):
        evaluate(DATED, "rows[amount 3].name")
    with pytest.raises(PathError, match=r"@max goes with '='"):
        evaluate(DATED, "rows[amount>@max].name")


ADDRESS = {"record": {"adres": "부산광역시 영도구 봉래동5가 디지털로 340", "cls": "K", "when": "20261016"}}


def test_functions_take_their_input_around_or_after_a_pipe() -> None:
    assert evaluate(RESULT, "max(rows[*].clpr)") == evaluate(RESULT, "rows[*].clpr | max") == 180000
    assert evaluate(ADDRESS, "record.adres | words(0, 2)") == "부산광역시 영도구"
    assert evaluate(ADDRESS, "record.adres | split(' ', 2)") == "봉래동5가"
    assert evaluate(ADDRESS, "record.adres | regex('(\\S+가) ')") == "봉래동5가"
    assert evaluate(ADDRESS, "record.adres | prefix(5)") == "부산광역시"
    assert evaluate(ADDRESS, "record.adres | suffix(3)") == "340"
    assert evaluate(ADDRESS, "record.adres | slice(6, 9)") == "영도구"
    assert evaluate(ADDRESS, "record.cls | map('Y=코스피', 'K=코스닥')") == "코스닥"
    assert evaluate({"v": "1073.0 Kcal"}, "v | number") == 1073
    assert evaluate({"v": "1073.0 Kcal"}, "v | number | fixed(1)") == "1073.0"
    assert evaluate({"v": "-1,234.5원"}, "v | number | abs") == 1234.5
    prices = {"rows": [{"p": "￦9,500"}, {"p": "￦13,000"}, {"p": "₩ 7,000원"}]}
    assert evaluate(prices, "rows[*].p | max") == 13000  # as numbers: text order would pick ￦9,500
    assert evaluate(prices, "rows[p=@min].p") == "₩ 7,000원"
    assert evaluate(prices, "rows[*].p | sum") == 29500
    with pytest.raises(PathError, match="'￦' is not a number"):
        evaluate({"rows": [{"p": "￦"}, {"p": "￦1"}]}, "rows[*].p | max")
    assert evaluate({"v": "2.345"}, "v | round(2)") == 2.35
    assert evaluate(RESULT, "rows[*].stock_code | join('/')") == "005930/000660/ "
    assert evaluate(DATED, "rows[*].sd | unique | list") == ["서울", "부산", None]
    assert evaluate(DATED, "rows[*].amount | sort | take(2)") == ["900", "1,500"]  # numbers first


def test_date_arithmetic() -> None:
    assert evaluate(ADDRESS, "record.when | add_days(16)") == "2026-11-01"
    assert evaluate(ADDRESS, "record.when | add_days(-16) | ymd") == "20260930"
    assert evaluate({"d": "2026-01-31"}, "d | add_months(1)") == "2026-02-28"
    assert evaluate(ADDRESS, "record.when | weekday") == "금"
    with pytest.raises(PathError, match="'2026-13-01' is not a valid date"):
        evaluate({"d": "2026-13-01"}, "d | date")


def test_references_fill_filter_values_and_arguments() -> None:
    env = {"code": "005930", "n": 2}
    assert evaluate(RESULT, "rows[stock_code={code}].corp_code", env) == "00126380"
    assert evaluate(ADDRESS, "record.adres | words(0, {n})", env) == "부산광역시 영도구"
    with pytest.raises(PathError, match=r"unknown reference \{who\}; references given: code, n"):
        evaluate(RESULT, "rows[stock_code={who}].corp_code", env)


def test_korean_field_names_and_nested_filters() -> None:
    law = {"법령": [{"법령명한글": "민법", "조문": [{"조문번호": "1"}, {"조문번호": "2"}]}]}
    assert evaluate(law, "법령[법령명한글=민법].조문[*].조문번호 | count") == 2
    fan = [
        {"each": {"name": "A"}, "result": {"total_count": 3}},
        {"each": {"name": "B"}, "result": {"total_count": 5}},
    ]
    assert evaluate(fan, "[result.total_count=@max].each.name") == "B"
    assert evaluate(fan, "[*].result.total_count | sum") == 8


def test_pool_is_what_the_choice_was_made_among() -> None:
    assert pool(RESULT, "rows[stock_code=005930].corp_code") == ["00126380", "00164779", "00999999"]
    assert pool(RESULT, "max(rows[*].clpr)") == ["57,600", "180,000", "-.39", 180000]
    assert pool(RESULT, "count(rows[stock_code!=005930])") == [3, 2]
    assert pool(ADDRESS, "record.adres | words(0, 2)") == ["부산광역시 영도구"]


def test_a_presence_filter_stays_when_the_pool_relaxes_the_choosing_ones() -> None:
    # three addresses, one without a 리: the group chooses among the 리s; relaxing [liNm] to every row would make
    # the group fail on the row without one and leave only the answer itself as its pool
    addresses = {
        "total_count": 3,
        "rows": [{"liNm": "사담리"}, {"liNm": "사담리"}, {"liNm": "관평리"}, {"rn": "공단로"}],
    }
    path = "rows[liNm] | group(liNm, count()) | argmax"
    assert evaluate(addresses, path) == "사담리"
    assert pool(addresses, path) == ["사담리", "관평리"]
