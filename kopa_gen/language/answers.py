"""Typed gold answers: what a task's final response must state, as a discriminated union on `kind`.

Task authors write these in task specs; the field descriptions become the JSON Schema they edit against.
How a response is matched against each kind is in `kopa_gen.evaluate.response`.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Annotated, Literal, assert_never

from pydantic import Field, TypeAdapter, field_validator, model_validator

from kopa_gen.language.kopa import StrictModel
from kopa_gen.language.normalize import fold as normalize_fold
from kopa_gen.language.normalize import normalize_text
from kopa_gen.language.units import parse_unit


class NumberAnswer(StrictModel):
    """A number. The response passes when the value it commits to matches (kopa_gen/evaluate/response.py)."""

    kind: Literal["number"] = Field(default="number", description="Discriminator: a numeric answer.")
    value: int | float = Field(
        description="The gold number in plain units: 1234567890000 for '1조 2,345억 6,789만 원', 12.5 for "
        "'12.5%'. Korean unit words (만, 억, 조) in the response are expanded before comparing."
    )
    tolerance: float = Field(
        default=0,
        ge=0,
        description="Absolute tolerance: |stated - value| <= tolerance passes (inclusive). Without one, a value "
        "rounded as written passes when within 0.5% ('약 1051' for 1051.4).",
    )
    rel_tolerance: float = Field(
        default=0,
        ge=0,
        description="Relative tolerance: |stated - value| <= rel_tolerance * |value| passes (inclusive). When "
        "both tolerances are set, meeting either one passes.",
    )
    unit: str | None = Field(
        default=None,
        description="Unit such as '원', '%', '개', 'kcal' (kopa_gen/language/units.py has the table). A submission "
        "must give a unit of the same dimension (천원, 억원 for 원; 곳, 명 for 개); a prose reply need not state "
        "one, but a unit it states must name the same quantity ('1,446달러' fails for 원).",
    )

    @field_validator("unit")
    @classmethod
    def _known_unit(cls, v: str | None) -> str | None:
        if v is not None and parse_unit(v) is None:
            raise ValueError(
                f"unknown unit {v!r}; use a unit of kopa_gen/language/units.py (원, 천원, %, %p, 개, 명, kcal, ...)"
            )
        return v

    @field_validator("value", mode="before")
    @classmethod
    def _not_bool_or_nan(cls, v: object) -> object:
        if isinstance(v, bool):
            raise ValueError("a number answer needs a number, not a boolean")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("a number answer must be finite")
        return v


class TextAnswer(StrictModel):
    """A name or phrase. Passes when the response names one accepted spelling and no other candidate."""

    kind: Literal["text"] = Field(default="text", description="Discriminator: a text answer.")
    value: str = Field(min_length=1, description="The gold text, e.g. '삼성전자'.")
    aliases: list[str] = Field(
        default_factory=list,
        description="Other accepted spellings of the same answer, e.g. ['Samsung Electronics']. Corporate-form "
        "markers ((주), 주식회사, ㈜, (유)), case, spacing and punctuation never need an alias.",
    )

    @model_validator(mode="after")
    def _spellings_survive_normalization(self) -> TextAnswer:
        for spelling in self.spellings():
            if not normalize_text(spelling):
                raise ValueError(
                    f"spelling {spelling!r} is empty after normalization; it would match anything"
                )
        return self

    def spellings(self) -> list[str]:
        """The gold value followed by its aliases."""
        return [self.value, *self.aliases]


class CodeAnswer(StrictModel):
    """An identifier (a legal-district code, a registration number): the digits and letters must be exactly the
    gold's; spaces and hyphens are ignored ('26200-11900' states 2620011900), leading zeros are not."""

    kind: Literal["code"] = Field(default="code", description="Discriminator: a code answer.")
    value: str = Field(
        min_length=1, pattern=r"^[0-9A-Za-z][0-9A-Za-z_-]*$", description="The gold code, e.g. '2620011900'."
    )

    def key(self) -> str:
        """The code as compared: hyphens dropped, letters casefolded."""
        return code_key(self.value)


def code_key(text: str) -> str:
    """A stated code as compared: spaces and hyphens dropped, letters casefolded (after `fold`)."""
    return "".join(ch for ch in normalize_fold(text) if ch not in " -").casefold()


class DateAnswer(StrictModel):
    """A calendar date. Passes when the date the response commits to equals `value`."""

    kind: Literal["date"] = Field(default="date", description="Discriminator: a date answer.")
    value: dt.date = Field(description="The gold date (YYYY-MM-DD).")
    period: Literal["start", "end"] | None = Field(
        default=None,
        description="The gold is the first (start) or last (end) day of a period, so a reply may state the whole "
        "period ('10월 13일부터 16일까지'); without it a stated period fails.",
    )


ItemAnswer = Annotated[NumberAnswer | TextAnswer | CodeAnswer | DateAnswer, Field(discriminator="kind")]


class ListAnswer(StrictModel):
    """Several answers of one kind, e.g. the three schools in a district or the top-3 amounts."""

    kind: Literal["list"] = Field(default="list", description="Discriminator: a list answer.")
    items: list[ItemAnswer] = Field(
        min_length=1,
        description="The gold items, all of one kind (number, text, code or date); each keeps its own "
        "tolerance or aliases.",
    )
    ordered: bool = Field(
        default=False,
        description="True when the response must state the items in this order (rankings); False for a set.",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> ListAnswer:
        kinds = sorted({item.kind for item in self.items})
        if len(kinds) > 1:
            raise ValueError(f"list items must all be of one kind, got {', '.join(kinds)}")
        return self


Answer = Annotated[
    NumberAnswer | TextAnswer | CodeAnswer | DateAnswer | ListAnswer, Field(discriminator="kind")
]

answer_adapter: TypeAdapter[Answer] = TypeAdapter(Answer)
"""Validates a gold answer from plain data (a task file's `answer:` mapping) and exports its JSON Schema."""


def answer_text(answer: Answer) -> str:
    """The gold answer as a person reads it beside a reply: `3,070 원`, `삼성전자`, `2025-03-14`, a list's items
    joined by commas (`in this order` when ordered)."""
    match answer:
        case NumberAnswer():
            value = f"{answer.value:,}"
            return f"{value} {answer.unit}" if answer.unit else value
        case TextAnswer() | CodeAnswer():
            return answer.value
        case DateAnswer():
            return answer.value.isoformat()
        case ListAnswer():
            items = ", ".join(answer_text(item) for item in answer.items)
            return f"{items} (in this order)" if answer.ordered else items
        case _:
            assert_never(answer)
