"""The HTTP API behind ``sira-seek serve``: SIRA search and SEEK answers as JSON over HTTP.

Applications in any language, and agents, reach the same library code as the command line:
``POST /search`` returns exactly the document ``sira-seek search --json`` prints (both come
from ``SiraResult.to_search_json``), ``POST /ask`` the ``SeekResult`` of ``sira-seek ask``.

The cluster is connected lazily and retried on every request until it answers, so a server
started before its cluster (or outliving a restart) reports ``503`` with the reason instead
of refusing to start. Errors are mapped once, in ``_http_error``: bad bodies are ``422``, an
unknown index ``404``, the cluster or LLM unreachable ``503``; secrets never reach a
response (``Redactor``).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from sira_seek import __version__
from sira_seek.backend import EngineError, ScanContextLostError
from sira_seek.llm.errors import LLMCallError
from sira_seek.redaction import Redactor
from sira_seek.seek.settings import SeekMethod
from sira_seek.sira.index_profile import ProfileCache
from sira_seek.sira.settings import MAX_RERANK, MAX_WEIGHT
from sira_seek.sira.term_vectors import TermStatisticsError
from sira_seek.workflows import validation
from sira_seek.workflows.errors import (
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    Unavailable,
    classify,
)
from sira_seek.workflows.methods import METHODS, RetrievalMethod
from sira_seek.workflows.request_base import OnLLMFailure
from sira_seek.workflows.validation import (
    INDEX_PATTERN,
    MAX_EXPANSIONS,
    MAX_INDEX_NAME_BYTES,
    MAX_PHRASE_CHARS,
    MAX_QUERY_CHARS,
    NOT_BLANK_PATTERN,
)

from .guards import ApiKeys, BodyLimit
from .logs import RequestIdMiddleware
from .metrics import MetricsMiddleware, ServiceMetrics
from .settings import ServiceConfig
from .threads import BlockingCalls, ClientGone, QueueFull

if TYPE_CHECKING:
    from sira_seek.client import SiraSeek
    from sira_seek.sira.expansions import QueryExpander
    from sira_seek.sira.rerank import LLMReranker
    from sira_seek.sira.results import SiraResult

logger = logging.getLogger(__name__)

UNAVAILABLE_ERRORS: tuple[type[BaseException], ...] = (
    EngineError,
    TermStatisticsError,
    ScanContextLostError,
    LLMCallError,
)
"""The cluster or the LLM refused or cannot be reached: ``503`` with the reason."""


T = TypeVar("T")
R = TypeVar("R")

CLIENT_CLOSED_REQUEST = 499
"""The status recorded (metrics, logs) for a request whose client went away: nginx's code,
never sent (nobody is there to read it)."""


async def _client_left(request: Request) -> None:
    """Returns once the client of ``request`` disconnected. Called after the body was read,
    so the server's next message is ``http.disconnect`` (or none, until the answer is sent
    and this watch cancelled)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _json_integer(value: object) -> object:
    """An integer as JSON Schema means it: ``5`` or ``5.0``, never ``"5"`` or ``true``."""
    if isinstance(value, bool | str):
        raise ValueError("must be an integer")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _json_number(value: object) -> object:
    """A number as JSON means it: never ``"0.5"`` or ``false``."""
    if isinstance(value, bool | str):
        raise ValueError("must be a number")
    return value


Phrase = Annotated[str, Field(max_length=MAX_PHRASE_CHARS)]
# Bounded like every string of a body: pydantic then also refuses text that is not Unicode
# (a lone surrogate such as "\ud800", which JSON can carry) with a 422 naming the field,
# before it reaches a check or an encoder that would fail on it (a 500).
IndexName = Annotated[str, Field(max_length=MAX_INDEX_NAME_BYTES)]


class ErrorItem(BaseModel):
    """One problem with a request: where (``loc``) and what (``msg``)."""

    loc: list[str | int]
    msg: str


class ErrorBody(BaseModel):
    """Every error answer: one readable line, and the problems one by one (may be empty)."""

    detail: str
    errors: list[ErrorItem] = Field(default_factory=list)


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "Missing or wrong API key (when keys are set)."},
    403: {"model": ErrorBody, "description": "The index is not one this service serves."},
    404: {"model": ErrorBody, "description": "The index does not exist."},
    409: {"model": ErrorBody, "description": "The index lacks what the job needs."},
    413: {
        "model": ErrorBody,
        "description": "The request body is larger than the server's limit (counted while "
        "it streams when it has no Content-Length).",
    },
    422: {"model": ErrorBody, "description": "The request is invalid; `errors` says where."},
    429: {
        "model": ErrorBody,
        "description": "The service is busy: every worker thread is taken and the queue is "
        "full. Retry after the `Retry-After` seconds.",
        "headers": {
            "Retry-After": {
                "description": "Seconds to wait before retrying.",
                "schema": {"type": "integer", "minimum": 1},
            }
        },
    },
    503: {"model": ErrorBody, "description": "The cluster or the LLM is unavailable."},
}


class SearchRequest(BaseModel):
    """``POST /search``: BM25 without expansions and without a configured LLM, SIRA
    otherwise (the body's phrases win over the LLM); or the ``method`` named (``hyde`` and
    ``cot`` write their text with the server's LLM)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "index": "wikimh",
                    "query": "Which magazine was started first, Arthur's Magazine or "
                    "First for Women?",
                    "expansions": ["literary periodical", "Bauer Media Group", "1844"],
                    "k": 10,
                }
            ]
        },
    )

    index: IndexName | None = Field(default=None, description="Index or alias (default: --index).")
    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        # The schema states "not blank"; the validator enforces it with a readable reason.
        json_schema_extra={"pattern": NOT_BLANK_PATTERN},
        description="The user's query, as typed (not blank).",
    )
    expansions: list[Phrase] | None = Field(
        default=None,
        max_length=MAX_EXPANSIONS,
        description="Precomputed candidate phrases; the index's DF decides which are kept.",
    )
    method: RetrievalMethod | None = Field(
        default=None,
        description="; ".join(f"{m.name}: {m.summary}" for m in METHODS.values())
        + ". hyde and cot use the server's LLM (`serve --llm`). Default: sira with "
        "`expansions` or a server LLM, else bm25.",
    )
    k: Annotated[int, Field(ge=1, le=1000), BeforeValidator(_json_integer)] = Field(
        default=10, description="Number of hits."
    )
    # `minimum` rather than `exclusiveMinimum: 0`, which some OpenAPI clients read as 0
    # allowed; no corpus has a million documents per unit of 1e-6 to tell the two apart.
    tau: Annotated[float, Field(ge=1e-6, le=1), BeforeValidator(_json_number)] | None = Field(
        default=None, description="DF cap (default 0.1)."
    )
    weight: Annotated[float, Field(ge=0, le=MAX_WEIGHT), BeforeValidator(_json_number)] | None = (
        Field(default=None, description="Expansion weight w (default 0.5).")
    )
    rerank: Annotated[int, Field(ge=0, le=MAX_RERANK), BeforeValidator(_json_integer)] = Field(
        default=0,
        description="LLM-rerank the top N hits by relevance to the query (SIRA §3.1) with the "
        "server's LLM (`serve --llm`); the rest follow in BM25 order. 0 = off.",
    )
    on_llm_failure: OnLLMFailure = Field(
        default="error",
        description="When the server's LLM is not there: error (503 naming it) or fallback "
        "(plain BM25, `fell_back_to_bm25` true and a note in the answer).",
    )

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if validation.is_blank(value):
            raise ValueError("the query is blank")
        return value


class AskRequest(BaseModel):
    """``POST /ask``: one question answered with SEEK (or a baseline ``method``)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"index": "wikimh", "question": "Are Christopher Nolan and Sathish Kalathil "
                 "both film directors?"}
            ]
        },
    )  # fmt: skip

    index: IndexName | None = Field(
        default=None,
        description="Index or alias (default: --index); checked against the allow-list for "
        "every method, vanilla-llm included.",
    )
    question: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        json_schema_extra={"pattern": NOT_BLANK_PATTERN},
        description="Not blank.",
    )
    retriever: Literal["bm25", "sira"] = Field(
        default="bm25", description="How sub-queries search the index (sira uses the LLM)."
    )
    method: SeekMethod = Field(
        default="seek", description="SEEK or a baseline, as `sira-seek ask --method`."
    )
    variant: Literal["sequential", "parallel", "plan", "update", "no-iter-retrieval", "no-init"] = (
        "sequential"
    )
    top_k: Annotated[int, Field(ge=1, le=50), BeforeValidator(_json_integer)] | None = Field(
        default=None, description="Documents per sub-query."
    )

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if validation.is_blank(value):
            raise ValueError("the question is blank")
        return value


class ServiceError(Exception):
    """A failure with its HTTP status and a message for the caller (already redacted)."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers


class LazyCluster:
    """One ``SiraSeek`` shared by all requests, connected on first use.

    A failed connection is not remembered: the next request tries again, so the server
    recovers by itself once the cluster answers. The clients are thread-safe, so one
    connection serves the worker threads of the sync endpoints.
    """

    def __init__(self, connect: Callable[[], SiraSeek]) -> None:
        self._connect = connect
        self._lock = threading.Lock()
        self._client: SiraSeek | None = None

    def get(self) -> SiraSeek:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


class SharedExpander:
    """The configured LLM's expanders, each built once, on the first request of its method
    (``sira``'s phrases, ``hyde``'s and ``cot``'s texts): a CPU model loads once, not per
    request, and the methods share its client."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._expanders: dict[str, QueryExpander] = {}

    def get(self, method: RetrievalMethod = "sira") -> QueryExpander:
        from sira_seek.workflows.sira_setup import choose_expander

        with self._lock:
            if method not in self._expanders:
                try:
                    built = choose_expander(method, llm=self.spec)
                except InvalidInput as exc:
                    # The server's own LLM, not the caller's input: the service is unavailable.
                    raise Unavailable(exc.message) from exc
                assert built is not None
                self._expanders[method] = built
            return self._expanders[method]

    def close(self) -> None:
        with self._lock:
            for expander in self._expanders.values():
                expander.close()
            self._expanders.clear()


class SharedReranker:
    """The configured LLM as the reranking model, built on the first request that reranks."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._reranker: LLMReranker | None = None

    def get(self) -> LLMReranker:
        from sira_seek.workflows.sira_setup import choose_reranker

        with self._lock:
            if self._reranker is None:
                try:
                    self._reranker = choose_reranker(self.spec, 1)
                except InvalidInput as exc:
                    raise Unavailable(exc.message) from exc
            assert self._reranker is not None
            return self._reranker

    def close(self) -> None:
        with self._lock:
            if self._reranker is not None:
                self._reranker.close()
                self._reranker = None


class SearchJSON(JSONResponse):
    """The search answer rendered with orjson: the same JSON as ``sira-seek search --json``
    (plain JSON types already), a few times faster to write than the json module, which was
    part of the per-request overhead benchmarks/http_load.py measures."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


_STATUS = {InvalidInput: 422, NotAllowed: 403, NotFound: 404, Conflict: 409, Unavailable: 503}
"""The workflows' error kinds as HTTP statuses (the same table as the CLI's exit codes)."""


def _http_error(exc: BaseException, redact: Redactor) -> ServiceError:
    """Where a library failure goes, by the workflows' one classification: 422 for a bad
    request, 403 for what this service does not serve, 404 for a missing index, 503 for the
    cluster or LLM. Unknown failures are not mapped (500, logged)."""
    if isinstance(exc, ServiceError):
        return ServiceError(exc.status, redact(exc.detail))  # made deeper, maybe unmasked
    known = classify(exc)
    if known is None:
        raise exc
    status = next(code for kind, code in _STATUS.items() if isinstance(known, kind))
    return ServiceError(status, redact(str(known)))


def _reason(error: Any) -> str:
    """pydantic's reason for one problem, plainer where its words mislead."""
    if error.get("type") == "string_unicode":
        return "not valid Unicode text (a lone surrogate such as \\ud800)"
    return str(error.get("msg", ""))


def _validation_message(errors: list[Any]) -> str:
    """``body.query: Field required; body.k: Input should be greater than or equal to 1``."""
    parts = []
    for err in errors:
        where = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


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
    cluster = LazyCluster(connect)
    expander = SharedExpander(config.llm) if config.llm else None
    reranker = SharedReranker(config.llm) if config.llm else None
    profiles = ProfileCache(config.profile_max_age)
    metrics = ServiceMetrics()
    calls = BlockingCalls(config.max_running, config.max_queued, on_change=metrics.work)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            cluster.get()
        except UNAVAILABLE_ERRORS as exc:
            logger.warning("the cluster is not reachable yet (%s); retrying per request", exc)
        if on_ready is not None:
            on_ready()
        yield
        # After the server stopped accepting and the requests in flight ended (or were
        # cancelled after --shutdown-timeout).
        if expander is not None:
            expander.close()
        if reranker is not None:
            reranker.close()
        calls.close()
        cluster.close()
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
    app.add_middleware(MetricsMiddleware, metrics=metrics, routes=routes)
    app.add_middleware(RequestIdMiddleware)  # outermost: every answer has its id

    @app.get(
        "/metrics",
        summary="Prometheus metrics: requests and latency by route and status, engine and LLM time",
        response_class=PlainTextResponse,
        responses={401: ERROR_RESPONSES[401]},
    )
    def prometheus() -> Response:
        body, content_type = metrics.exposition()
        return Response(content=body, media_type=content_type)

    @app.exception_handler(StarletteHTTPException)
    async def _http_exception(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # FastAPI answers a body it cannot decode (not UTF-8, not JSON) with a bare 400; it
        # is a body that fails validation like any other: 422, in the one error shape.
        status = 422 if exc.status_code == 400 else exc.status_code
        detail = "body: not valid JSON" if exc.status_code == 400 else redact(str(exc.detail))
        headers = getattr(exc, "headers", None)
        return JSONResponse(
            status_code=status, content={"detail": detail, "errors": []}, headers=headers
        )

    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        return JSONResponse(
            status_code=exc.status,
            content={"detail": exc.detail, "errors": []},
            headers=exc.headers,
        )

    @app.exception_handler(RequestValidationError)
    async def _bad_body(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's default echoes the rejected input back; a clear line per problem is
        # enough, and never repeats what the caller sent.
        errors = [{"loc": list(e.get("loc", ())), "msg": _reason(e)} for e in exc.errors()]
        message = redact(_validation_message(errors))
        return JSONResponse(status_code=422, content={"detail": message, "errors": errors})

    def index_for(given: str | None) -> str:
        """The index a request may search: a valid name (422), on the allow-list (403);
        decided before any request reaches the cluster."""
        index = config.index if given is None else given
        if index is None:
            raise ServiceError(
                422, "body.index: no index given and the server has no default (--index)"
            )
        try:
            validation.index_name(index, field="body.index")
        except InvalidInput as exc:
            raise ServiceError(422, redact(str(exc))) from None
        if config.indexes and index not in config.indexes:
            raise ServiceError(403, f"body.index: this service does not serve {index!r}")
        return index

    @app.get(
        "/health",
        summary="Whether the cluster answers, and what it is",
        responses={401: ERROR_RESPONSES[401], 503: {"description": "The cluster is down."}},
    )
    def health() -> JSONResponse:
        try:
            sk = cluster.get()
            status = sk.backend.wait_for_health("red", timeout_s=5)
        except UNAVAILABLE_ERRORS as exc:
            return JSONResponse(
                status_code=503,
                content={"status": "unavailable", "detail": redact(str(exc))},
            )
        info = sk.backend.info
        body = {
            "status": "ok" if status in ("green", "yellow") else "degraded",
            "cluster_status": status,
            "engine": info.engine,
            "version": info.version,
            "cluster_name": info.cluster_name,
            "llm": redact(config.llm) if config.llm else None,
            "index": config.index,
            "indexes": list(config.indexes),
            "sira_seek": __version__,
        }
        return JSONResponse(status_code=200 if body["status"] == "ok" else 503, content=body)

    @app.post(
        "/search",
        summary="BM25 or SIRA search; the same JSON as `sira-seek search --json`",
        response_description="`hits` [{`_id`, `score`, `title`, `matched_queries`, "
        "`rerank_score`}], `query` (the request body sent), `candidates` (the grounded "
        "candidate table), `categories`, `doc_count`, `max_doc_freq`, `plain_bm25`, "
        "`expansion_source`, `generated_text` (hyde/cot), `timings_ms`, `llm_calls`, `notes`, "
        "`explain` (Dev Tools).",
        responses=ERROR_RESPONSES,
        response_model=dict[str, Any],
    )
    async def search(request: SearchRequest, http: Request) -> Response:
        return await offload("/search", http, search_here, request)

    async def offload(route: str, http: Request, fn: Callable[[T], R], body: T) -> R | Response:
        """``fn(body)`` behind the bounded queue: 429 with ``Retry-After`` when it is full;
        nothing (499, never delivered) for a client that went away meanwhile."""
        try:
            return await calls.run(fn, body, gone=functools.partial(_client_left, http))
        except QueueFull as exc:
            metrics.rejected.labels(route).inc()
            raise ServiceError(
                429, str(exc), headers={"Retry-After": str(exc.retry_after)}
            ) from None
        except ClientGone as exc:
            metrics.cancelled.labels(route, exc.stage).inc()
            logger.info("%s: %s", route, exc)
            return Response(status_code=CLIENT_CLOSED_REQUEST)

    def search_here(request: SearchRequest) -> Response:
        index = index_for(request.index)
        if request.rerank and reranker is None:
            raise ServiceError(
                422, "body.rerank: this server has no LLM to rerank with (sira-seek serve --llm)"
            )
        try:
            result = _search(cluster.get(), index, request, expander, reranker, profiles)
        except Exception as exc:
            raise _http_error(exc, redact) from None
        metrics.engine.labels("/search").observe(result.timings.engine_ms / 1000)
        llm_s = (result.timings.expansion_ms + result.timings.rerank_ms) / 1000
        metrics.llm.labels("/search").observe(llm_s)
        # Rendered here, not through FastAPI's jsonable_encoder: the document is plain JSON
        # types already (the CLI prints the same dict with json.dumps), and walking it again
        # cost part of the per-request overhead benchmarks/http_load.py measures.
        return SearchJSON(result.to_search_json())

    @app.post(
        "/ask",
        summary="Answer a question with SEEK: the completed sketch, sub-queries, answer",
        response_description="The `SeekResult`, as `sira-seek ask --json` without `explain`.",
        responses=ERROR_RESPONSES,
        response_model=dict[str, Any],
    )
    async def ask(request: AskRequest, http: Request) -> Any:
        return await offload("/ask", http, ask_here, request)

    def ask_here(request: AskRequest) -> dict[str, Any]:
        # vanilla-llm reads no index, but one named is still checked (an index outside the
        # allow-list is 403 for every method); without one it runs without any.
        vanilla = request.method == "vanilla-llm" and request.index is None
        index = None if vanilla else index_for(request.index)
        try:
            result = cluster.get().ask(
                request.question,
                index=index,
                llm=config.llm,
                retriever=request.retriever,
                method=request.method,
                variant=request.variant,
                top_k=request.top_k,
            )
        except Exception as exc:
            raise _http_error(exc, redact) from None
        if result.error:
            # The pipeline records a failed question instead of raising (batches go on);
            # for one question over HTTP that is the LLM or the cluster failing.
            raise ServiceError(503, redact(f"the question failed: {result.error}"))
        metrics.engine.labels("/ask").observe(result.timings.retrieval_s)
        metrics.llm.labels("/ask").observe(result.timings.llm_s)
        return result.model_dump(mode="json")

    _exact_index_schema(app, config)
    return app


def _exact_index_schema(app: FastAPI, config: ServiceConfig) -> None:
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
        for model in ("SearchRequest", "AskRequest"):
            props = schema["components"]["schemas"][model]["properties"]
            props["index"] = {
                "anyOf": [names, {"type": "null"}],
                "description": props["index"].get("description", ""),
                "title": "Index",
            }
        if not config.llm:
            # Without an LLM nothing can rerank: the document says 0 is the only value served.
            rerank = schema["components"]["schemas"]["SearchRequest"]["properties"]["rerank"]
            rerank["maximum"] = 0
            rerank["description"] += " This server has no LLM: 0 only."
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _search(
    sk: SiraSeek,
    index: str,
    request: SearchRequest,
    expander: SharedExpander | None,
    reranker: SharedReranker | None,
    profiles: ProfileCache,
) -> SiraResult:
    """The search workflow: the body's phrases when it brings some, else the server's shared
    LLM expander when it has one, else plain BM25; a ``rerank`` reads with the server's LLM
    (the route refuses one on a server without an LLM). A ``method`` named in the body is
    that method, its LLM the server's (``hyde``/``cot`` on a server without one: 422)."""
    from sira_seek.workflows import search as flow

    method = request.method
    additions = METHODS[method].additions if method is not None else "phrases"
    if additions == "generated" and expander is None:
        raise InvalidInput(
            f"method {method!r} needs an LLM to write its text: this server has none "
            "(serve --llm SPEC)",
            field="method",
        )
    shared = None
    if expander is not None and additions != "none" and request.expansions is None:
        shared = expander.get(method or "sira")
    reading = reranker.get() if reranker is not None and request.rerank else None
    spec = next((x.spec for x in (expander, reranker) if x is not None), None)
    if method is None:
        method = "sira" if request.expansions is not None or shared is not None else "bm25"
    wanted = flow.SearchRequest.build(
        query=request.query,
        index=index,
        method=method,
        phrases=request.expansions,
        k=request.k,
        tau=request.tau,
        weight=request.weight,
        rerank=request.rerank,
        # It names the LLM in an error (masked); it only reranks when phrases are given.
        llm=spec if shared is not None or reading is not None else None,
        on_llm_failure=request.on_llm_failure,
    )
    # Not closed after the request: the expander and the reranker (and their model) are the
    # server's. An LLM that is not there is the workflow's ``Unavailable`` (503) unless the
    # body asked for the fallback.
    return flow.search(sk.backend, wanted, expander=shared, reranker=reading, profiles=profiles)
