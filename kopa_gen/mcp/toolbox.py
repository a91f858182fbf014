"""Tool bindings: name → (operation, argument model, result model), executed against a platform client.

This is the one place where a tool call from a model becomes a platform call. Every failure a model can cause
or meet comes back as a `ToolOutcome` with `is_error=True` and a message that names the fix; nothing raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

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
    # The result-code category of a failure (kopa_gen.spec.kopa.Category values): structural ones (bad_param,
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


def unknown_tool(name: str, known: Iterable[str]) -> ToolOutcome:
    return ToolOutcome(
        True,
        f"unknown tool {name!r}; available tools: {', '.join(sorted(known))}",
        error_code="unknown_tool",
        category="bad_param",
    )


def _structured(binding: ToolBinding, result: Result) -> dict[str, Any]:
    base: dict[str, Any] = {"code": result.code, "message": result.message}
    if binding.shape == "record":
        base["record"] = result.record
    else:
        base.update(total_count=result.total, page=result.page, page_size=result.page_size, rows=result.rows)
    model = binding.result.model_validate(base)
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


class ToolBox:
    """The tools of one platform bound to one client (one session's view of a platform). `bindings` may load
    each tool at its first lookup (kopa_gen.mcp.catalog.Bindings); membership must not."""

    def __init__(self, bindings: Mapping[str, ToolBinding], client: PlatformClient) -> None:
        self.bindings = bindings
        self.client = client

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolOutcome:
        # Imported here: the spec models behind it are needed by a call, not by listing tools at start-up.
        from kopa_gen.client.errors import PlatformError, ToolArgumentError

        if name not in self.bindings:
            return unknown_tool(name, self.bindings)
        binding = self.bindings[name]
        if arguments is not None and not isinstance(arguments, Mapping):
            return ToolOutcome(
                True,
                f"arguments for {name} must be a JSON object",
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
        data = _structured(binding, result)
        return ToolOutcome(False, json.dumps(data, ensure_ascii=False), data)
