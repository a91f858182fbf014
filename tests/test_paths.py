from __future__ import annotations

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
