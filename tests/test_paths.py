from __future__ import annotations

from typing import Any

import pytest

from kopa_gen.runtime.paths import PathError, evaluate, select

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
    assert select(DATED, "rows[name=@max]").values == []  # no numbers at all: nothing is the maximum
    with pytest.raises(PathError, match="selects 2 values where one is needed"):
        evaluate(DATED, "rows[amount=@max].name")


def test_mode_is_the_most_frequent_value_and_a_tie_goes_to_the_first_seen() -> None:
    assert (
        evaluate({"rows": [{"v": "b"}, {"v": "a"}, {"v": "a"}, {"v": "b"}, {"v": "a"}]}, "mode(rows[*].v)")
        == "a"
    )
    assert evaluate(DATED, "mode(rows[*].sd)") == "서울"  # 서울 2, 부산 2: 서울 came first
    assert evaluate(DATED, "mode(rows[*].amount)") == "1,500"
    with pytest.raises(PathError, match="nothing to reduce"):
        evaluate(DATED, "mode(rows[name=바].sd)")


def test_a_selector_that_is_no_filter_says_what_would_be() -> None:
    with pytest.raises(PathError, match=r"selector \[x\] is not an index, \*, field=value"):
        evaluate(DATED, "rows[x].name")
