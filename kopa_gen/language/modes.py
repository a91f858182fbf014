"""How the tools meet the model (`--tools-mode`, kopa_gen/mcp/search.py), in a module of its own: the MCP server
imports it at start-up, which must not pay for the task models."""

from __future__ import annotations

from typing import Literal

ToolsMode = Literal["all", "task", "search"]
"""`task` the task's list, `all` every tool, `search` each platform's entry tools beside `search_tools` and
`call_tool`."""
TOOLS_MODES: tuple[ToolsMode, ...] = ("all", "task", "search")
