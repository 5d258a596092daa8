"""The HTTP API behind ``sira-seek serve``: SIRA search and SEEK answers as JSON over HTTP.

Applications in any language, and agents, reach the same library code as the command line:
``POST /search`` returns exactly the document ``sira-seek search --json`` prints (both come
from ``SiraResult.to_search_json``), ``POST /ask`` the ``SeekResult`` of ``sira-seek ask``.

The cluster is connected lazily and retried on every request until it answers, so a server
started before its cluster (or outliving a restart) reports ``503`` with the reason instead
of refusing to start. Errors are mapped once, in ``errors.http_error``: bad bodies are
``422``, an unknown index ``404``, the cluster or LLM unreachable ``503``; secrets never
reach a response (``Redactor``).

The app is assembled here (middleware, error handlers, the OpenAPI document); each route
lives in ``service/routes/``, the bodies in ``service/bodies.py``, what the routes share in
``service/state.py``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from starlette.middleware.trustedhost import TrustedHostMiddleware

from sira_seek import __version__
from sira_seek.redaction import Redactor
from sira_seek.workflows.methods import METHODS
from sira_seek.workflows.validation import INDEX_PATTERN

from .errors import UNAVAILABLE_ERRORS, install_error_handlers
from .guards import ApiKeys, BodyLimit
from .logs import RequestIdMiddleware
from .metrics import MetricsMiddleware
from .routes import ask, health, metrics, search
from .settings import ServiceConfig
from .state import ServiceState

if TYPE_CHECKING:
    from sira_seek.client import SiraSeek

logger = logging.getLogger(__name__)

__all__ = ["ServiceConfig", "create_app"]


def create_app(
    connect: Callable[[], SiraSeek],
    config: ServiceConfig | None = None,
    *,
    redact: Redactor | None = None,
    on_ready: Callable[[], None] | None = None,
) -> FastAPI:
    """The FastAPI application over the cluster ``connect`` reaches.

    ``connect`` is called lazily (and again after a failure), so tests and callers can pass
    ``lambda: SiraSeek(backend)`` or ``sira_seek.connect`` with their settings. ``on_ready``
    runs once the app started and tried the cluster, before the first request (a server
    process settles its heap there: ``sira_seek.gc_settings``).
    """
    config = config or ServiceConfig()
    # Without one given (a library caller), the secrets of the config it has: the LLM spec's,
    # the API keys, the SIRA_SEEK_* variables'.
    redact = redact or Redactor.configured(llm=config.llm, keys=config.api_keys)
    state = ServiceState(connect, config, redact)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            state.cluster.get()
        except UNAVAILABLE_ERRORS as exc:
            logger.warning("the cluster is not reachable yet (%s); retrying per request", exc)
        else:
            # Read once with the connection just made, for the OpenAPI document.
            _app.state.indexes_have_vectors = _indexes_have_vectors(state)
        if on_ready is not None:
            on_ready()
        yield
        # After the server stopped accepting and the requests in flight ended (or were
        # cancelled after --shutdown-timeout).
        state.close()
        logger.info("stopped: the cluster connection is closed")

    # fastapi-offline serves Swagger UI and ReDoc from the package itself: /docs works on a
    # machine without internet access (FastAPI's default loads them from a public CDN).
    app = FastAPIOffline(
        title="sira-seek",
        version=__version__,
        description="SIRA retrieval (LLM-proposed, DF-grounded query expansion as one "
        "weighted BM25 query) and SEEK answers over an Elasticsearch or OpenSearch cluster.",
        lifespan=lifespan,
    )
    # Outermost first: the Host header, then the key, then the body size (never read for a
    # caller without a key).
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)
    if config.api_keys:
        app.add_middleware(ApiKeys, keys=config.api_keys)
    if config.allowed_hosts != ("*",):
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(config.allowed_hosts))
    routes = frozenset({"/search", "/ask", "/health", "/metrics"})
    app.add_middleware(MetricsMiddleware, metrics=state.metrics, routes=routes)
    app.add_middleware(RequestIdMiddleware)  # outermost: every answer has its id
    install_error_handlers(app, redact)
    # In the order the OpenAPI document has always listed them.
    for module in (metrics, health, search, ask):
        app.include_router(module.router(state))
    _exact_index_schema(app, config, lambda: getattr(app.state, "indexes_have_vectors", True))
    return app


def _indexes_have_vectors(state: ServiceState) -> bool:
    """Whether a vector method can be served on the allow-listed indexes: True when one of
    them holds vectors (``ingest --embed``), or when that cannot be told (no allow-list, the
    cluster unreachable): the document then keeps every method, as before."""
    if not state.config.indexes:
        return True
    from sira_seek.sira.dense import read_index_embedding

    try:
        backend = state.cluster.get().backend
        return any(read_index_embedding(backend, name) is not None for name in state.config.indexes)
    except Exception as exc:  # the document must answer whatever the cluster does
        logger.info("could not tell whether the indexes hold vectors (%s)", exc)
        return True


def _exact_index_schema(
    app: FastAPI, config: ServiceConfig, have_vectors: Callable[[], bool]
) -> None:
    """The OpenAPI document names the indexes a request may use: the allow-list as an enum,
    else the pattern of names always accepted; and, on a server without an LLM, that
    ``rerank`` can only be 0. A client generating requests from it (such as schemathesis)
    then sends only what the service serves."""
    from fastapi.openapi.utils import get_openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        names: dict[str, Any] = (
            {"type": "string", "enum": list(config.indexes)}
            if config.indexes
            else {"type": "string", "pattern": INDEX_PATTERN}
        )
        for model in ("SearchBody", "AskBody"):
            props = schema["components"]["schemas"][model]["properties"]
            props["index"] = {
                "anyOf": [names, {"type": "null"}],
                "description": props["index"].get("description", ""),
                "title": "Index",
            }
        if not config.llm:
            # Without an LLM nothing can rerank: the document says 0 is the only value served.
            rerank = schema["components"]["schemas"]["SearchBody"]["properties"]["rerank"]
            next(a for a in rerank["anyOf"] if a.get("type") == "integer")["maximum"] = 0
            rerank["description"] += " This server has no LLM: 0 (or unset) only."
            # Nor can it run a method whose text an LLM writes (hyde, cot; the route refuses
            # them with 422): the document lists the methods it serves. SIRA is served with
            # the body's phrases only: `method: sira` (or sira-hybrid) without `expansions` is
            # refused (422, field expansions), so the document requires them (if/then), as the
            # route does; an unset method without phrases is BM25.
            body = schema["components"]["schemas"]["SearchBody"]
            method = body["properties"]["method"]
            served = [m.name for m in METHODS.values() if m.additions != "generated"]
            method["anyOf"] = [{"type": "string", "enum": served}, {"type": "null"}]
            method["description"] += " This server has no LLM: " + ", ".join(served) + " only."
            phrase_methods = [m.name for m in METHODS.values() if m.additions == "phrases"]
            body["if"] = {
                "properties": {"method": {"enum": phrase_methods}},
                "required": ["method"],
            }
            body["then"] = {
                "properties": {"expansions": {"type": "array"}},
                "required": ["expansions"],
            }
            body["properties"]["expansions"]["description"] += (
                " This server has no LLM: methods " + ", ".join(phrase_methods) + " require them."
            )
        if not have_vectors():
            # None of the allow-listed indexes holds vectors: dense, hybrid and sira-hybrid
            # (SEEK's dense and hybrid retrievers) would be refused (422), so the document
            # does not offer them. Read at start-up, when the app first reaches the cluster.
            _drop_enum(
                schema,
                "SearchBody",
                "method",
                {m.name for m in METHODS.values() if m.vectors != "none"},
            )
            _drop_enum(schema, "AskBody", "retriever", {"dense", "hybrid"})
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _drop_enum(schema: dict[str, Any], model: str, field: str, names: set[str]) -> None:
    """Remove ``names`` from the enum of ``model.field`` (directly, or in an ``anyOf`` or a
    referenced enum schema), and say so in its description."""
    schemas = schema["components"]["schemas"]
    prop = schemas[model]["properties"][field]
    options = prop.get("anyOf", [prop])
    for option in options:
        target = option
        if "$ref" in option:
            target = schemas[option["$ref"].rsplit("/", 1)[-1]]
        if "enum" in target:
            if target is not option:  # a shared enum schema: narrow a copy for this field
                target = {**target}
                option.clear()
                option.update(target)
            target["enum"] = [v for v in target["enum"] if v not in names]
    prop["description"] = (
        prop.get("description", "")
        + " The indexes this server serves hold no vectors: "
        + ", ".join(sorted(names))
        + " are not offered."
    )
