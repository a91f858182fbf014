"""What values mean: `specs/kinds.yaml` (the kinds of values that cross from one API to another) and
`specs/platforms/<id>/meaning.yaml` (per platform, what each response field and request parameter means to a
person). EDGE reads them to link tools by type, to ask questions people ask, and to word them without API
vocabulary (docs/edge.md).

    # specs/platforms/tago/meaning.yaml
    platform: tago
    params:
      cityCode: {kind: tago_city}                          # a hand-off target: only a tago_city value fits
      routeNo: {kind: bus_route_no, say: "{value}번"}      # how a query states a literal value
    fields:
      routeid: {role: id, kind: tago_route}                # opaque: handed on, never asked, never summed
      routeno: {role: name, kind: bus_route_no, ask: 노선 번호}
      intervaltime: {role: measure, unit: 분, ask: 평일 배차 간격}
    tools:
      tago_list_route_stops:
        topic: 노선이 지나는 정류소                          # what a person calls the result
        noun: 정류소                                         # one row
        counter: 곳                                          # how rows are counted
        fields: {nodeord: {role: order}}                     # this tool's own reading of a field name

A field or parameter named under `tools.<tool>` means that there; otherwise the platform-wide entry applies.
A field with no entry has no known meaning: EDGE neither asks about it nor hands it on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from kopa_gen.language.diagnostics import Diagnostic, Diagnostics
from kopa_gen.language.kopa import StrictModel
from kopa_gen.language.source import Source, YamlError, load_yaml, validate_model
from kopa_gen.language.units import parse_unit

Role = Literal[
    "id", "code", "name", "measure", "date", "time", "year", "enum", "text", "coord", "order", "meta"
]
"""What a field is to a person:

- `id`: an opaque identifier (고유번호, 노선ID): handed to the next call, never asked, compared or summed;
- `code`: a code with public meaning (법정동코드, 종목코드): handed on; asked only where `ask` says so;
- `name`: the name of the thing a row is about (회사명, 정류소명): a starting point, a row's label, an answer;
- `measure`: a quantity with a `unit`: asked, compared, summed, the pivot of a reduction;
- `date`, `time`, `year`: when; compared as dates;
- `enum`: one of a few categories (학교종류, 등기 여부): a filter and an answer, shown by its `labels`;
- `text`: free text (주소, 비고): asked only where `ask` says so and the value is short;
- `coord`: a coordinate; `meta`: paging, echo and bookkeeping fields. Never asked.
- `order`: a sequence number. Never asked; with `ask` it is a sequence people count along (a route's stops:
  '40번째 정류소'), which EDGE reduces by position; without it a row number or a rank among siblings.
"""

Wh = Literal["얼마", "몇", "무엇", "누구", "어디", "언제"]
COUNTED = frozenset({"count", "seconds", "minutes", "hours", "days", "months", "years"})
"""Unit dimensions asked with 몇 and the unit ('몇 명', '몇 초'); money and percentages are asked with 얼마."""
WH_BY_ROLE: dict[Role, Wh] = {"measure": "얼마", "date": "언제", "time": "언제", "year": "언제"}

KIND_ID = r"^[a-z][a-z0-9_]{1,47}$"
ASKABLE: frozenset[Role] = frozenset({"name", "measure", "date", "time", "year", "enum", "code", "text"})


class FieldMeaning(StrictModel):
    """One response field."""

    role: Role = Field(description="What the field is to a person (see the module docstring).")
    kind: str | None = Field(
        default=None,
        pattern=KIND_ID,
        description="The kind of value (specs/kinds.yaml): a hand-off from this field may only fill a parameter "
        "of the same kind, or of a kind this one transforms into.",
    )
    ask: str | None = Field(
        default=None,
        description="The Korean noun phrase a person asks the field by, without particles ('매출액', '평일 배차 "
        "간격', '개교 기념일'). A field without one is never asked about.",
    )
    unit: str | None = Field(
        default=None, description="measure: the unit of the value as served ('원', '명', '분', '%', 'kcal')."
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="enum: served value -> what a person calls it ('Y': '등기', 'CFS': '연결재무제표'). Values "
        "without a label are shown as served.",
    )
    over: list[Literal["sum", "avg"]] = Field(
        default_factory=list,
        description="measure: what a question over many rows may do with it besides its extremes (the largest, "
        "the smallest, the row holding one): 'sum' for an amount that adds up across the rows a question names "
        "(votes counted in one election's districts), 'avg' where an average means something to a person (a "
        "price over days). Left out: extremes only; the total of a bus's remaining stops over every arriving bus, "
        "or the calories of every meal ever served, is no question.",
    )
    wh: Wh | None = Field(
        default=None,
        description="The question word ('누구' for a person's name, '어디' for a place); default by role: "
        "measure 얼마 (몇 with a counting unit), date/time/year 언제, otherwise 무엇.",
    )

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str | None) -> str | None:
        if v is not None and parse_unit(v) is None:
            raise ValueError(f"unknown unit {v!r}; kopa_gen/language/units.py lists the known ones")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> FieldMeaning:
        if self.role == "measure" and self.unit is None:
            raise ValueError("a measure needs its unit ('원', '명', '%', ...)")
        if self.role != "measure" and self.over:
            raise ValueError("`over` (sum, avg) is for a measure only")
        if self.role != "measure" and self.unit is not None:
            raise ValueError(f"only a measure has a unit (this field is a {self.role})")
        if self.labels and self.role not in ("enum", "code"):
            raise ValueError(f"only an enum or a code has labels (this field is a {self.role})")
        if self.ask is not None and self.role not in ASKABLE and self.role != "order":
            raise ValueError(f"a {self.role} field is never asked about; drop `ask`")
        return self

    def question_word(self) -> Wh:
        if self.wh is not None:
            return self.wh
        unit = parse_unit(self.unit) if self.unit is not None else None
        if self.role == "measure" and unit is not None and unit.dimension in COUNTED:
            return "몇"  # '몇 명', and a span in its unit: '몇 초', '몇 분' (not '얼마', which leaves the unit unsaid)
        return WH_BY_ROLE.get(self.role, "무엇")


class ParamMeaning(StrictModel):
    """One request parameter."""

    kind: str | None = Field(
        default=None,
        pattern=KIND_ID,
        description="The kind of value it takes (specs/kinds.yaml); a hand-off must bring this kind.",
    )
    say: str | None = Field(
        default=None,
        description="How a query states a literal value, with {value} or {label}: '{value}년', '{label} 기준', "
        "'{value}번'. A parameter without `say` or `labels` is never given a literal value in a query.",
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Literal value -> what a person calls it ('11011': '사업보고서'); only labelled values are "
        "chosen for queries when labels are given.",
    )

    contains: str | None = Field(
        default=None,
        description="For a parameter that finds names containing a word (source filter `match: contains`): how a "
        "question names the whole set one word finds, before the tool's noun ('이름에 '{value}'이(가) 들어간' -> "
        "'이름에 '주차장'이 들어간 자치법규'). EDGE then starts chains from such sets, the words read from the "
        "world (kopa_gen/edge/starts.py).",
    )

    @field_validator("say", "contains")
    @classmethod
    def _say(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and not re.search(r"\{(value|label)\}", v):
            raise ValueError(f"`{info.field_name}` must place the value: use {{value}} or {{label}}")
        return v

    def phrase(self, value: object) -> str | None:
        """The literal `value` as a query states it; None when it cannot be said."""
        label = self.labels.get(str(value))
        if self.labels and label is None:
            return None
        template = self.say or ("{label}" if self.labels else None)
        if template is None:
            return None
        text = template.replace("{label}", label or str(value)).replace("{value}", str(value))
        tail = template.rsplit("}", 1)[1].strip()  # the word after the value: '{value} 정류소' -> '정류소'
        if tail and str(label or value).strip().endswith(tail) and text.endswith(" " + tail):
            return text[: -len(tail) - 1]  # '월암정류소', not '월암정류소 정류소'
        return text


class Kind(StrictModel):
    """One kind of value that crosses between tools."""

    noun: str = Field(description="What a person calls such a value ('법인등록번호', '시군구 이름').")
    broad: bool = Field(
        default=False,
        description="Values of this kind are shared by unrelated things (a date, a year, a person's name, a 시도): a "
        "link through it is proposed only where the retriever pairs the two tools anyway, not between every tool "
        "that has such a field and every tool that takes one.",
    )
    owner: bool = Field(
        default=False,
        description="A value of this kind names someone with results of their own (a member, a company): handed on "
        "as an attribute it reads possessively, 'X의 대표발의자의 정책 세미나', not 'X의 대표발의자에 해당하는 …'.",
    )
    to: dict[str, str] = Field(
        default_factory=dict,
        description="Typed transforms: target kind -> a pipe of path functions that turns a value of this kind "
        "into one of the target ('words(0, 2)': '서울특별시 강남구 테헤란로 1' -> '서울특별시 강남구').",
    )
    renames: list[str] = Field(
        default_factory=list,
        description="Targets of `to` that name the same thing another way ('경기도 가평군' -> '가평군'): a question "
        "says the thing itself, not a place it lies in ('X를 만든 지방자치단체의 학원', not '… 지방자치단체가 속한 "
        "시군구의 학원').",
    )

    @model_validator(mode="after")
    def _renames(self) -> Kind:
        stray = [k for k in self.renames if k not in self.to]
        if stray:
            raise ValueError(f"`renames` lists {stray}, which `to` does not transform into; add them to `to`")
        return self


class ToolMeaning(StrictModel):
    """What one tool returns, in a person's words, and where its fields or parameters read differently."""

    topic: str = Field(description="What a person calls the result ('직원 현황', '노선이 지나는 정류소').")
    noun: str = Field(description="What one row is ('직원 구분', '정류소', '학교').")
    counter: str = Field(default="개", description="How rows are counted ('명', '곳', '개', '건').")
    rows: Literal["alike", "kinds"] = Field(
        default="alike",
        description="`alike`: every row is one thing of the same kind (a school, a filing), and a measure compares "
        "across rows; `kinds`: each row is a different quantity (an account line, a financial indicator, a dividend "
        "item), read by its name: its measures are never compared, summed or reduced across rows.",
    )
    item: list[str] = Field(
        default_factory=list,
        description="With `rows: kinds`: the fields whose values name one row's quantity (an account line's "
        "fs_div and account_nm); a question reads that one row by them ('연결재무제표 매출액의 당기 금액'), which "
        "is how a Cmp compares two years of one account.",
    )
    own: list[str] = Field(
        default_factory=list,
        description="Fields that identify the entity a row is about (a company outline's 법인등록번호 and 고유번호): "
        "handed on, they read as the row's own ('X의 재무상태표'), never as 'X의 법인등록번호에 해당하는 …'.",
    )
    fields: dict[str, FieldMeaning] = Field(
        default_factory=dict, description="This tool's own field readings."
    )
    params: dict[str, ParamMeaning] = Field(
        default_factory=dict, description="This tool's own parameter readings."
    )


class Meaning(StrictModel):
    """specs/platforms/<id>/meaning.yaml."""

    platform: str = Field(description="The platform id (the folder's name).")
    kinds: dict[str, Kind] = Field(
        default_factory=dict,
        description="Kinds only this platform's values have (a kind two platforms share goes in specs/kinds.yaml).",
    )
    params: dict[str, ParamMeaning] = Field(
        default_factory=dict, description="Parameters by name, every tool."
    )
    fields: dict[str, FieldMeaning] = Field(
        default_factory=dict, description="Response fields by name, every tool."
    )
    tools: dict[str, ToolMeaning] = Field(
        default_factory=dict, description="Per tool: its topic and overrides."
    )

    def field(self, tool: str, name: str) -> FieldMeaning | None:
        own = self.tools.get(tool)
        if own is not None and name in own.fields:
            return own.fields[name]
        return self.fields.get(name)

    def param(self, tool: str, name: str) -> ParamMeaning | None:
        own = self.tools.get(tool)
        if own is not None and name in own.params:
            return own.params[name]
        return self.params.get(name)


class Kinds(StrictModel):
    """specs/kinds.yaml."""

    kinds: dict[str, Kind] = Field(description="Kinds by id.")

    @field_validator("kinds")
    @classmethod
    def _ids(cls, v: dict[str, Kind]) -> dict[str, Kind]:
        for name, kind in v.items():
            if not re.match(KIND_ID, name):
                raise ValueError(f"kind id {name!r} must match {KIND_ID}")
            for target in kind.to:
                if target not in v:
                    raise ValueError(f"{name}.to names unknown kind {target!r}")
        return v


def load_kinds(root: Path) -> tuple[Kinds | None, list[Diagnostic]]:
    path = root / "specs" / "kinds.yaml"
    if not path.exists():
        return None, []
    diags = Diagnostics()
    try:
        src = load_yaml(path, root)
    except YamlError as exc:
        return None, exc.diagnostics
    return validate_model(Kinds, src.data, src, (), diags), diags.items


def load_meaning(
    path: Path,
    root: Path,
    tools: Mapping[str, tuple[frozenset[str], frozenset[str]]],
    kinds: Kinds | None,
) -> tuple[Meaning | None, list[Diagnostic]]:
    """One platform's meaning.yaml, checked against its tools ({tool: (parameters, response fields)}) and the
    kinds: every named tool, field, parameter and kind must exist."""
    diags = Diagnostics()
    try:
        src = load_yaml(path, root)
    except YamlError as exc:
        return None, exc.diagnostics
    meaning = validate_model(Meaning, src.data, src, (), diags)
    if meaning is None:
        return None, diags.items
    if meaning.platform != path.parent.name:
        diags.items.append(src.diag(("platform",), f"must be {path.parent.name!r}, the platform's folder"))
    params = frozenset().union(*(p for p, _ in tools.values())) if tools else frozenset()
    fields = frozenset().union(*(f for _, f in tools.values())) if tools else frozenset()
    _check_names(src, ("params",), meaning.params, params, "parameter", diags)
    _check_names(src, ("fields",), meaning.fields, fields, "response field", diags)
    for tool, own in meaning.tools.items():
        if tool not in tools:
            diags.items.append(src.diag(("tools", tool), f"{meaning.platform} has no tool {tool!r}"))
            continue
        _check_names(src, ("tools", tool, "params"), own.params, tools[tool][0], "parameter", diags)
        _check_names(src, ("tools", tool, "fields"), own.fields, tools[tool][1], "response field", diags)
        _check_names(
            src, ("tools", tool, "own"), dict.fromkeys(own.own), tools[tool][1], "response field", diags
        )
        _check_names(
            src, ("tools", tool, "item"), dict.fromkeys(own.item), tools[tool][1], "response field", diags
        )
        if own.item and own.rows != "kinds":
            diags.items.append(
                src.diag(
                    ("tools", tool, "item"),
                    "`item` names the row of a `rows: kinds` result; add `rows: kinds` or remove `item`",
                )
            )
    known = set(kinds.kinds) if kinds is not None else set()
    for name in meaning.kinds:
        if name in known:
            diags.items.append(
                src.diag(("kinds", name), f"kind {name!r} is declared in specs/kinds.yaml already")
            )
        elif not re.match(KIND_ID, name):
            diags.items.append(src.diag(("kinds", name), f"kind id {name!r} must match {KIND_ID}"))
    known |= set(meaning.kinds)
    for name, local in meaning.kinds.items():
        for target in local.to:
            if target not in known:
                diags.items.append(src.diag(("kinds", name, "to", target), f"unknown kind {target!r}"))
    for loc, used in _kinds_used(meaning):
        if used not in known:
            diags.items.append(
                src.diag(
                    loc, f"unknown kind {used!r}; declare it in specs/kinds.yaml (or under `kinds:` here)"
                )
            )
    return meaning, diags.items


def _check_names(
    src: Source,
    loc: tuple[str, ...],
    named: Mapping[str, object],
    known: frozenset[str],
    what: str,
    diags: Diagnostics,
) -> None:
    for name in named:
        if name not in known:
            near = sorted(k for k in known if k.lower() == name.lower())
            hint = f"; did you mean {near[0]!r}?" if near else ""
            diags.items.append(src.diag((*loc, name), f"no {what} is named {name!r}{hint}"))


def _kinds_used(m: Meaning) -> list[tuple[tuple[str, ...], str]]:
    out: list[tuple[tuple[str, ...], str]] = []
    for name, p in m.params.items():
        if p.kind:
            out.append((("params", name, "kind"), p.kind))
    for name, f in m.fields.items():
        if f.kind:
            out.append((("fields", name, "kind"), f.kind))
    for tool, own in m.tools.items():
        for name, p in own.params.items():
            if p.kind:
                out.append((("tools", tool, "params", name, "kind"), p.kind))
        for name, f in own.fields.items():
            if f.kind:
                out.append((("tools", tool, "fields", name, "kind"), f.kind))
    return out
