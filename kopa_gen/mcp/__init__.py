"""Tools as models see them: typed bindings over the platform client, and the MCP server that serves them."""
