"""EDGE output reads as Korean: particles fit the word before them; codes survive a YAML 1.2 reader."""

from __future__ import annotations

import pytest
import yaml

from kopa_gen.edge.dataset import task_yaml
from kopa_gen.language.particles import attach_particles, ending, particle
from kopa_gen.language.task import Task
from kopa_gen.language.yamlout import dump_yaml
from kopa_gen.project import Project


@pytest.mark.parametrize(
    ("word", "sound"),
    [
        ("조회", "vowel"),
        ("건수", "vowel"),
        ("기업종업원수", "vowel"),
        ("매출액", "consonant"),
        ("주요계정", "consonant"),
        ("서울", "rieul"),
        ("'00126380'", "consonant"),  # 영/공; the quote is not read
        ("2025", "vowel"),  # 오
        ("2021", "rieul"),  # 일
        ("3", "consonant"),  # 삼
        ("10", "consonant"),  # 십
        ("CFS", "vowel"),  # 에스
        ("HTML", "rieul"),  # 엘
        ("KRW M", "consonant"),  # 엠
        ("(주)", "vowel"),
        ("", None),
        ("...", None),
    ],
)
def test_the_final_sound_of_a_word(word: str, sound: str | None) -> None:
    assert ending(word) == sound


@pytest.mark.parametrize(
    ("word", "marker", "form"),
    [
        ("조회", "을(를)", "를"),
        ("매출액", "을(를)", "을"),
        ("건수", "이(가)", "가"),
        ("자본금", "이(가)", "이"),
        ("기업종업원수", "은(는)", "는"),
        ("당기순이익", "은(는)", "은"),
        ("삼성전자", "과(와)", "와"),
        ("'2024'", "과(와)", "와"),
        ("'2023'", "과(와)", "과"),
        ("서울", "(으)로", "로"),
        ("'7'", "(으)로", "로"),
        ("코드", "(으)로", "로"),
        ("고유번호", "(으)로", "로"),
        ("'00126380'", "(으)로", "으로"),
        ("법정동", "(으)로", "으로"),
        ("ABC", "을(를)", "를"),
        ("학교", "(이)", ""),
        ("학년", "(이)", "이"),
    ],
)
def test_the_particle_fits_the_word(word: str, marker: str, form: str) -> None:
    assert particle(word, marker) == form


def test_every_marker_of_a_text_is_resolved() -> None:
    text = "단일회사 주요계정을(를) 조회을(를) 하고 건수이(가) 기업종업원수은(는) 고유번호 '00126380'(으)로 찾은 '2024'과(와) '2023'"
    assert attach_particles(text) == (
        "단일회사 주요계정을 조회를 하고 건수가 기업종업원수는 고유번호 '00126380'으로 찾은 '2024'와 '2023'"
    )


def test_codes_stay_strings_for_a_yaml_1_2_reader() -> None:
    text = dump_yaml(
        {"corp_code": "00126380", "stock_code": "005930", "year": "2025", "cls": "Y", "name": "삼성전자"}
    )
    assert text.splitlines() == [
        "corp_code: '00126380'",
        "stock_code: '005930'",
        "year: '2025'",
        "cls: 'Y'",
        "name: 삼성전자",
    ]
    assert yaml.safe_load(text) == {
        "corp_code": "00126380",
        "stock_code": "005930",
        "year": "2025",
        "cls": "Y",
        "name": "삼성전자",
    }


def test_a_written_task_quotes_its_codes(project: Project) -> None:
    """Every benchmark task written as EDGE writes tasks: each code (a digit string such as 00126380) is quoted, so
    a reader of either YAML version gets the task back."""
    codes = 0
    for _, task in project.tasks:
        text = task_yaml(task)
        for step in task.gold:
            for call in step.calls:
                for name, value in call.args.items():
                    if isinstance(value, str) and value.isdigit():
                        assert f"{name}: '{value}'" in text
                        codes += 1
        assert Task.model_validate(yaml.safe_load(text)) == task
    assert codes, "no task has a code argument to check"
    # a code PyYAML alone would leave plain: 8 is not an octal digit, so YAML 1.1 does not read it as a number
    data = project.tasks[0][1].model_dump(mode="json", by_alias=True, exclude_none=True)
    data["gold"][0]["calls"][0]["args"]["corp_code"] = "00126380"
    text = task_yaml(Task.model_validate(data))
    assert "corp_code: '00126380'" in text
