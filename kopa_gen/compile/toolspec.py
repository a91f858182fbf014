"""What one generated tool looks like, computed from a spec operation: its arguments (with exact Python types and
Field constraints), its description, its result class. The template only prints these."""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from kopa_gen.language.platform import Operation, Param, Platform, tool_params

MEMBER_HINT = (
    "결과는 ZIP 안의 파일 목록이며, member로 고른 파일(기본: 첫 파일)의 내용을 보여 줍니다. 길면 잘린 곳과 이어 읽을 offset을 "
    "알려 줍니다."
)
PAGE_HINT = "결과가 여러 페이지이면 total_count와 page_size를 보고 {page}를 늘려 다음 페이지를 조회합니다."


@dataclass(frozen=True)
class ArgField:
    name: str  # Python attribute name
    alias: str | None  # real parameter name when it differs
    type_expr: str
    field_args: str
    required: bool


@dataclass(frozen=True)
class ToolSpec:
    name: str
    operation_id: str
    shape: str
    class_base: str
    description: str
    args: tuple[ArgField, ...]
    row_model: str
    read_only: bool


def pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _safe(name: str) -> tuple[str, str | None]:
    plain = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith(("model_", "_"))
    if plain and not hasattr(BaseModel, name):
        return name, None
    return "p_" + "".join(c if c.isalnum() else "_" for c in name), name


def _type_expr(schema: dict[str, Any]) -> str:
    enum = schema.get("enum")
    if enum:
        return (
            "Literal["
            + ", ".join(repr(str(e)) if schema.get("type") != "integer" else str(e) for e in enum)
            + "]"
        )
    return {"integer": "int", "number": "float", "boolean": "bool"}.get(schema.get("type", "string"), "str")


def _field_args(description: str, schema: dict[str, Any], alias: str | None) -> str:
    parts = [f"description={description.strip()!r}"]
    if alias is not None:
        parts.append(f"alias={alias!r}")
    if "pattern" in schema:
        parts.append(f"pattern={schema['pattern']!r}")
    for key, arg in (
        ("minimum", "ge"),
        ("maximum", "le"),
        ("maxLength", "max_length"),
        ("minLength", "min_length"),
    ):
        if key in schema:
            parts.append(f"{arg}={schema[key]!r}")
    return ", ".join(parts)


def _arg(name: str, schema: dict[str, Any], description: str, required: bool) -> ArgField:
    attr, alias = _safe(name)
    return ArgField(attr, alias, _type_expr(schema), _field_args(description, schema, alias), required)


def tool_args(platform: Platform, op: Operation) -> tuple[ArgField, ...]:
    """Tool arguments (`tool_params`): the operation's parameters minus the format switch; for bulk files, the
    local filters plus page/page_size."""
    assert op.kopa.shape != "file" or op.kopa.file is not None, f"{op.tool}: shape file without a file block"
    return tuple(_arg(p.name, p.schema, p.description, p.required) for p in tool_params(platform.kopa, op))


def tool_description(platform: Platform, op: Operation) -> str:
    text = op.summary.strip()
    if op.description.strip():
        text += "\n" + " ".join(op.description.split())
    paging = platform.kopa.paging
    if op.kopa.shape == "file" and op.kopa.file is not None and op.kopa.file.per_row:
        text += "\n" + MEMBER_HINT
    elif op.kopa.shape == "file":
        text += "\n" + PAGE_HINT.format(page="page")
    elif paging is not None and platform.paged(op):
        text += "\n" + PAGE_HINT.format(page=paging.page)
    return text


def tool_spec(platform: Platform, op: Operation) -> ToolSpec:
    base = "RecordResult" if op.kopa.shape == "record" else "ListResult"
    return ToolSpec(
        name=op.tool,
        operation_id=op.operation_id,
        shape=op.kopa.shape,
        class_base=base,
        description=tool_description(platform, op),
        args=tool_args(platform, op),
        row_model=op.row_name,
        read_only=op.kopa.effect == "read",
    )


def param_names(params: tuple[Param, ...]) -> list[str]:
    return [p.name for p in params]
