"""The committed answer channel: a `submit_answer` tool offered in every episode, typed by the task's answer.

Its input schema follows the answer kind (kopa_gen/language/answers.py):

    number   {"answer": <number>, "unit": "<단위>"}          unit required when the gold has one
    text     {"answer": "<name>"}
    code     {"answer": "<code>"}
    date     {"answer": "YYYY-MM-DD"}   also YYYY.MM.DD, YYYY/MM/DD, YYYYMMDD (unambiguous: the year first)
    list     {"answer": [<item>, ...]}  (+ "unit" for numbers)  where the task asks for several values
    (none)   {"answer": "<what was done>"}                    tasks scored on the workspace alone

A call that does not fit the schema (a string where a number is asked, a list where one value is, no unit, a date
in none of those forms or no such day, an unknown key) is a tool error the model reads, with the expected shape; it is not a
submission and costs only the call. A call that fits is a submission: the episode ends after the turn that made
it, and RESPONSE grades it by type (kopa_gen/evaluate/typed.py). Two submissions fail, whatever they say.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kopa_gen.evaluate.typed import (
    Graded,
    Stated,
    StatedDate,
    StatedList,
    StatedNumber,
    StatedText,
    decimal_of,
    grade,
    precision_of,
)
from kopa_gen.language.answers import Answer, ItemAnswer, ListAnswer, NumberAnswer
from kopa_gen.language.functions import maybe_number, plain_number, to_text

SUBMIT_TOOL = "submit_answer"
"""The tool's name, the same in eval, MCP and training."""

DATE_PATTERN = r"^\d{4}(?:-\d{1,2}-\d{1,2}|\. ?\d{1,2}\. ?\d{1,2}\.?|/\d{1,2}/\d{1,2}|\d{4})$"
"""The date strings a submission may give: the year first, then month and day, in one of the unambiguous forms
2026-10-16, 2026.10.16 (also '2026. 10. 16.'), 2026/10/16, 20261016."""
_DATE = re.compile(DATE_PATTERN)
_DATE_PARTS = re.compile(r"(\d{4})[-./ ]*(\d{1,2})[-./ ]+(\d{1,2})\.?|(\d{4})(\d{2})(\d{2})")
_UNIT_HINT = "원, 천원, 백만원, 억원, 조원, %, %p, 개, 명, 곳, 건, 대, kcal, 시간, pt 등"


class SubmissionError(ValueError):
    """A `submit_answer` call that does not fit the schema: the message is the tool error the model reads."""


def _item_kind(answer: Answer | None) -> str:
    if answer is None:
        return "none"
    if isinstance(answer, ListAnswer):
        return answer.items[0].kind
    return answer.kind


def _needs_unit(answer: Answer | None) -> bool:
    items: Sequence[ItemAnswer] = (
        answer.items if isinstance(answer, ListAnswer) else [answer] if answer is not None else []
    )
    return any(isinstance(i, NumberAnswer) and i.unit for i in items)


def _value_schema(kind: str) -> dict[str, Any]:
    if kind == "number":
        return {"type": "number", "description": "답인 수 하나 (JSON 숫자; 쉼표·단위 없이)."}
    if kind == "date":
        return {
            "type": "string",
            "pattern": DATE_PATTERN,
            "description": "답인 날짜: YYYY-MM-DD (YYYY.MM.DD, YYYY/MM/DD, YYYYMMDD도 같은 날로 받습니다).",
        }
    if kind == "code":
        return {"type": "string", "minLength": 1, "description": "답인 코드·번호 (조회 결과에 적힌 그대로)."}
    if kind == "text":
        return {"type": "string", "minLength": 1, "description": "답인 이름이나 값 하나."}
    return {"type": "string", "minLength": 1, "description": "무엇을 했는지 한 줄로."}


def submit_schema(answer: Answer | None) -> dict[str, Any]:
    """The tool's JSON input schema for a task's answer (None: a task scored on the workspace alone)."""
    kind = _item_kind(answer)
    value = _value_schema(kind)
    if isinstance(answer, ListAnswer):
        order = "질문이 묻는 순서대로" if answer.ordered else "순서는 상관없음"
        value = {
            "type": "array",
            "items": value,
            "minItems": 1,
            "description": f"질문이 여러 값을 물을 때 그 값들의 목록 ({order}).",
        }
    properties: dict[str, Any] = {"answer": value}
    required = ["answer"]
    if kind == "number":
        properties["unit"] = {
            "type": "string",
            "minLength": 1,
            "description": f"answer의 단위 ({_UNIT_HINT}).",
        }
        if _needs_unit(answer):
            required.append("unit")
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def submit_tool(answer: Answer | None) -> dict[str, Any]:
    """The tool as an MCP tool description (name, description, inputSchema)."""
    what = (
        "작업을 마쳤다는 확인 (작업 공간에 남긴 결과가 채점됩니다)"
        if answer is None
        else "질문에 대한 최종 답 하나 (여러 값을 묻는 질문이면 그 목록)"
    )
    return {
        "name": SUBMIT_TOOL,
        "description": (
            f"{what}을 제출합니다. 답을 확정했을 때 한 번만 호출하세요: 제출하면 에피소드가 끝나고, 두 번 제출하면 "
            "실패로 채점됩니다. 설명이나 근거는 메시지에 자유롭게 쓰되, 이 도구에는 값만 넣으세요."
        ),
        "inputSchema": submit_schema(answer),
    }


def _shape(answer: Answer | None) -> str:
    kind = _item_kind(answer)
    one = {
        "number": "<숫자>",
        "date": '"YYYY-MM-DD"',
        "code": '"<코드>"',
        "text": '"<이름>"',
        "none": '"<한 줄 요약>"',
    }[kind]
    value = f"[{one}, ...]" if isinstance(answer, ListAnswer) else one
    unit = ', "unit": "<단위>"' if kind == "number" else ""
    return f'{{"answer": {value}{unit}}}'


def _fail(answer: Answer | None, problem: str) -> SubmissionError:
    return SubmissionError(
        f"{SUBMIT_TOOL}: {problem}; nothing was submitted. Expected {_shape(answer)}"
        + (f" (unit: {_UNIT_HINT})" if _item_kind(answer) == "number" else "")
    )


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _read_one(answer: Answer | None, kind: str, value: Any, unit: str | None, where: str) -> Stated:
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(answer, f"{where} must be a JSON number, got {_shown(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise _fail(answer, f"{where} must be a finite number")
        exact = decimal_of(value)
        return StatedNumber(exact, unit, precision_of(exact), f"{_shown(value)}{' ' + unit if unit else ''}")
    if not isinstance(value, str):
        raise _fail(answer, f"{where} must be a string, got {_shown(value)}")
    if not value.strip():
        raise _fail(answer, f"{where} is empty")
    if kind == "date":
        text = value.strip()
        day = _date(text)
        if day is None:
            raise _fail(
                answer,
                f"{where} must be a date as YYYY-MM-DD (or YYYY.MM.DD, YYYY/MM/DD, YYYYMMDD), got {_shown(value)}",
            )
        return StatedDate(day, text)
    return StatedText(value.strip())


def _date(text: str) -> dt.date | None:
    """A date string of DATE_PATTERN as its day; None for another form or no such day ('2026-02-30')."""
    parts = _DATE_PARTS.fullmatch(text) if _DATE.match(text) else None
    if parts is None:
        return None
    year, month, day = (int(g) for g in parts.groups() if g is not None)
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def read_submission(answer: Answer | None, arguments: Any) -> Stated:
    """The stated value of one `submit_answer` call, or SubmissionError (the tool error) when it does not fit."""
    if not isinstance(arguments, Mapping):
        raise _fail(answer, "arguments must be a JSON object")
    extra = sorted(str(k) for k in arguments if k not in ("answer", "unit"))
    kind = _item_kind(answer)
    if extra or ("unit" in arguments and kind != "number"):
        unknown = extra or ["unit"]
        raise _fail(answer, f"unknown argument {', '.join(repr(k) for k in unknown)}")
    if "answer" not in arguments or arguments["answer"] is None:
        raise _fail(answer, "the argument 'answer' is missing")
    unit = arguments.get("unit")
    if kind == "number":
        if unit is not None and (not isinstance(unit, str) or not unit.strip()):
            raise _fail(answer, f"'unit' must be a non-empty string, got {_shown(unit)}")
        if unit is None and _needs_unit(answer):
            raise _fail(answer, "'unit' is missing: give the unit of the number")
        unit = unit.strip() if isinstance(unit, str) else None
    value = arguments["answer"]
    if isinstance(answer, ListAnswer):
        if not isinstance(value, list) or not value:
            raise _fail(answer, f"'answer' must be a non-empty list, got {_shown(value)}")
        items = [_read_one(answer, kind, v, unit, f"'answer'[{k}]") for k, v in enumerate(value)]
        return StatedList(items, _shown(value))
    if isinstance(value, list):
        raise _fail(
            answer, f"'answer' must be one value, not a list ({_shown(value)}): the question asks for one"
        )
    return _read_one(answer, kind, value, unit, "'answer'")


def grade_submissions(answer: Answer, submissions: Sequence[Stated], pool: Sequence[Any] = ()) -> Graded:
    """RESPONSE for the episode's submissions: exactly one, graded by type."""
    if not submissions:
        return Graded(False, f"no answer was submitted with {SUBMIT_TOOL}")
    if len(submissions) > 1:
        return Graded(False, f"{len(submissions)} answers were submitted; an episode commits to one")
    return grade(submissions[0], answer, pool)


class SubmitChannel:
    """The `submit_answer` tool of one task's episodes (kopa_gen.runtime.session.AnswerChannel)."""

    name = SUBMIT_TOOL

    def __init__(self, answer: Answer | None) -> None:
        self.answer = answer
        self._tool = submit_tool(answer)

    def tool(self) -> dict[str, Any]:
        return self._tool

    def read(self, arguments: Any) -> Stated:
        return read_submission(self.answer, arguments)

    def arguments_for(self, value: Any) -> dict[str, Any]:
        """The call a policy makes to submit `value` (a value its own tool results gave, as the task path language
        hands it on): shaped by the answer's kind and unit, never by its gold value."""
        answer = self.answer
        if answer is None:
            return {"answer": str(value)}
        kind = _item_kind(answer)
        if isinstance(answer, ListAnswer):
            items = value if isinstance(value, list) else [value]
            out: dict[str, Any] = {"answer": [_plain(kind, v) for v in items]}
            unit = next((i.unit for i in answer.items if isinstance(i, NumberAnswer) and i.unit), None)
        else:
            out = {"answer": _plain(kind, value)}
            unit = answer.unit if isinstance(answer, NumberAnswer) else None
        if unit:
            out["unit"] = unit
        return out


def _plain(kind: str, value: Any) -> Any:
    """A value from the tool results in the submission's JSON type (a number read from its API text)."""
    if kind == "number":
        number = maybe_number(value)
        return value if number is None else plain_number(number)
    return to_text(value)
