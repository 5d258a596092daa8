"""Tools an agent calls (search, categories, documents), the MCP server over them, and the
agentic search loop."""
