"""Our MCP tools as verl `BaseTool`s: one adapter class, one instance per tool, built from the tool's MCP
description in generated/servers/<platform>/tools.json. Needs the `train` extra (verl).

verl drives a `BaseTool` per call (`create` → `execute` → `release`, ../shared/reference/verl-0.9.md §2.3), so the
instance id says nothing about the trajectory. The trajectory's Session is found through `agent_data.request_id`
in `SESSIONS`, which our agent loop (kopa_gen.train.agent_loop) fills when the trajectory starts and empties when
it ends. `execute` never raises: unknown tools, bad arguments, a used-up budget and API errors are the session's
tool errors and go back to the model as the tool message, exactly as in `kopa-gen eval`.

Schema fidelity: verl's own schema models keep only type/description/enum of each parameter and reject
parameters without a `type` (anyOf). The adapter keeps the FULL JSON schema the policies see in `kopa-gen eval`
(`openai_tools`) through pydantic subclasses with extra="allow"; the tool YAML carries that schema in `config`
because verl validates `tool_schema` with its lossy model before the adapter sees it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import (
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
    ToolResponse,
)

from kopa_gen.evaluate.submission import SUBMIT_TOOL
from kopa_gen.language.diagnostics import NotFound
from kopa_gen.language.yamlout import dump_yaml
from kopa_gen.mcp.search import call_tool, search_tool
from kopa_gen.policies.openai import openai_tools
from kopa_gen.project import Project
from kopa_gen.runtime.session import Session, frozen_tools
from kopa_gen.train import contract
from kopa_gen.train.offload import run_on

# request id (one per trajectory, see AgentData.request_id) -> the trajectory's Session, and the event loop it
# lives on when it runs off verl's loop (kopa_gen.train.offload; absent: inline)
SESSIONS: dict[str, Session] = {}
SESSION_LOOPS: dict[str, asyncio.AbstractEventLoop] = {}

ADAPTER = f"{__name__}.KopaTool"


class FullPropertySchema(OpenAIFunctionPropertySchema):  # type: ignore[misc]  # verl is untyped
    """A parameter schema that keeps every JSON-schema keyword (items, properties, anyOf, minimum ...)."""

    model_config = ConfigDict(extra="allow")
    type: str | list[str] | None = None  # anyOf / oneOf parameters have none


class FullParametersSchema(OpenAIFunctionParametersSchema):  # type: ignore[misc]  # verl is untyped
    model_config = ConfigDict(extra="allow")
    properties: dict[str, FullPropertySchema] = Field(default_factory=dict)


class FullFunctionSchema(OpenAIFunctionSchema):  # type: ignore[misc]  # verl is untyped
    model_config = ConfigDict(extra="allow")
    description: str = ""
    parameters: FullParametersSchema = Field(default_factory=lambda: FullParametersSchema(type="object"))


class FullToolSchema(OpenAIFunctionToolSchema):  # type: ignore[misc]  # verl is untyped
    """`isinstance(..., OpenAIFunctionToolSchema)` still holds; `model_dump(exclude_unset=True,
    exclude_none=True)` (what verl shows the model) gives back the schema it was built from."""

    model_config = ConfigDict(extra="allow")
    function: FullFunctionSchema


def register_session(
    request_id: str, session: Session, loop: asyncio.AbstractEventLoop | None = None
) -> None:
    if request_id in SESSIONS:
        raise KeyError(f"a session is already registered for request {request_id!r}")
    SESSIONS[request_id] = session
    if loop is not None:
        SESSION_LOOPS[request_id] = loop


def unregister_session(request_id: str) -> Session | None:
    SESSION_LOOPS.pop(request_id, None)
    return SESSIONS.pop(request_id, None)


def full_schema(openai_tool: dict[str, Any]) -> FullToolSchema:
    schema: FullToolSchema = FullToolSchema.model_validate(openai_tool)
    return schema


class KopaTool(BaseTool):  # type: ignore[misc]  # verl is untyped
    """One MCP tool of one platform. `config`: {"type": "native", "platform": pid, "schema": <OpenAI tool>}; the
    schema in `config` wins over `tool_schema` (which verl has already stripped to its lossy model)."""

    def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema | None) -> None:
        raw = config.get("schema")
        if raw is not None:
            schema: OpenAIFunctionToolSchema = full_schema(raw)
        elif tool_schema is not None:
            schema = full_schema(tool_schema.model_dump(exclude_unset=True, exclude_none=True))
        else:
            raise ValueError("KopaTool needs config.schema or tool_schema")
        # BaseTool.__init__ prints the whole schema for every tool; set the attributes it would set instead.
        self.config = config
        self.tool_schema = schema
        self.name: str = schema.function.name
        self.platform: str | None = config.get("platform")

    def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
        return self.tool_schema

    async def execute(
        self, instance_id: str, parameters: Any, **kwargs: Any
    ) -> tuple[ToolResponse, float, dict[str, Any]]:
        agent_data = kwargs.get("agent_data")
        request_id = getattr(agent_data, "request_id", None)
        session = SESSIONS.get(request_id) if isinstance(request_id, str) else None
        if session is None:
            text = (
                f"tool {self.name!r} has no session for this trajectory (request id {request_id!r}); "
                f"run it through the {__package__}.agent_loop agent loop"
            )
            return ToolResponse(text=text), 0.0, {"kopa_error": "no_session"}
        loop = SESSION_LOOPS.get(request_id) if isinstance(request_id, str) else None
        outcome = await run_on(loop, session.call(self.name, parameters))
        metrics: dict[str, Any] = {"kopa_error": outcome.error_code} if outcome.is_error else {}
        return ToolResponse(text=outcome.text), 0.0, metrics


def mcp_tools(project: Project, platforms: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """(platform, MCP tool) for every tool of `platforms`, as frozen in tools.json (what Session.tools() serves)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for pid in platforms:
        path = project.root / "generated" / "servers" / pid / "tools.json"
        if not path.exists():
            raise NotFound(f"no {path}; run `kopa-gen build` for platform {pid!r}")
        out.extend((pid, tool) for tool in frozen_tools(path))
    return out


def verl_lossy_ok(openai_tool: dict[str, Any]) -> bool:
    """Whether verl's own schema model accepts the schema (it rejects parameters without a `type`)."""
    try:
        OpenAIFunctionToolSchema.model_validate(openai_tool)
    except ValidationError:
        return False
    return True


def tool_config(project: Project, platforms: Sequence[str], search: bool = False) -> dict[str, Any]:
    """verl's tool-config document (`actor_rollout_ref.rollout.multi_turn.tool_config_path`) for `platforms`, and
    the `submit_answer` tool (kopa_gen.train.contract.GENERIC_SUBMIT); with `search`, search mode's
    `search_tools` and `call_tool` over every tool of `platforms` (as the episodes' sessions list them).

    `tool_schema` is the full schema where verl's lossy model accepts it and a stub otherwise (verl validates it
    before the adapter runs); the adapter builds its schema from `config.schema` either way."""
    submit = {"name": SUBMIT_TOOL, **contract.GENERIC_SUBMIT["function"]}
    submit["inputSchema"] = submit.pop("parameters")
    # one generic submit_answer entry first; the agent loop shows each trajectory its task's typed schema
    entries: list[dict[str, Any]] = []
    tools = mcp_tools(project, platforms)
    finders = [(None, search_tool(len(tools))), (None, call_tool())] if search else []
    for pid, tool in [(None, submit), *finders, *tools]:
        schema = openai_tools([tool])[0]
        listed = (
            schema
            if verl_lossy_ok(schema)
            else {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": {"type": "object", "properties": {}},
                },
            }
        )
        entries.append(
            {
                "class_name": ADAPTER,
                "config": {"type": "native", "platform": pid, "schema": schema},
                "tool_schema": listed,
            }
        )
    return {"tools": entries}


def _escape_interpolation(value: Any) -> Any:
    """verl reads the file with OmegaConf and resolves it: a literal `${` must be written `\\${`."""
    if isinstance(value, str):
        return value.replace("${", "\\${")
    if isinstance(value, dict):
        return {k: _escape_interpolation(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escape_interpolation(v) for v in value]
    return value


def write_tool_config(project: Project, platforms: Sequence[str], path: Path, search: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = _escape_interpolation(tool_config(project, platforms, search))
    text = dump_yaml(document, width=120)
    path.write_text(text, encoding="utf-8")
    return path
