"""An MCP server exposing ``AgentTools`` to any MCP client (an IDE assistant, an agent framework).

Built on the official ``mcp`` SDK (2.x: ``MCPServer``, the successor of FastMCP), so the tool
schemas come from the type hints and pydantic models of the tools themselves, and stdio and
streamable HTTP are the SDK's own transports. The server holds no search logic: each tool is one
``AgentTools`` call, whose result goes back as structured content (and as its JSON text for
clients that read only text).

Failures the agent can act on (a bad ``k``, an unknown id, a missing index) come back as tool
errors carrying the reason; anything else is a crash the SDK reports without details, so no
cluster address or credential can leak into a model's context.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, StrictInt

from sira_seek.workflows.errors import NotFound, classify

from .tools import (
    MAX_K,
    AgentTools,
    CategoryLookup,
    DocumentRef,
    FetchedDocument,
    SearchToolResult,
)

logger = logging.getLogger(__name__)

Transport = Literal["stdio", "http"]
#: Where the streamable HTTP transport answers (the SDK's default path).
HTTP_PATH = "/mcp"
#: The tools ``build_server`` registers, in order.
TOOL_NAMES = ("search", "categories", "fetch_document")

T = TypeVar("T")

INSTRUCTIONS = (
    "Search one Elasticsearch/OpenSearch index of passages. `search` runs BM25 on the query; "
    "give `expansions` (short phrases an answer passage would contain: names, dates, rare "
    "terms) to run SIRA, where each expansion is kept only when the index holds it and it is "
    "rare enough to discriminate - `grounding` says what happened to each, so rephrase dropped "
    "ones. `categories` checks a category name against the index's grounded categories and "
    "lists the nearest existing ones and documents filed under it. `fetch_document` returns a "
    "whole passage with its categories and keywords."
)


class CategoryToolResult(CategoryLookup):
    """The look-up plus the first documents filed under the category (when it exists)."""

    documents: list[DocumentRef] = Field(default_factory=list)


def _anticipated(call: Callable[[], T]) -> T:
    """Run one tool call; every failure the workflows classify (bad input, a missing index,
    the cluster or the LLM down) becomes a ``ToolError`` whose text says which and why."""
    try:
        return call()
    except Exception as exc:
        known = classify(exc)
        if known is None:
            raise
        raise ToolError(f"{known.kind}: {known}") from exc


def build_server(tools: AgentTools, *, name: str = "sira-seek") -> MCPServer:
    """An ``MCPServer`` with the search, category and fetch tools over ``tools``' index."""
    server = MCPServer(
        name,
        instructions=INSTRUCTIONS,
        description=f"SIRA search over the index {tools.index!r}",
        log_level="WARNING",
    )
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    def search(
        query: Annotated[str, Field(description="What to search for, in natural language.")],
        expansions: Annotated[
            list[str] | None,
            Field(
                description="Phrases an answer passage would contain; each is grounded in the "
                "index's document frequencies before it enters the query. Omit for plain BM25."
            ),
        ] = None,
        k: Annotated[StrictInt, Field(ge=1, le=MAX_K, description="How many passages.")] = 10,
    ) -> SearchToolResult:
        """Search the index: titled passages with ids, and the grounding decision of every
        expansion (kept, or dropped as absent / too common, with its document frequency)."""
        return _anticipated(lambda: tools.search(query, expansions, k))

    def categories(
        name: Annotated[str, Field(description="A category name, e.g. 'Defunct magazines'.")],
        k: Annotated[
            StrictInt,
            Field(ge=1, le=MAX_K, description="How many nearest categories and documents."),
        ] = 10,
    ) -> CategoryToolResult:
        """Is `name` a category of the index (and in how many documents)? Which existing
        categories are nearest to it? Which documents are filed under it?"""

        def look_up() -> CategoryToolResult:
            found = tools.categories(name, k)
            docs = tools.documents(found.name, k).documents if found.exists else []
            return CategoryToolResult(**found.model_dump(), documents=docs)

        return _anticipated(look_up)

    def fetch_document(
        doc_id: Annotated[str, Field(description="A passage id, as `search` returns it.")],
    ) -> FetchedDocument:
        """The whole passage: title, text, and its categories and keywords when enriched."""
        found = _anticipated(lambda: tools.fetch(doc_id))
        if found is None:
            if not _anticipated(lambda: tools.backend.index_exists(tools.index)):
                missing = NotFound(f"index {tools.index!r} does not exist", field="index")
                raise ToolError(f"{missing.kind}: {missing}")
            raise ToolError(f"not_found: no document with id {doc_id!r} in index {tools.index!r}")
        return found

    server.add_tool(search, annotations=read_only)
    server.add_tool(categories, annotations=read_only)
    server.add_tool(fetch_document, annotations=read_only)
    return server


def run_server(
    tools: AgentTools,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    api_keys: tuple[str, ...] = (),
) -> None:
    """Serve until stopped: over stdin/stdout (a client launches this process) or over
    streamable HTTP at ``http://HOST:PORT/mcp``, where ``api_keys`` (when given) are required
    as ``Authorization: Bearer KEY``, as by ``sira-seek serve``. Blocking."""
    server = build_server(tools)
    if transport == "stdio":
        server.run("stdio")
        return
    logger.info("MCP server on http://%s:%d%s", host, port, HTTP_PATH)
    if not api_keys:
        server.run("streamable-http", host=host, port=port, streamable_http_path=HTTP_PATH)
        return
    import uvicorn

    from sira_seek.service.guards import ApiKeys

    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    uvicorn.run(ApiKeys(app, api_keys), host=host, port=port, log_level="warning")
