"""A Haystack retriever component over sira-seek: BM25 or SIRA on your Elasticsearch/OpenSearch
index.

Install with ``pip install 'sira-seek[haystack]'``. ``SiraSeekHaystackRetriever`` is a Haystack
component (``run`` and ``run_async``, so it works in ``Pipeline`` and ``AsyncPipeline``) with
two outputs: ``documents``, one ``Document`` per hit (``id`` is the corpus ``_id``,
``content`` the passage, ``score`` the BM25/SIRA score, and ``meta`` holds ``id``, ``score``,
``rank``, ``title``, ``index``, ``method``, ``matched_queries``), and ``result``, what
``sira-seek search --json`` prints (the request, the grounded candidate table, timings). The
ranking is exactly ``sira-seek search``'s.

It serialises with its pipeline (``to_dict``/``from_dict``) when built from ``url`` (or from
nothing: ``SIRA_SEEK_URL``, else the local node); credentials are read from ``SIRA_SEEK_*`` at
``warm_up``, so a saved pipeline holds no secret. The connection opens in ``warm_up``, as
Haystack expects of components that reach a service.
"""

# No ``from __future__ import annotations``: Haystack reads ``run``'s annotations at runtime to
# build the component's input and output sockets.

import asyncio
import logging
from typing import Any

from sira_seek.client import SiraSeek
from sira_seek.sira.settings import Task
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.request_base import OnLLMFailure
from sira_seek.workflows.sira_setup import Expansions, RetrievalMethod

from ._common import (
    RetrievalOptions,
    RetrievedPassage,
    missing_framework,
    open_client,
    search_passages,
)

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as exc:  # the extra is optional: say which one to install
    raise missing_framework("haystack", "haystack-ai", "haystack") from exc

__all__ = ["SiraSeekHaystackRetriever"]

logger = logging.getLogger(__name__)


@component
class SiraSeekHaystackRetriever:
    """Haystack component: ``SiraSeek.search`` (BM25 or SIRA), one ``Document`` per hit.

    Give ``client`` (a ``sira_seek.connect()`` object, which stays yours to close; such a
    component cannot be serialised) or ``url``. ``top_k`` and ``query_id`` (to look
    expansions up by query id) can be given per run.
    """

    def __init__(
        self,
        *,
        index: str,
        client: SiraSeek | None = None,
        url: str | None = None,
        k: int = 10,
        method: RetrievalMethod = "bm25",
        expansions: Expansions | None = None,
        llm: str | None = None,
        tau: float | None = None,
        weight: float | None = None,
        task: Task | None = None,
        on_llm_failure: OnLLMFailure = "error",
    ) -> None:
        if client is not None and url is not None:
            raise InvalidInput("give either client= or url=, not both", field="url")
        self.options = RetrievalOptions.build(
            index=index,
            k=k,
            method=method,
            expansions=expansions,
            llm=llm,
            tau=tau,
            weight=weight,
            task=task,
            on_llm_failure=on_llm_failure,
        )
        self.url = url
        self._given_client = client
        self._client: SiraSeek | None = client
        self._owns_client = False

    # -- lifecycle -----------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Connect (once); a ``Pipeline`` calls this before its first run."""
        if self._client is None:
            self._client, self._owns_client = open_client(None, self.url)

    def close(self) -> None:
        """Close the connection if this component opened it (not a given client)."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None
            self._owns_client = False

    # -- serialisation -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        if self._given_client is not None:
            raise TypeError(
                "a SiraSeekHaystackRetriever built around a SiraSeek object cannot be serialised: "
                "build it with url= (credentials come from SIRA_SEEK_* when it warms up)"
            )
        return default_to_dict(self, url=self.url, **self.options.to_init_kwargs())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SiraSeekHaystackRetriever":
        return default_from_dict(cls, data)

    # -- retrieval -----------------------------------------------------------------------------
    @component.output_types(documents=list[Document], result=dict[str, Any])
    def run(
        self, query: str, top_k: int | None = None, query_id: str | None = None
    ) -> dict[str, Any]:
        """Search for ``query``; ``top_k`` overrides ``k`` for this run."""
        self.warm_up()
        assert self._client is not None
        options = self._options_for(top_k)
        result, passages = search_passages(self._client, options, query, query_id=query_id)
        return {"documents": [_document(p) for p in passages], "result": result.to_json_dict()}

    @component.output_types(documents=list[Document], result=dict[str, Any])
    async def run_async(
        self, query: str, top_k: int | None = None, query_id: str | None = None
    ) -> dict[str, Any]:
        """``run`` in a worker thread: the cluster client is synchronous and thread-safe."""
        return await asyncio.to_thread(self.run, query, top_k, query_id)

    def _options_for(self, top_k: int | None) -> RetrievalOptions:
        if top_k is None:
            return self.options
        return RetrievalOptions.model_validate({**self.options.model_dump(), "k": top_k})


def _document(passage: RetrievedPassage) -> Document:
    return Document(
        id=passage.id, content=passage.text, meta=passage.metadata(), score=passage.score
    )


def __getattr__(name: str) -> object:
    """``SiraSeekRetriever``, the name of this class before each framework's retriever got a
    name of its own (no class name twice in sira_seek): still importable, with a warning."""
    if name == "SiraSeekRetriever":
        import warnings

        warnings.warn(
            "SiraSeekRetriever is now SiraSeekHaystackRetriever", DeprecationWarning, stacklevel=2
        )
        return SiraSeekHaystackRetriever
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
