"""The MCP server of one platform (official `mcp` SDK, low-level Server): the frozen tools.json is listed as is,
and calls go through the ToolBox. Served over stdio or streamable HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext

from kopa_gen.mcp.toolbox import ToolBox


def load_tools(path: Path) -> list[types.Tool]:
    """Tools exactly as frozen at build time (no schema generation at start-up)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [types.Tool.model_validate(t) for t in data["tools"]]


def build_server(name: str, title: str, tools: list[types.Tool], toolbox: ToolBox) -> Server[Any]:
    listed = types.ListToolsResult(tools=tools)
    schemas = {t.name: t.input_schema for t in tools}

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        outcome = await toolbox.call(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.text)],
            structured_content=outcome.structured,
            is_error=outcome.is_error,
        )

    return Server(
        name,
        title=title,
        version="1",
        get_tool_input_schema=schemas.get,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
