"""Text mode's `최종 답:` line for questions that ask for several values, where a value may hold commas itself
(English addresses) or thousands separators. Cases written as a model would answer and as an opponent would try
to pass; expectations are what a careful human grader would say."""

from __future__ import annotations

import pytest

from kopa_gen.evaluate.response import score_text
from kopa_gen.language.answers import answer_adapter

A = "146 Beonyeong-ro, Suji-myeon, Namwon-si, Jeonbuk-do"
B = "266 Munhwa-ro, Seongju-myeon, Boryeong-si, Chungcheongnam-do"
# what the chain also offered: the same street numbers elsewhere
OTHER_A = "146 Beonyeong-ro, Namhansanseong-myeon, Gwangju-si, Gyeonggi-do"
OTHER_B = "266 Munhwa-ro, Guri-si, Gyeonggi-do"
ADDRESSES = answer_adapter.validate_python(
    {"kind": "list", "items": [{"kind": "text", "value": A}, {"kind": "text", "value": B}]}
)
AMOUNTS = answer_adapter.validate_python(
    {
        "kind": "list",
        "items": [
            {"kind": "number", "value": 1234, "unit": "원"},
            {"kind": "number", "value": 5678, "unit": "원"},
        ],
    }
)

ADDRESS_CASES = [
    ("commas only", f"최종 답: {A}, {B}", True),
    ("semicolons, as the prompt asks", f"최종 답: {A}; {B}", True),
    ("other order", f"최종 답: {B}; {A}", True),
    ("joined by 그리고", f"최종 답: {A} 그리고 {B}", True),
    ("labelled by company", f"최종 답: 에테(주) {A}, 보금(주) {B}", True),
    ("numbered list under the label", f"최종 답:\n1. 에테: {A}\n2. 보금: {B}", True),
    ("bulleted list under the label", f"두 회사의 영문 주소입니다.\n\n최종 답:\n- {A}\n- {B}", True),
    ("a third address", f"최종 답: {A}, {B}, {OTHER_A}", False),
    ("a third address after semicolons", f"최종 답: {A}; {B}, {OTHER_A}", False),
    ("one of two", f"최종 답: {A}", False),
    ("the other company's address elsewhere", f"최종 답: {A}, {OTHER_B}", False),
    ("hedged", f"최종 답: {A}, {B} 또는 {OTHER_B}", False),
    ("an address cut short", f"최종 답: {A}, 266 Munhwa-ro, Boryeong-si, Chungcheongnam-do", False),
    ("the two street lines only", "최종 답: 146 Beonyeong-ro, 266 Munhwa-ro", False),
]


@pytest.mark.parametrize(("name", "reply", "expect"), ADDRESS_CASES, ids=[c[0] for c in ADDRESS_CASES])
@pytest.mark.parametrize("pool", [[], [OTHER_A, OTHER_B]], ids=["no pool", "pool"])
def test_addresses_with_commas(name: str, reply: str, expect: bool, pool: list[str]) -> None:
    verdict = score_text(reply, ADDRESSES, 2026, pool)
    assert verdict.passed is expect, verdict.reason


AMOUNT_CASES = [
    ("thousands separators", "최종 답: 1,234원, 5,678원", True),
    ("one unit at the end", "최종 답: 1,234, 5,678원", True),
    ("semicolons", "최종 답: 1,234원; 5,678원", True),
    ("a third amount", "최종 답: 1,234원, 5,678원, 9,999원", False),
    ("a misgrouped number", "최종 답: 1,2345원, 5,678원", False),
    ("one of two", "최종 답: 1,234원", False),
]


@pytest.mark.parametrize(("name", "reply", "expect"), AMOUNT_CASES, ids=[c[0] for c in AMOUNT_CASES])
def test_amounts_with_thousands_separators(name: str, reply: str, expect: bool) -> None:
    verdict = score_text(reply, AMOUNTS, 2026)
    assert verdict.passed is expect, verdict.reason


PHONES = answer_adapter.validate_python(
    {
        "kind": "list",
        "items": [{"kind": "text", "value": "042-8852-7439"}, {"kind": "text", "value": "042-703-8110"}],
    }
)
PHONE_CASES = [
    ("bare", "최종 답: 042-8852-7439, 042-703-8110", True),
    ("each labelled", "최종 답: 초등학교 042-8852-7439, 중학교 042-703-8110", True),
    ("labelled with colons", "최종 답: 초등학교: 042-8852-7439, 중학교: 042-703-8110", True),
    ("a third number", "최종 답: 초등학교 042-8852-7439, 중학교 042-703-8110, 고등학교 042-111-2222", False),
    ("one of two", "최종 답: 초등학교 042-8852-7439", False),
    ("a wrong second number", "최종 답: 초등학교 042-8852-7439, 중학교 042-703-8111", False),
]


@pytest.mark.parametrize(("name", "reply", "expect"), PHONE_CASES, ids=[c[0] for c in PHONE_CASES])
def test_labelled_values(name: str, reply: str, expect: bool) -> None:
    verdict = score_text(reply, PHONES, 2026)
    assert verdict.passed is expect, verdict.reason
