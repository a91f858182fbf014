"""The MCP server of one or more platforms (official `mcp` SDK, low-level Server): the frozen tools.json of each
platform is listed as is, and calls go through the platform's ToolBox. Served over stdio or streamable HTTP.

Start-up reads the listings and nothing else, so it does not grow with the number of tools beyond reading
tools.json: no tool's models are imported (kopa_gen.mcp.catalog), and the toolboxes (a project, a sandbox, clients)
may be opened at the first call by passing a function for them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext

from kopa_gen.mcp.catalog import Catalog
from kopa_gen.mcp.generated import generated_module
from kopa_gen.mcp.toolbox import ToolBox, ToolOutcome, unknown_tool

if TYPE_CHECKING:
    from kopa_gen.client.client import PlatformClient

ToolBoxes = Sequence[ToolBox] | Callable[[], Sequence[ToolBox]]
"""The toolboxes behind a server, or a function that opens them; it runs once, in a worker thread, at the first
call of a known tool (a failure is raised to that call and tried again at the next)."""


class _Opened:
    def __init__(self, toolboxes: ToolBoxes) -> None:
        self._open = toolboxes if callable(toolboxes) else None
        self._boxes: Sequence[ToolBox] | None = None if callable(toolboxes) else toolboxes
        self._lock: Any = None

    async def __call__(self) -> Sequence[ToolBox]:
        if self._boxes is None:
            import anyio
            import anyio.to_thread

            self._lock = self._lock or anyio.Lock()
            async with self._lock:
                if self._boxes is None:
                    assert self._open is not None
                    self._boxes = await anyio.to_thread.run_sync(self._open)
        return self._boxes


def build_server(name: str, title: str, catalogs: Sequence[Catalog], toolboxes: ToolBoxes) -> Server[Any]:
    tools = [tool for catalog in catalogs for tool in catalog.tools]
    # The SDK takes a handler's result as wire data and validates it against the protocol version itself, so
    # the frozen listing goes out without building a Tool model per tool (2,000 tools: ~0.6 s saved per list).
    # The envelope (ttlMs, cacheScope, resultType) is the model's own default dump.
    envelope = types.ListToolsResult(tools=[]).model_dump(by_alias=True, mode="json", exclude_none=True)
    listed = cast(types.ListToolsResult, {**envelope, "tools": tools})
    schemas: dict[str, Mapping[str, Any]] = {tool["name"]: tool["inputSchema"] for tool in tools}
    opened = _Opened(toolboxes)

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def call(name: str, arguments: Mapping[str, Any] | None) -> ToolOutcome:
        if name not in schemas:
            return unknown_tool(name, schemas)
        try:
            boxes = await opened()
        except Exception as exc:  # a broken spec or world: said to the caller, tried again at the next call
            print(f"kopa-gen serve: cannot open the platforms: {exc}", file=sys.stderr)
            return ToolOutcome(True, f"the server cannot open its platforms: {exc}", category="server")
        box = next((b for b in boxes if name in b.bindings), None)
        if box is None:
            return unknown_tool(name, schemas)
        return await box.call(name, arguments)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        outcome = await call(params.name, params.arguments)
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


def platforms_server(
    root: Path, platform_ids: Sequence[str], open_clients: Callable[[], Mapping[str, PlatformClient]]
) -> Server[Any]:
    """One server for the tools of several platforms of the project at `root` (tool names are unique across a
    project); the clients are opened at the first call. A single platform keeps its own server name and title."""
    modules = [generated_module(pid, root=root) for pid in platform_ids]

    def toolboxes() -> list[ToolBox]:
        clients = open_clients()
        return [module.create_toolbox(clients[module.PLATFORM]) for module in modules]

    if len(modules) == 1:
        name, title = f"kopa-{modules[0].PLATFORM}", modules[0].TITLE
    else:
        name, title = "kopa", "kopa-gen: " + ", ".join(module.TITLE for module in modules)
    return build_server(name, str(title), [module.CATALOG for module in modules], toolboxes)
