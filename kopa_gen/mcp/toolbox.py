"""Tool bindings: name → (operation, argument model, result model), executed against a platform client.

This is the one place where a tool call from a model becomes a platform call. Every failure a model can cause
or meet comes back as a `ToolOutcome` with `is_error=True` and a message that names the fix; nothing raises.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import BaseModel, ValidationError

from kopa_gen.mcp.boundary import LIMITS, check_arguments, echo_name
from kopa_gen.mcp.render import PageParams, Rendering, render_result

if TYPE_CHECKING:
    from kopa_gen.client.client import PlatformClient, Result


@dataclass(frozen=True)
class ToolBinding:
    name: str
    operation_id: str
    shape: str
    args: type[BaseModel]
    result: type[BaseModel]


@dataclass(frozen=True)
class ToolOutcome:
    is_error: bool
    text: str
    structured: dict[str, Any] | None = None
    error_code: str | None = None
    # The result-code category of a failure (kopa_gen.language.kopa.Category values): structural ones (bad_param,
    # no_data, auth) mean the call was wrong, environmental ones (quota, rate, server) that it may work later.
    category: str | None = None


def describe_validation(tool: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "extra_forbidden":
            parts.append(f"{name}: unknown argument")
        elif err["type"] == "missing":
            parts.append(f"{name}: required argument is missing")
        else:
            parts.append(f"{name}: {err['msg']}")
    return f"invalid arguments for {tool}: " + "; ".join(parts)


class Unparsed(str):
    """Tool-call arguments the model wrote that are not JSON: its text as is, and where the parser stopped."""

    error: str

    def __new__(cls, text: str, error: str) -> Unparsed:
        made = super().__new__(cls, text)
        made.error = error
        return made


def parse_arguments(raw: str) -> Any:
    """The decoded JSON value of a call's argument text, or `Unparsed` naming the parser's position."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        near = raw[max(0, exc.pos - 20) : exc.pos + 20]
        where = f"line {exc.lineno}, column {exc.colno} (character {exc.pos})"
        return Unparsed(raw, f"{exc.msg}: the parser stopped at {where}, near {near!r}")
    except RecursionError:  # nesting past the stack, far past what any tool takes
        return Unparsed(
            raw, f"nested too deep to read (a tool's arguments nest at most {LIMITS.depth} levels)"
        )
    except ValueError:  # an integer past the 4,300 digits Python reads
        return Unparsed(raw, f"an integer too long to read (a tool takes at most {LIMITS.int_digits} digits)")


def not_json(tool: str, arguments: Unparsed) -> ToolOutcome:
    """The tool error for arguments that did not parse as JSON."""
    return ToolOutcome(
        True,
        f"the arguments of {tool} are not valid JSON: {arguments.error}; write them as one JSON object, "
        'e.g. {"name": "value", "count": 3}',
        error_code="bad_arguments",
        category="bad_param",
    )


def unknown_tool(name: str, known: Iterable[str]) -> ToolOutcome:
    return ToolOutcome(
        True,
        f"unknown tool {echo_name(name)}; available tools: {', '.join(sorted(known))}",
        error_code="unknown_tool",
        category="bad_param",
    )


def _structured(binding: ToolBinding, result: Result, props: Mapping[str, Any]) -> dict[str, Any]:
    base: dict[str, Any] = {"code": result.code, "message": result.message}
    if binding.shape == "record":
        base["record"] = result.record
    else:
        base.update(total_count=result.total, page=result.page, page_size=result.page_size, rows=result.rows)
        if result.rows and _typed_as_model(binding.result, props, result.rows[0]):
            # Bulk path: the client typed every row by the row schema, field by field as the row model types
            # it, so validating and dumping each row would hand the rows back unchanged; the envelope is still
            # validated.
            head = binding.result.model_validate({**base, "rows": []})
            out = head.model_dump(mode="json", by_alias=True, exclude_unset=True)
            out["rows"] = result.rows
            return out
    model = binding.result.model_validate(base)
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def result_text(data: dict[str, Any]) -> str:
    """A result as the model reads it: compact JSON, non-ASCII text as is. orjson writes it (a 1,000-row page in
    a tenth of the standard library's time); the standard library writes what orjson refuses (an integer past 64
    bits) the same way."""
    try:
        return orjson.dumps(data).decode("utf-8")
    except TypeError:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


_KINDS: dict[Any, str] = {str | None: "string", int | None: "integer", float | None: "number"}


def _typed_as_model(result: type[BaseModel], props: Mapping[str, Any], first: Mapping[str, Any]) -> bool:
    """Whether rows typed by `coerce(props, ...)`, whose keys are `first`'s, are valid rows of the result model
    exactly as they are: each key a field of that JSON type, optional and unconstrained."""
    fields = _plain_row_fields(result)
    if fields is None or len(first) != len(fields) or list(first) != [f for f in fields if f in first]:
        return False
    return all(
        (props.get(name) or {}).get("type", "string") == kind
        for name, kind in fields.items()
        if name in first
    )


@functools.cache
def _plain_row_fields(result: type[BaseModel]) -> dict[str, str] | None:
    """Field name -> JSON type of the row model when every field is an optional string, integer or number with
    no constraint, alias, default or validator of its own; None otherwise."""
    rows = result.model_fields.get("rows")
    args = typing.get_args(rows.annotation) if rows is not None else ()
    row = args[0] if len(args) == 1 else None
    if not (isinstance(row, type) and issubclass(row, BaseModel)):
        return None
    decorators = row.__pydantic_decorators__
    if any(getattr(decorators, f.name) for f in dataclasses.fields(decorators)):
        return None
    out: dict[str, str] = {}
    for name, field in row.model_fields.items():
        kind = _KINDS.get(field.annotation)
        if kind is None or field.metadata or field.is_required() or field.alias not in (None, name):
            return None
        if field.default is not None:
            return None
        out[name] = kind
    return out


class ToolBox:
    """The tools of one platform bound to one client (one session's view of a platform). `bindings` may load
    each tool at its first lookup (kopa_gen.mcp.catalog.Bindings); membership must not."""

    def __init__(self, bindings: Mapping[str, ToolBinding], client: PlatformClient) -> None:
        self.bindings = bindings
        self.client = client

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, rendering: Rendering | None = None
    ) -> ToolOutcome:
        """One call. The text is `result_text` (plain compact JSON, what the MCP server sends) or, with a
        `rendering`, what a session's model reads (kopa_gen.mcp.render)."""
        # Imported here: the spec models behind it are needed by a call, not by listing tools at start-up.
        from kopa_gen.client.errors import PlatformError, ToolArgumentError

        if name not in self.bindings:
            return unknown_tool(name, self.bindings)
        binding = self.bindings[name]
        if isinstance(arguments, Unparsed):
            return not_json(name, arguments)
        if arguments is not None and not isinstance(arguments, Mapping):
            return ToolOutcome(
                True,
                f"arguments for {name} must be a JSON object {{...}}, not {_json_kind(arguments)}",
                error_code="bad_arguments",
                category="bad_param",
            )
        refused = check_arguments(arguments)
        if refused is not None:
            return ToolOutcome(
                True,
                f"invalid arguments for {name}: {refused}",
                error_code="bad_arguments",
                category="bad_param",
            )
        try:
            args = binding.args.model_validate(dict(arguments or {}))
        except ValidationError as exc:
            return ToolOutcome(
                True, describe_validation(name, exc), error_code="bad_arguments", category="bad_param"
            )
        params = args.model_dump(by_alias=True, exclude_none=True)
        try:
            result = await self.client.call(binding.operation_id, params)
        except PlatformError as exc:
            text = f"{name} failed: [{exc.code}] {exc.message}"
            return ToolOutcome(
                True, self.client.redact(text), error_code=exc.code, category=exc.category.value
            )
        except ToolArgumentError as exc:  # valid by the schema, but not sendable (e.g. a URL too long)
            text = f"invalid arguments for {name}: {exc}"
            return ToolOutcome(True, text, error_code="bad_arguments", category="bad_param")
        op = self.client.platform.operation(binding.operation_id)
        data = _structured(binding, result, op.row_props)
        text = result_text(data)
        clean = self.client.redact(text)  # a service that echoes the key in a result (a row, a file) says ***
        if clean is not text:
            data = json.loads(clean)
        if rendering is None:
            return ToolOutcome(False, clean, data)
        paging = self.client.platform.kopa.paging
        names = PageParams(paging.page, paging.size) if paging and self.client.platform.paged(op) else None
        return ToolOutcome(False, render_result(data, rendering.budget, names), data)


def _json_kind(value: Any) -> str:
    """What a decoded JSON value is, in JSON's words."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
