"""The MCP server: a front end serving one index's agent tools (``server.build_server``).

Import ``sira_seek.mcp.server`` only with the ``mcp`` extra installed; this package itself
imports nothing, so ``sira_seek.mcp`` is safe to name without it.
"""
