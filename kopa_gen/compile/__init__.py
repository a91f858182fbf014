"""The compiler: specs in, `generated/` out (typed MCP servers, frozen tool schemas, a manifest)."""
