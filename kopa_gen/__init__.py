"""kopa-gen: platform specs compiled into typed MCP servers over a faithful offline sandbox."""

__version__ = "0.1.0"
