"""`sira-seek mcp`: the search, category and fetch tools of one index as an MCP server."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import click

from sira_seek.workflows.agent_tools import AgentTools, open_agent_tools

from .access import api_keys_option, server_keys
from .options import (
    backend_from_options,
    cluster_options,
    command_redactor,
    friendly_errors,
    json_option,
    require_extra,
)

logger = logging.getLogger(__name__)


@click.command("mcp")
@click.option("--index", required=True, help="The index (or alias) the tools search.")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: a client launches this command; http: streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@api_keys_option
@click.option("--tau", type=float, default=None, help="Grounding threshold (default 0.1).")
@click.option("--weight", type=float, default=None, help="Expansion weight (default 0.5).")
@json_option(
    "Print {index, transport, url, tools} once before serving (over stdio on stderr: stdout "
    "carries the protocol)."
)
@cluster_options
@friendly_errors
def mcp(
    index: str,
    transport: str,
    host: str,
    port: int,
    api_keys_file: Path | None,
    run_open: bool,
    tau: float | None,
    weight: float | None,
    as_json: bool,
    **kw: Any,
) -> None:
    """Serve INDEX's search, category look-up and fetch tools to MCP clients (agents).

    The index name, its existence, --tau and --weight are checked before serving (the search
    request's own rules), so a wrong value fails here, not in the agent's first call. Over
    stdio nothing but the protocol is written to stdout; logs go to stderr.
    """
    require_extra("mcp", "mcp")
    keys = server_keys(api_keys_file, host, run_open) if transport == "http" else ()
    from sira_seek.mcp.server import HTTP_PATH, TOOL_NAMES, run_server

    redact = command_redactor(kw)  # before the cluster options are taken from kw
    backend = backend_from_options(kw)
    tools: AgentTools | None = None
    try:
        tools = open_agent_tools(backend, index, tau=tau, weight=weight)
        url = f"http://{host}:{port}{HTTP_PATH}" if transport == "http" else None
        if as_json:
            info = {"index": index, "transport": transport, "url": url, "tools": list(TOOL_NAMES)}
            click.echo(json.dumps(info), err=transport == "stdio")
        elif url is not None:
            click.echo(f"MCP server for {index!r} on {url}", err=True)
        run_server(
            tools,
            transport="http" if transport == "http" else "stdio",
            host=host,
            port=port,
            api_keys=keys,
            redact=redact,
        )
    finally:
        if tools is not None:
            tools.close()  # the vector methods' embedder, if one was made
        backend.close()
