"""An MCP server exposing the agent tools to any MCP client (an IDE assistant, an agent framework).

A front end like the HTTP API: it parses a tool call and renders the answer; the search,
category look-up and fetch are the workflow's (``sira_seek.workflows.agent_tools``), never a
retriever or an index read of its own (``tests/unit/foundation/test_layering_front_ends.py``).

Built on the official ``mcp`` SDK (2.x: ``MCPServer``, the successor of FastMCP), so the tool
schemas come from the type hints and pydantic models of the tools themselves, and stdio and
streamable HTTP are the SDK's own transports. The server holds no search logic: each tool is one
``AgentTools`` call, whose result goes back as structured content (and as its JSON text for
clients that read only text).

Failures the agent can act on (a bad ``k``, an unknown id, a missing index, the cluster down)
come back as tool errors carrying the reason, masked by the server's ``Redactor`` (no password,
key or credential-carrying URL reaches a model's context or transcript); anything else is a
crash the SDK reports without details. Arguments are bounded as the HTTP API's are (a document
id at most 512 bytes, a category name or phrase at most 512 characters), refused before any
engine call. A request naming a tool or prompt the server does not have is the protocol's
"invalid params" (-32602), answered without a traceback in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any, Literal, TypeVar, get_args

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, StrictInt, ValidationError

from sira_seek import __version__
from sira_seek.redaction import Redactor, redact_log_handlers
from sira_seek.workflows.agent_tools import (
    MAX_K,
    AgentTools,
    CategoryLookup,
    DocumentRef,
    FetchedDocument,
    SearchToolResult,
    ToolMethod,
)
from sira_seek.workflows.errors import InvalidInput, classify, validation_message
from sira_seek.workflows.fields import K
from sira_seek.workflows.methods import METHODS
from sira_seek.workflows.validation import MAX_DOC_ID_BYTES, MAX_PHRASE_CHARS

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
    "whole passage with its categories and keywords. `method` picks another retrieval: "
    "dense or hybrid (the index's vectors, when it was ingested with --embed) or sira-hybrid."
)

METHOD_HELP = (
    "Default: sira with expansions, else bm25. "
    + "; ".join(f"{m}: {METHODS[m].summary}" for m in get_args(ToolMethod))
    + ". sira and sira-hybrid take their phrases from `expansions` (no LLM of the server's); "
    "dense, hybrid and sira-hybrid need an index ingested with --embed."
)


class CategoryToolResult(CategoryLookup):
    """The look-up plus the first documents filed under the category (when it exists)."""

    documents: list[DocumentRef] = Field(default_factory=list)


LOGGED_NAME_CHARS = 100
"""How much of a caller's tool or prompt name an error (and so a log line) repeats."""


def package_version() -> str:
    """The installed sira-seek's version (``serverInfo.version``)."""
    try:
        return version("sira-seek")
    except PackageNotFoundError:
        return __version__


class UnknownNames:
    """Middleware answering a call of a tool or prompt the server does not have with the
    protocol's invalid-params error (-32602), as the spec asks, instead of the SDK's generic
    error (code 0, its traceback logged at ERROR)."""

    def __init__(self, server: MCPServer) -> None:
        self._server = server

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        wanted = (ctx.params or {}).get("name")
        if ctx.method in ("tools/call", "prompts/get") and isinstance(wanted, str):
            kind = "tool" if ctx.method == "tools/call" else "prompt"
            known = [t.name for t in await self._server.list_tools()]
            if kind == "prompt":
                known = [p.name for p in await self._server.list_prompts()]
            if wanted not in known:
                shown = wanted[:LOGGED_NAME_CHARS] + (
                    "..." if len(wanted) > LOGGED_NAME_CHARS else ""
                )
                offered = ", ".join(known) or "none"
                raise MCPError(
                    INVALID_PARAMS, f"unknown {kind} {shown!r}; this server has: {offered}"
                )
        return await call_next(ctx)


class WorkflowWordsServer(MCPServer):
    """An ``MCPServer`` whose refused arguments read as every other front end's: the SDK
    reports a pydantic ``ValidationError`` of a tool's arguments as its raw text (``1
    validation error for searchArguments ...``); here it is ``invalid_input: k: Input should
    be less than or equal to 10000``, the words of the CLI, the library and the HTTP API."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            refused = InvalidInput(validation_message(exc.__cause__))
            raise ToolError(f"{refused.kind}: {refused}") from exc.__cause__


def _anticipated(call: Callable[[], T], redact: Redactor) -> T:
    """Run one tool call; every failure the workflows classify (bad input, a missing index,
    the cluster or the LLM down) becomes a ``ToolError`` whose text says which and why,
    masked by ``redact``."""
    try:
        return call()
    except Exception as exc:
        known = classify(exc)
        if known is None:
            raise
        raise ToolError(redact(f"{known.kind}: {known}")) from exc


def build_server(
    tools: AgentTools, *, name: str = "sira-seek", redact: Redactor | None = None
) -> MCPServer:
    """An ``MCPServer`` with the search, category and fetch tools over ``tools``' index;
    ``redact`` masks every tool error (default: secrets by their shape, and those of the
    ``SIRA_SEEK_*`` variables)."""
    redact = redact or Redactor.configured()
    server = WorkflowWordsServer(
        name,
        version=package_version(),
        instructions=INSTRUCTIONS,
        description=f"SIRA search over the index {tools.index!r}",
        log_level="WARNING",
    )
    server.middleware.append(UnknownNames(server))
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
        k: Annotated[K, Field(description="How many passages.")] = 10,
        method: Annotated[ToolMethod | None, Field(description=METHOD_HELP)] = None,
    ) -> SearchToolResult:
        """Search the index: titled passages with ids, and the grounding decision of every
        expansion (kept, or dropped as absent / too common, with its document frequency)."""
        return _anticipated(lambda: tools.search(query, expansions, k, method=method), redact)

    def categories(
        name: Annotated[
            str,
            Field(
                max_length=MAX_PHRASE_CHARS,
                description="A category name, e.g. 'Defunct magazines'.",
            ),
        ],
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

        return _anticipated(look_up, redact)

    def fetch_document(
        doc_id: Annotated[
            str,
            Field(
                max_length=MAX_DOC_ID_BYTES,
                description=f"A passage id, as `search` returns it (at most {MAX_DOC_ID_BYTES} "
                "bytes).",
            ),
        ],
    ) -> FetchedDocument:
        """The whole passage: title, text, and its categories and keywords when enriched."""
        return _anticipated(lambda: tools.fetch_document(doc_id), redact)

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
    redact: Redactor | None = None,
) -> None:
    """Serve until stopped: over stdin/stdout (a client launches this process) or over
    streamable HTTP at ``http://HOST:PORT/mcp``, where ``api_keys`` (when given) are required
    as ``Authorization: Bearer KEY``, as by ``sira-seek serve``. Blocking. ``redact`` masks
    the tool errors and every log handler of the process (the API keys always added)."""
    redact = (redact or Redactor.configured()).merged(Redactor(api_keys))
    server = build_server(tools, redact=redact)
    redact_log_handlers(redact)
    if transport == "stdio":
        server.run("stdio")
        return
    logger.info("MCP server on http://%s:%d%s", host, port, HTTP_PATH)
    if not api_keys:
        server.run("streamable-http", host=host, port=port, streamable_http_path=HTTP_PATH)
        return
    import uvicorn

    from sira_seek.api_keys import ApiKeys

    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    guarded = ApiKeys(app, api_keys, open_paths=frozenset(), open_prefix=None)  # no open page
    uvicorn.run(guarded, host=host, port=port, log_level="warning")
