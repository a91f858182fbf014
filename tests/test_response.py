"""RESPONSE axis: Korean number/date/text normalization, answer spans, and matching rules.

Every expected value below is written out by hand; none is computed by the code under test.
"""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from kopa_gen.evaluate.response import answer_span, score_response
from kopa_gen.language.answers import (
    Answer,
    DateAnswer,
    ListAnswer,
    NumberAnswer,
    TextAnswer,
    answer_adapter,
)
from kopa_gen.language.normalize import (
    find_dates,
    find_numbers,
    find_text,
    normalize_text,
    parse_date,
    parse_number,
)

YEAR = 2026


def passes(message: str, answer: Answer) -> bool:
    return score_response(message, answer, YEAR).passed


# ---------------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("1조 2,345억 6,789만 원", 1234567890000, "원"),
        ("약 3.5억", 350000000, None),
        ("12.5%", 12.5, "%"),
        ("-1,234", -1234, None),
        ("△1,234", -1234, None),
        ("△ 1,234", -1234, None),
        ("−7", -7, None),
        ("▲3.2%", 3.2, "%"),
        ("1.2만 명", 12000, "명"),
        ("57,600원", 57600, "원"),
        ("0.35", 0.35, None),
        ("0", 0, None),
        ("3천만 원", 30000000, "원"),
        ("1억 5천만", 150000000, None),
        ("2천5백만", 25000000, None),
        ("5백만원", 5000000, "원"),
        ("12억 3,456만 7,890원", 1234567890, "원"),
        ("3억5000", 300005000, None),
        ("1조원", 1000000000000, "원"),
        ("2만여 명", 20000, "명"),
        ("3.5억 원가량", 350000000, "원"),
        ("１２３", 123, None),
        ("12.5%p", 12.5, "%p"),
        ("천만 원", 10000000, "원"),
        ("천사백사십육 원", 1446, "원"),
        ("이십삼 명", 23, "명"),
    ],
)
def test_parse_number(text: str, value: int | float, unit: str | None) -> None:
    got = parse_number(text)
    assert got is not None
    assert got.value == value
    assert type(got.value) is type(value)
    assert got.unit == unit


@pytest.mark.parametrize("text", ["324명 이상", "1, 2", "005930", "구조", "1억 5000", "삼성전자", ""])
def test_parse_number_rejects_what_is_not_exactly_one_number(text: str) -> None:
    assert parse_number(text) is None


def test_find_numbers_reads_amounts_and_flags_the_rest() -> None:
    found = find_numbers("2026년 11월 29일 기준 1위 학교는 1,000명 중 324명(제3조)")
    assert [(m.text, m.value, m.quantity) for m in found] == [
        ("2026년", 2026, False),
        ("11", 11, False),
        ("29일", 29, False),
        ("1위", 1, False),
        ("1,000명", 1000, True),
        ("324명", 324, True),
        ("3", 3, False),
    ]


def test_find_numbers_skips_identifiers_and_hyphens() -> None:
    assert [m.value for m in find_numbers("종목코드 005930, 전화 02-123-4567, H200 3대")] == [123, 4567, 3]
    # '조회' is a word, not 조 (10^12)
    assert [m.value for m in find_numbers("324조회")] == [324]
    # list enumerators and times are not amounts; an invalid 8-digit 'date' is an amount
    assert [m.quantity for m in find_numbers("1. 57,600원\n2) 14:30 12345678")] == [
        False,
        True,
        False,
        False,
        False,
        True,
    ]


# ------------------------------------------------------------------------------------------------ dates

NOV_29 = dt.date(2026, 11, 29)


@pytest.mark.parametrize(
    "text",
    [
        "2026년 11월 29일",
        "2026년11월29일",
        "2026. 11. 29.",
        "2026.11.29",
        "2026-11-29",
        "20261129",
        "2026/11/29",
        "11월 29일",
        "2026년 11월 29일(일)",
        " ２０２６-11-29 ",
    ],
)
def test_parse_date_every_form(text: str) -> None:
    assert parse_date(text, YEAR) == NOV_29


@pytest.mark.parametrize("text", ["2026년 2월 30일", "2026-13-01", "2026.11.31", "2026.11.29 324", "내일"])
def test_parse_date_rejects_impossible_or_extra(text: str) -> None:
    assert parse_date(text, YEAR) is None


def test_month_day_needs_a_reference_year() -> None:
    assert parse_date("11월 29일") is None
    assert parse_date("3월 1일", 2025) == dt.date(2025, 3, 1)
    assert [d.value for d in find_dates("2026-02-30 다음 3월 2일", 2026)] == [dt.date(2026, 3, 2)]


# ------------------------------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("삼성전자(주)", "삼성전자"),
        ("주식회사 삼성전자", "삼성전자"),
        ("㈜삼성전자", "삼성전자"),
        ("（주）삼성전자", "삼성전자"),
        ("(유)한빛상사", "한빛상사"),
        ("  Samsung   ELECTRONICS ", "samsung electronics"),
        ("S-Oil", "s oil"),
    ],
)
def test_normalize_text(text: str, key: str) -> None:
    assert normalize_text(text) == key


def test_find_text_spacing_particles_and_latin_edges() -> None:
    assert find_text("SK 하이닉스가 1위", "SK하이닉스") == 0
    assert find_text("답은 삼성전자가 맞습니다", "삼성전자(주)") == 3
    assert find_text("LGD 실적", "LG") is None
    assert find_text("LG 실적", "LG") == 0


# ---------------------------------------------------------------------------------------------- answers


def test_answer_union_parses_by_kind() -> None:
    parsed = answer_adapter.validate_python(
        {"kind": "list", "ordered": True, "items": [{"kind": "date", "value": "2026-11-29"}]}
    )
    assert parsed == ListAnswer(items=[DateAnswer(value=NOV_29)], ordered=True)
    assert answer_adapter.validate_python({"kind": "number", "value": 3}) == NumberAnswer(value=3)


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "number", "value": True},
        {"kind": "number", "value": 1, "tolerance": -1},
        {"kind": "number", "value": 1, "extra": 1},
        {"kind": "text", "value": "(주)"},
        {"kind": "list", "items": []},
        {"kind": "list", "items": [{"kind": "number", "value": 1}, {"kind": "text", "value": "a"}]},
        {"value": 1},
    ],
)
def test_answer_validation_errors(data: object) -> None:
    with pytest.raises(ValidationError):
        answer_adapter.validate_python(data)


# ---------------------------------------------------------------------------------------- number rules


def test_committed_value_rule() -> None:
    gold = NumberAnswer(value=324, unit="명")
    assert passes("1,000명 중 324명", gold)
    assert passes("2026년 11월 29일 기준 재학생은 324명", gold)
    assert passes("재학생은 324명입니다 (2025년 12월 기준).", gold)
    decoys = "후보: 10, 52, 97, 150, 324, 411, 508, 640, 777, 901"
    verdict = score_response(decoys, gold, YEAR)
    assert not verdict.passed
    assert verdict.reason == "states several values (a list or a range), not one"
    assert not passes("324명 중 120명이 남학생", gold)


@pytest.mark.parametrize(
    ("message", "gold", "ok"),
    [
        ("100.5", NumberAnswer(value=100, tolerance=0.5), True),
        ("99.5", NumberAnswer(value=100, tolerance=0.5), True),
        ("100.51", NumberAnswer(value=100, tolerance=0.5), False),
        ("99.49", NumberAnswer(value=100, tolerance=0.5), False),
        ("1,010", NumberAnswer(value=1000, rel_tolerance=0.01), True),
        ("990", NumberAnswer(value=1000, rel_tolerance=0.01), True),
        ("1,010.01", NumberAnswer(value=1000, rel_tolerance=0.01), False),
        ("0.36", NumberAnswer(value=0.35, tolerance=0.01), True),
        ("0.361", NumberAnswer(value=0.35, tolerance=0.01), False),
        ("100", NumberAnswer(value=100), True),
        ("100.001", NumberAnswer(value=100), False),
        ("약 3.5억 원", NumberAnswer(value=350_000_000), True),
        ("약 3.5억 원", NumberAnswer(value=340_000_000, rel_tolerance=0.03), True),
        ("약 3.5억 원", NumberAnswer(value=340_000_000, rel_tolerance=0.02), False),
        ("△1,234백만원", NumberAnswer(value=-1_234_000_000), True),
        ("전년 대비 -1,234", NumberAnswer(value=-1234), True),
        ("전년 대비 1,234", NumberAnswer(value=-1234), False),
        ("비율은 12.5%입니다", NumberAnswer(value=12.5, unit="%"), True),
        ("총 1.2만 명", NumberAnswer(value=12000, unit="명"), True),
        ("1조 2,345억 6,789만 원", NumberAnswer(value=1_234_567_890_000, unit="원"), True),
        ("설립연도는 1969년입니다", NumberAnswer(value=1969), True),
        ("답을 찾지 못했습니다", NumberAnswer(value=0), False),
    ],
)
def test_number_tolerance_signs_and_units(message: str, gold: NumberAnswer, ok: bool) -> None:
    assert passes(message, gold) is ok


def test_marker_wins_over_the_rest_of_the_message() -> None:
    gold = NumberAnswer(value=324)
    assert passes("정답: 324명\n참고로 전체 학생은 1,000명입니다.", gold)
    assert passes("최종 답:\n\n324명\n\n근거: 1,000명 중 일부", gold)
    assert passes("Answer: 324\nTotal enrolment was 1,000.", gold)
    assert passes("**정답:** 324명\n(전체 1,000명)", gold)
    assert passes("**정답: 324명**", gold)
    # a marker is authoritative: the value elsewhere does not rescue a wrong marked answer
    assert not passes("324명으로 보입니다.\n정답: 1,000명", gold)
    assert not passes("324명이 맞는 것 같습니다.\n답: 알 수 없음", gold)
    # the last marker is the final answer
    assert passes("답: 300명\n다시 계산했습니다.\n최종 답: 324명", gold)
    # '대답:' is not a marker
    span = answer_span("대답: 5\n총 324명", gold, YEAR)
    assert span.source == "message"


def test_bold_narrows_a_scalar_answer() -> None:
    gold = NumberAnswer(value=324)
    verdict = score_response("재학생은 **324명**이며 전체 1,000명의 32.4%입니다.", gold, YEAR)
    assert verdict.passed
    assert verdict.source == "bold"
    assert verdict.extracted == "324명"
    # inside a marked line too
    assert passes("정답: **324명** (전체 1,000명 중)", gold)
    # a bold label or heading without a number does not capture the answer
    assert passes("**요약**:\n전체 1,000명 중 324명", gold)
    assert passes("## **결과**\n총 324명", gold)


# ------------------------------------------------------------------------------------------ date rules


@pytest.mark.parametrize(
    "message",
    [
        "개교일은 2026년 11월 29일입니다.",
        "정답: 2026. 11. 29.",
        "2026.11.29",
        "발표일: 2026-11-29",
        "기준일자 20261129",
        "2026/11/29에 공시",
        "11월 29일에 열립니다",
    ],
)
def test_date_every_form_passes(message: str) -> None:
    assert passes(message, DateAnswer(value=NOV_29))


def test_date_last_candidate_and_impossible_dates() -> None:
    gold = DateAnswer(value=NOV_29)
    assert passes("접수는 2026-11-01부터, 마감은 2026-11-29", gold)
    assert not passes("마감은 2026-11-29, 발표는 2026-12-15", gold)
    impossible = score_response("2026년 2월 30일", DateAnswer(value=dt.date(2026, 2, 28)), YEAR)
    assert not impossible.passed
    assert impossible.reason == "no valid date in the message"
    # the impossible date is no candidate: what is left is one date, the wrong one
    assert score_response("2026년 2월 30일 또는 3월 2일", gold, YEAR).extracted == "3월 2일"


# ------------------------------------------------------------------------------------------ text rules


def test_text_aliases_and_corporate_forms() -> None:
    gold = TextAnswer(value="삼성전자", aliases=["Samsung Electronics"])
    assert passes("가장 큰 회사는 삼성전자(주)입니다.", gold)
    assert passes("주식회사 삼성전자", gold)
    assert passes("㈜삼성전자가 1위입니다", gold)
    assert passes("The answer is SAMSUNG ELECTRONICS.", gold)
    assert passes("삼성 전자", gold)
    assert not passes("SK하이닉스입니다", gold)
    # the marked answer decides even when the gold name appears elsewhere
    assert not passes("삼성전자와 비교하면...\n정답: SK하이닉스", gold)
    # two spellings of the gold are one answer; a distractor beside them is not
    assert passes("Samsung Electronics, 삼성전자", gold)
    assert not score_response("SK하이닉스, 삼성전자", gold, YEAR, ["SK하이닉스"]).passed
    assert passes("정답: ㈜한빛", TextAnswer(value="한빛(주)"))


def test_a_name_with_a_comma_is_read_whole_for_longer_names() -> None:
    """Punctuation ends a name's phrase, but not inside the gold's own name: 'Lg America, Inc 지사' is a branch."""
    gold = TextAnswer(value="Lg America, Inc.")
    pool = ["Lg America, Inc.", "Lg (Thailand) Co., Ltd."]
    query = "총자산이 가장 큰 종속기업은?"
    assert score_response("가장 큰 곳은 Lg America, Inc입니다.", gold, YEAR, pool, query).passed
    assert not score_response("가장 큰 곳은 Lg America, Inc 지사입니다.", gold, YEAR, pool, query).passed
    assert passes("가장 큰 곳은 코재정보통신(주) ← 총자산 최대", TextAnswer(value="코재정보통신(주)"))


# ------------------------------------------------------------------------------------------ list rules


def test_unordered_number_list_forbids_extras() -> None:
    gold = ListAnswer(items=[NumberAnswer(value=512), NumberAnswer(value=324)])
    assert passes("정답: 324명, 512명", gold)
    assert passes("512명과 324명입니다. 다시 말해 324명, 512명.", gold)
    extra = score_response("정답: 324명, 512명, 100명", gold, YEAR)
    assert not extra.passed
    assert extra.reason == "extra value 100 is not a gold item"
    missing = score_response("정답: 324명", gold, YEAR)
    assert not missing.passed
    assert missing.reason == "item 1 (512) not stated in the marked answer"
    # ranks and list enumerators are not extra values
    assert passes("1. 512명\n2. 324명", gold)


def test_ordered_number_list() -> None:
    gold = ListAnswer(items=[NumberAnswer(value=512), NumberAnswer(value=324, tolerance=1)], ordered=True)
    assert passes("1위 512명, 2위 325명", gold)
    assert not passes("1위 325명, 2위 512명", gold)
    assert not passes("512명, 324명, 100명", gold)
    assert passes("512명, 324명 (1위가 512명)", gold)


def test_date_list() -> None:
    gold = ListAnswer(items=[DateAnswer(value=NOV_29), DateAnswer(value=dt.date(2026, 12, 1))])
    assert passes("정답: 12월 1일, 11월 29일", gold)
    assert not passes("정답: 2026-11-29, 2026-12-01, 2026-12-02", gold)


def test_text_lists_ordered_and_unordered() -> None:
    names = [TextAnswer(value="삼성전자"), TextAnswer(value="SK하이닉스", aliases=["하이닉스"])]
    unordered = ListAnswer(items=names)
    ordered = ListAnswer(items=names, ordered=True)
    message = "정답:\n- SK 하이닉스\n- 삼성전자(주)\n\n참고: LG전자"
    assert passes(message, unordered)
    assert not passes(message, ordered)
    assert passes("1. 삼성전자\n2. 하이닉스", ordered)
    assert not passes("정답: 삼성전자, LG전자", unordered)


def test_what_is_not_an_amount() -> None:
    # '등' after a space means "etc.", attached it is a rank
    assert [(m.value, m.unit, m.quantity) for m in find_numbers("200,000 등, 2등")] == [
        (200000, None, True),
        (2, "등", False),
    ]
    # a number ending a line with a full stop is not a list enumerator
    assert passes("재학생 수\n324.\n", NumberAnswer(value=324))
    # only calendar words: they become candidates again; beside an amount they are not
    assert passes("설립연도는 1969년입니다", NumberAnswer(value=1969))
    assert passes("2026년 11월 기준 324명", NumberAnswer(value=324))


def test_verdict_fields() -> None:
    verdict = score_response("Final answer: 2026-11-29 (Sunday)", DateAnswer(value=NOV_29), YEAR)
    assert verdict.passed
    assert verdict.extracted == "2026-11-29"
    assert verdict.source == "marker"
    assert verdict.reason == "date 2026-11-29 equals 2026-11-29"
    wrong = score_response("정답: 57,000원", NumberAnswer(value=57600, tolerance=100), YEAR)
    assert not wrong.passed and wrong.readable
    assert wrong.extracted == "57,000원"
    assert wrong.reason == "'57,000원' is off from 57600 by 600"
    unreadable = score_response("정답: 모르겠습니다", NumberAnswer(value=57600), YEAR)
    assert not unreadable.passed and not unreadable.readable


@pytest.mark.parametrize(
    ("message", "ok", "reason"),
    [
        # a span of time as a person says it is one amount (the question asked '몇 초', gold 199초)
        ("가장 빨리 오는 버스는 3분 19초 뒤에 도착합니다.", True, None),
        ("3분 19초, 즉 199초 남았습니다.", True, None),
        ("약 199초(3분 19초) 남았습니다.", True, None),
        ("3분 20초 뒤에 도착합니다.", False, "'3분 20초' is off from 199 초 by 1"),
        # an amount said twice must be one amount: the opponent's 'wrong, i.e. right'
        ("240초, 즉 199초입니다.", False, "contradicts itself: says one amount as two"),
        ("199초, 다시 말해 240초입니다.", False, "contradicts itself: says one amount as two"),
        # one part alone is no span in parts: 3분 is not read as 180초
        ("3분입니다.", False, None),
    ],
)
def test_a_time_in_parts_is_one_amount_and_an_amount_said_twice_must_agree(
    message: str, ok: bool, reason: str | None
) -> None:
    gold = NumberAnswer(value=199, unit="초")
    verdict = score_response(message, gold, YEAR)
    assert verdict.passed is ok, verdict.reason
    if reason is not None:
        assert verdict.reason == reason


def test_find_numbers_reads_a_time_in_parts_as_one_number() -> None:
    found = [(m.text, m.value, m.unit) for m in find_numbers("2시간 3분 4초 걸렸고, 1시간 5분 쉬었다")]
    assert found == [("2시간 3분 4초", 7384, "초"), ("1시간 5분", 65, "분")]
    # parts out of order, a comma between them, or a fraction before a smaller part stay apart
    assert [m.text for m in find_numbers("19초 3분, 3분, 19초, 1.5시간 3분")] == [
        "19초",
        "3분",
        "3분",
        "19초",
        "1.5시간",
        "3분",
    ]


@pytest.mark.parametrize(
    ("message", "gold", "ok"),
    [
        # 'A에서 B를 빼면 얼마인가요?' answered in words: A is less than B by the amount
        ("2023년 1분기가 2024년 1분기보다 1억 7,805만 9천 원 적습니다.", -178_059_000, True),
        ("2023년 1분기는 2024년 1분기보다 178,059,000원 감소했습니다.", -178_059_000, True),
        ("2023년 1분기가 2024년 1분기보다 178,059,000원 많습니다.", -178_059_000, False),
        ("A가 B보다 178,059,000원 적습니다.", 178_059_000, False),
        ("A가 B보다 178,059,000원 많습니다.", 178_059_000, True),
        # no comparison: an amount followed by 적은 is still the amount
        ("적은 금액인 178,059,000원입니다.", 178_059_000, True),
    ],
)
def test_a_difference_said_as_less_than_is_negative(message: str, gold: int, ok: bool) -> None:
    verdict = score_response(message, NumberAnswer(value=gold, unit="원"), YEAR)
    assert verdict.passed is ok, verdict.reason
