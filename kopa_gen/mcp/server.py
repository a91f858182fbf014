"""The MCP server of one or more platforms (official `mcp` SDK, low-level Server): the frozen tools.json of each
platform is listed as is, and calls go through the platform's ToolBox. Served over stdio or streamable HTTP.

Start-up reads the listings and nothing else, so it does not grow with the number of tools beyond reading
tools.json: no tool's models are imported (kopa_gen.mcp.catalog), and the toolboxes (a project, a sandbox, clients)
may be opened at a connection's first call, one set per connection, by passing a function for them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types
from mcp.server import Server
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from kopa_gen.client.redaction import redact
from kopa_gen.language.modes import ToolsMode
from kopa_gen.mcp.boundary import echo_name
from kopa_gen.mcp.catalog import Catalog
from kopa_gen.mcp.generated import generated_module
from kopa_gen.mcp.search import (
    SEARCH_TOOL,
    ToolIndex,
    call_tool,
    route,
    search_tool,
)
from kopa_gen.mcp.toolbox import ToolBox, ToolOutcome, unknown_tool

if TYPE_CHECKING:
    from kopa_gen.client.client import PlatformClient

ToolBoxes = Sequence[ToolBox] | Callable[[], Sequence[ToolBox]]
"""The toolboxes behind a server: given ones, which every client shares (a server embedded around the caller's own
clients), or a function that opens a fresh set per client, in a worker thread, at the client's first call of a
known tool (a failure is said to that call and tried again at the next). A client is an MCP session over
streamable HTTP (its set is closed when the session ends; a 2026-era request, which has no session, is a client of
its own), or the one peer of a server without HTTP (stdio: one client per process). So each client of `kopa-gen
serve` has its own sandbox: its own workspace files, counters and fault stream, which no other client sees."""

STATE_KEY = "kopa.toolboxes"


def connection_of(ctx: ServerRequestContext[Any]) -> Connection:
    """The MCP connection a request came on. Its `state` and `exit_stack` are the SDK's place for per-connection
    resources (mcp.server.connection); the request context of this SDK version reaches it through its session
    (`Context.connection` is the public name once the runner hands handlers a `Context`)."""
    connection: Connection = ctx.session._connection
    return connection


class _PerClient:
    def __init__(self, toolboxes: ToolBoxes) -> None:
        self._open = toolboxes if callable(toolboxes) else None
        self._shared: Sequence[ToolBox] | None = None if callable(toolboxes) else toolboxes
        self._process: dict[str, Any] = {}  # the one client of a server without HTTP

    async def __call__(self, ctx: ServerRequestContext[Any]) -> Sequence[ToolBox]:
        if self._shared is not None:
            return self._shared
        import anyio
        import anyio.to_thread

        connection = connection_of(ctx) if ctx.request is not None else None
        state = connection.state if connection is not None else self._process
        lock = state.setdefault(STATE_KEY + ".lock", anyio.Lock())
        async with lock:
            boxes: Sequence[ToolBox] | None = state.get(STATE_KEY)
            if boxes is None:
                assert self._open is not None
                boxes = await anyio.to_thread.run_sync(self._open)
                state[STATE_KEY] = boxes
                if connection is not None:
                    connection.exit_stack.push_async_callback(_close, boxes)
        return boxes


async def _close(boxes: Sequence[ToolBox]) -> None:
    for box in boxes:
        await box.client.aclose()


def build_server(
    name: str,
    title: str,
    catalogs: Sequence[Catalog],
    toolboxes: ToolBoxes,
    mode: ToolsMode = "all",
    only: Collection[str] | None = None,
    output_schemas: bool = False,
) -> Server[Any]:
    """`mode` (kopa_gen/mcp/search.py): `all` lists every tool; `task` the tools named in `only` (a task's
    list), the others unknown; `search` the catalogs' entry tools, `search_tools` and `call_tool`, which reach
    every tool. The listing leaves out the tools' output schemas (three quarters of its bytes, read by no model)
    unless `output_schemas`; results are the same either way."""
    every = [tool for catalog in catalogs for tool in catalog.tools]
    tools = every
    index: ToolIndex | None = None
    if mode == "task":
        if only is None:
            raise ValueError("task mode lists a task's tools: give them")
        tools = [tool for tool in every if tool["name"] in only]
    elif mode == "search":
        pinned = {name for catalog in catalogs for name in catalog.entry}
        index = ToolIndex.of(every)
        tools = [tool for tool in every if tool["name"] in pinned]
        tools += [search_tool(len(every)), call_tool()]
    # The SDK takes a handler's result as wire data and validates it against the protocol version itself, so
    # the frozen listing goes out without building a Tool model per tool (2,000 tools: ~0.6 s saved per list).
    # The envelope (ttlMs, cacheScope, resultType) is the model's own default dump.
    envelope = types.ListToolsResult(tools=[]).model_dump(by_alias=True, mode="json", exclude_none=True)
    if not output_schemas:
        tools = [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in tools]
    listed = cast(types.ListToolsResult, {**envelope, "tools": tools})
    schemas: dict[str, Mapping[str, Any]] = {tool["name"]: tool["inputSchema"] for tool in tools}
    reachable = {tool["name"] for tool in every} if index is not None else set(schemas)
    opened = _PerClient(toolboxes)

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def call(
        ctx: ServerRequestContext[Any], name: str, arguments: Mapping[str, Any] | None
    ) -> ToolOutcome:
        routed = route(index, name, arguments) if index is not None else None
        if routed is not None and routed.answer is not None:
            return routed.answer
        if routed is not None and routed.through:
            name, arguments = routed.tool, routed.arguments
            if name not in reachable:
                return ToolOutcome(
                    True,
                    f"unknown tool {echo_name(name)}; find tools with {SEARCH_TOOL}",
                    error_code="unknown_tool",
                    category="bad_param",
                )
        elif name not in schemas:
            return unknown_tool(name, schemas)
        try:
            boxes = await opened(ctx)
        except Exception as exc:  # a broken spec or world: said to the caller, tried again at the next call
            said = redact(str(exc))
            print(f"kopa-gen serve: cannot open the platforms: {said}", file=sys.stderr)
            return ToolOutcome(True, f"the server cannot open its platforms: {said}", category="server")
        box = next((b for b in boxes if name in b.bindings), None)
        if box is None:
            return unknown_tool(name, schemas)
        return await box.call(name, arguments)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        outcome = await call(ctx, params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.text)],
            structured_content=outcome.structured,
            is_error=outcome.is_error,
        )

    server: Server[Any] = Server(
        name,
        title=title,
        version="1",
        get_tool_input_schema=schemas.get,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )

    async def on_discover(
        ctx: ServerRequestContext[Any], params: types.RequestParams | None
    ) -> types.DiscoverResult:
        # Over HTTP the tools keep state per client (the workspace, the counters), which needs a session: the 2026
        # era has none (each request is a connection of its own), so a client that asks is pointed to the
        # handshake era (the SDK's "auto" clients then initialize a session). A client that insists on the 2026
        # era is still served, each request in a sandbox of its own. Without HTTP (stdio) the process is the
        # session, and both eras are offered.
        versions = HANDSHAKE_PROTOCOL_VERSIONS if ctx.request is not None else MODERN_PROTOCOL_VERSIONS
        return types.DiscoverResult(
            supported_versions=list(versions),
            capabilities=server.get_capabilities(protocol_version=ctx.protocol_version),
        )

    if callable(toolboxes):  # per-connection state only where toolboxes are opened per connection
        server.add_request_handler("server/discover", types.RequestParams, on_discover)
    return server


def platforms_server(
    root: Path,
    platform_ids: Sequence[str],
    open_clients: Callable[[], Mapping[str, PlatformClient]],
    mode: ToolsMode = "all",
    only: Collection[str] | None = None,
    output_schemas: bool = False,
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
    catalogs = [module.CATALOG for module in modules]
    return build_server(name, str(title), catalogs, toolboxes, mode, only, output_schemas)
