"""What one ``sira-seek serve`` app shares between its routes: the lazily connected cluster,
the server LLM's expanders and reranker and the query embedder (built once), the profile
cache, the metrics and the bounded queue of blocking calls; and the two checks every route
makes (the index a request may use; the queue in front of the worker threads)."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from fastapi import Request
from fastapi.responses import Response

from sira_seek.redaction import Redactor
from sira_seek.sira.index_profile import ProfileCache
from sira_seek.workflows import validation
from sira_seek.workflows.errors import InvalidInput, Unavailable
from sira_seek.workflows.methods import RetrievalMethod

from .errors import ServiceError
from .metrics import ServiceMetrics
from .settings import ServiceConfig
from .threads import BlockingCalls, ClientGone, QueueFull

if TYPE_CHECKING:
    from sira_seek.client import SiraSeek
    from sira_seek.embed import Embedder
    from sira_seek.sira.expansions import QueryExpander
    from sira_seek.sira.rerank import LLMReranker

logger = logging.getLogger(__name__)

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


class SharedEmbedder:
    """The server's query embedder for the vector methods (``dense``, ``hybrid``,
    ``sira-hybrid`` on /search; ``dense``/``hybrid`` retrievers on /ask), made on the first
    request that needs it: its model loads once per server process, not per request. The
    embedders are thread-safe (the CPU one embeds under its own lock)."""

    def __init__(self, spec: str | None) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None

    def get(self) -> Embedder:
        from sira_seek.embed import make_embedder

        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.spec)
            return self._embedder

    def close(self) -> None:
        with self._lock:
            if self._embedder is not None:
                self._embedder.close()
                self._embedder = None


class ServiceState:
    """One app's shared objects, built by ``create_app`` and handed to each route module."""

    def __init__(
        self, connect: Callable[[], SiraSeek], config: ServiceConfig, redact: Redactor
    ) -> None:
        self.config = config
        self.redact = redact
        self.cluster = LazyCluster(connect)
        self.expander = SharedExpander(config.llm) if config.llm else None
        self.reranker = SharedReranker(config.llm) if config.llm else None
        self.embedder = SharedEmbedder(config.query_embedder())
        self.profiles = ProfileCache(config.profile_max_age)
        self.metrics = ServiceMetrics()
        self.calls = BlockingCalls(
            config.max_running, config.max_queued, on_change=self.metrics.work
        )

    def index_for(self, given: str | None) -> str:
        """The index a request may search: a valid name (422), on the allow-list (403);
        decided before any request reaches the cluster."""
        index = self.config.index if given is None else given
        if index is None:
            raise ServiceError(
                422, "body.index: no index given and the server has no default (--index)"
            )
        try:
            validation.index_name(index, field="body.index")
        except InvalidInput as exc:
            raise ServiceError(422, self.redact(str(exc))) from None
        if self.config.indexes and index not in self.config.indexes:
            raise ServiceError(403, f"body.index: this service does not serve {index!r}")
        return index

    async def offload(
        self, route: str, http: Request, fn: Callable[[T], R], body: T
    ) -> R | Response:
        """``fn(body)`` behind the bounded queue: 429 with ``Retry-After`` when it is full;
        nothing (499, never delivered) for a client that went away meanwhile."""
        try:
            return await self.calls.run(fn, body, gone=functools.partial(_client_left, http))
        except QueueFull as exc:
            self.metrics.rejected.labels(route).inc()
            raise ServiceError(
                429, str(exc), headers={"Retry-After": str(exc.retry_after)}
            ) from None
        except ClientGone as exc:
            self.metrics.cancelled.labels(route, exc.stage).inc()
            logger.info("%s: %s", route, exc)
            return Response(status_code=CLIENT_CLOSED_REQUEST)

    def close(self) -> None:
        """After the server stopped accepting and the requests in flight ended (or were
        cancelled after --shutdown-timeout)."""
        if self.expander is not None:
            self.expander.close()
        if self.reranker is not None:
            self.reranker.close()
        self.embedder.close()
        self.calls.close()
        self.cluster.close()
