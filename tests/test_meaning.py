"""specs/kinds.yaml and specs/platforms/<id>/meaning.yaml: what a field means, checked at load against the tools
and the kinds, with the file, line and field path of every mistake; and the benchmark's own meaning files hold
the rules EDGE relies on."""

from __future__ import annotations

from pathlib import Path

import pytest

from kopa_gen.language.diagnostics import Level, SpecError
from kopa_gen.language.meaning import FieldMeaning, ParamMeaning
from kopa_gen.project import Project, load_project
from tests.toyspec import write_project

KINDS = """kinds:
  fruit_code: {noun: 과일 코드}
  fruit_name: {noun: 과일 이름}
"""
GOOD = """platform: toy
params:
  name: {kind: fruit_name, say: "'{value}'"}
fields:
  code: {role: id, kind: fruit_code}
  name: {role: name, kind: fruit_name, ask: 과일 이름}
  price: {role: measure, unit: 원, ask: 가격}
tools:
  toy_list_fruits: {topic: 과일 가격, noun: 과일, counter: 개}
"""


def _write(root: Path, meaning: str, kinds: str = KINDS) -> None:
    write_project(root)
    (root / "specs" / "kinds.yaml").write_text(kinds, encoding="utf-8")
    (root / "specs" / "platforms" / "toy" / "meaning.yaml").write_text(meaning, encoding="utf-8")


def _errors(root: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_project(root)
    return [d.render() for d in info.value.diagnostics if d.level is Level.ERROR]


def test_a_meaning_file_loads(tmp_path: Path) -> None:
    _write(tmp_path, GOOD)
    project = load_project(tmp_path)
    meaning = project.meaning("toy")
    assert meaning is not None
    price = meaning.field("toy_list_fruits", "price")
    assert price is not None and price.unit == "원" and price.question_word() == "얼마"
    assert meaning.field("toy_list_fruits", "nothing") is None


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "  price: {role: measure, unit: 원, ask: 가격}",
            "  prices: {role: measure, unit: 원, ask: 가격}",
            "specs/platforms/toy/meaning.yaml:7: fields.prices: error: no response field is named 'prices'",
        ),
        (
            "  name: {kind: fruit_name",
            "  Name: {kind: fruit_name",
            "specs/platforms/toy/meaning.yaml:3: params.Name: error: no parameter is named 'Name'; did you mean "
            "'name'?",
        ),
        (
            "  code: {role: id, kind: fruit_code}",
            "  code: {role: id, kind: fruit_id}",
            "specs/platforms/toy/meaning.yaml:5: fields.code.kind: error: unknown kind 'fruit_id'; declare it in "
            "specs/kinds.yaml",
        ),
        (
            "  toy_list_fruits:",
            "  toy_list_fruit:",
            "specs/platforms/toy/meaning.yaml:9: tools.toy_list_fruit: error: toy has no tool 'toy_list_fruit'",
        ),
        (
            "platform: toy",
            "platform: fruit",
            "specs/platforms/toy/meaning.yaml:1: platform: error: must be 'toy'",
        ),
        (
            "{topic: 과일 가격, noun: 과일, counter: 개}",
            "{topic: 과일 가격, noun: 과일, counter: 개, own: [cod]}",
            "specs/platforms/toy/meaning.yaml:9: tools.toy_list_fruits.own.cod: error: no response field is named "
            "'cod'",
        ),
        (
            "{topic: 과일 가격, noun: 과일, counter: 개}",
            "{topic: 과일 가격, noun: 과일, counter: 개, rows: kinds, item: [nam]}",
            "specs/platforms/toy/meaning.yaml:9: tools.toy_list_fruits.item.nam: error: no response field is named "
            "'nam'",
        ),
    ],
)
def test_a_name_that_is_not_there_is_named(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in GOOD
    _write(tmp_path, GOOD.replace(old, new))
    errors = _errors(tmp_path)
    assert any(e.startswith(message) for e in errors), errors


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("{role: measure, unit: 원, ask: 가격}", "{role: measure, ask: 가격}", "a measure needs its unit"),
        ("{role: measure, unit: 원, ask: 가격}", "{role: measure, unit: 냥, ask: 가격}", "unknown unit '냥'"),
        (
            "{role: id, kind: fruit_code}",
            "{role: id, ask: 코드}",
            "a id field is never asked about; drop `ask`",
        ),
        ("say: \"'{value}'\"", "say: 이름", "`say` must place the value: use {value} or {label}"),
        (
            "say: \"'{value}'\"",
            "say: \"'{value}'\", contains: 이름에 들어간",
            "`contains` must place the value: use {value} or {label}",
        ),
        (
            "{role: name, kind: fruit_name, ask: 과일 이름}",
            "{role: name, kind: fruit_name, ask: 과일 이름, over: [sum]}",
            "`over` (sum, avg) is for a measure only",
        ),
        (
            "{role: measure, unit: 원, ask: 가격}",
            "{role: measure, unit: 원, ask: 가격, over: [median]}",
            "fields.price.over[0]: error: Input should be 'sum' or 'avg'",
        ),
        (
            "{topic: 과일 가격, noun: 과일, counter: 개}",
            "{topic: 과일 가격, noun: 과일, counter: 개, rows: mixed}",
            "tools.toy_list_fruits.rows: error: Input should be 'alike' or 'kinds'",
        ),
        (
            "{topic: 과일 가격, noun: 과일, counter: 개}",
            "{topic: 과일 가격, noun: 과일, counter: 개, item: [name]}",
            "tools.toy_list_fruits.item: error: `item` names the row of a `rows: kinds` result",
        ),
    ],
)
def test_a_meaning_that_contradicts_itself_is_refused(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in GOOD
    _write(tmp_path, GOOD.replace(old, new))
    errors = _errors(tmp_path)
    assert any("specs/platforms/toy/meaning.yaml:" in e and message in e for e in errors), errors


def test_a_kind_transform_to_nowhere_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, GOOD, KINDS + "  address: {noun: 주소, to: {sido: 'words(0, 1)'}}\n")
    errors = _errors(tmp_path)
    assert any("specs/kinds.yaml" in e and "address.to names unknown kind 'sido'" in e for e in errors), (
        errors
    )


def test_a_rename_the_kind_does_not_transform_into_is_refused(tmp_path: Path) -> None:
    _write(
        tmp_path,
        GOOD,
        KINDS + "  place: {noun: 곳, to: {fruit_name: 'words(1, 2)'}, renames: [fruit_code]}\n",
    )
    errors = _errors(tmp_path)
    assert any(
        "specs/kinds.yaml" in e and "`renames` lists ['fruit_code'], which `to` does not transform into" in e
        for e in errors
    ), errors


def test_phrases_and_question_words() -> None:
    year = ParamMeaning(say="{value}년")
    report = ParamMeaning(labels={"11011": "사업보고서"})
    assert year.phrase(2025) == "2025년"
    assert report.phrase("11011") == "사업보고서"
    assert report.phrase("11012") is None  # an unlabelled code is never put in a query
    assert ParamMeaning().phrase("x") is None
    stop = ParamMeaning(say="{value} 정류소")
    assert stop.phrase("시청앞") == "시청앞 정류소"
    assert stop.phrase("월암정류소") == "월암정류소"  # not '월암정류소 정류소'
    assert ParamMeaning(say="{value} 의원").phrase("김철수") == "김철수 의원"
    assert FieldMeaning(role="measure", unit="명", ask="직원 수").question_word() == "몇"
    assert FieldMeaning(role="measure", unit="초", ask="도착까지 남은 시간").question_word() == "몇"  # 몇 초
    assert FieldMeaning(role="measure", unit="원", ask="매출액").question_word() == "얼마"
    assert FieldMeaning(role="date", ask="개교일").question_word() == "언제"
    assert FieldMeaning(role="name", ask="대표자", wh="누구").question_word() == "누구"


def test_the_benchmark_meanings_keep_codes_out_of_questions(project: Project) -> None:
    """In every platform's meaning file, an id is never asked about and every asked field says what it is."""
    for pid, meaning in project.meanings:
        entries = [*meaning.fields.items()] + [
            (n, f) for t in meaning.tools.values() for n, f in t.fields.items()
        ]
        for name, f in entries:
            assert not (f.role == "id" and f.ask), f"{pid}.{name}"
            if f.ask is not None:
                assert f.ask.strip() == f.ask and f.ask, f"{pid}.{name}: empty or padded ask"
                assert not any(c in f.ask for c in "_()"), (
                    f"{pid}.{name}: {f.ask!r} reads like API vocabulary"
                )


def test_a_kinds_file_that_does_not_parse_is_one_error(tmp_path: Path) -> None:
    _write(tmp_path, GOOD, KINDS + "  <<<<<<< HEAD\n")
    errors = _errors(tmp_path)
    assert len(errors) == 1 and errors[0].startswith("specs/kinds.yaml:"), errors
