"""A LangChain retriever over sira-seek: BM25 or SIRA on your Elasticsearch/OpenSearch index.

Install with ``pip install 'sira-seek[langchain]'``. ``SiraSeekLangChainRetriever`` is a
langchain-core ``BaseRetriever``, so it works wherever LangChain takes a retriever (``invoke``,
``ainvoke``, ``batch``, chains). Each ``Document`` holds the passage text as ``page_content``,
the corpus ``_id`` as ``id``, and ``id``, ``score``, ``rank``, ``title``, ``index``, ``method``
and ``matched_queries`` in ``metadata``; the ranking is exactly ``sira-seek search``'s.

Expansions keyed by query id are reached with ``retriever.invoke(text, query_id="q1")``;
``retriever.invoke(text, k=3)`` overrides ``k`` for one call. Fields set after construction
take effect on the next call (``client`` and ``url`` cannot change: build a new retriever).
A SIRA search whose phrase source has nothing for the query runs as plain BM25, logs a
warning and sets ``metadata["fell_back_to_bm25"]``; an LLM that is not there raises naming it,
unless ``on_llm_failure="fallback"`` lets such queries run as plain BM25 the same way.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from sira_seek.client import SiraSeek
from sira_seek.sira.settings import Task
from sira_seek.workflows.request_base import OnLLMFailure
from sira_seek.workflows.sira_setup import RetrievalMethod

from ._common import (
    RetrievalOptions,
    RetrievedPassage,
    missing_framework,
    open_client,
    search_passages,
)

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # the extra is optional: say which one to install
    raise missing_framework("langchain", "langchain-core", "langchain") from exc

__all__ = ["SiraSeekLangChainRetriever"]


class SiraSeekLangChainRetriever(BaseRetriever):
    """LangChain retriever: ``SiraSeek.search`` (BM25 or SIRA), one ``Document`` per hit.

    Give ``client`` (a ``sira_seek.connect()`` object, which stays yours to close) or ``url``
    (else ``SIRA_SEEK_URL``, else the local node; secrets always come from ``SIRA_SEEK_*``).
    A retriever that opened its own connection closes it in ``close()``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: SiraSeek | None = Field(default=None, exclude=True)
    url: str | None = None
    index: str
    k: int = 10
    method: RetrievalMethod = "bm25"
    expansions: Path | dict[str, list[str]] | None = None
    llm: str | None = None
    tau: float | None = None
    weight: float | None = None
    task: Task | None = None
    on_llm_failure: OnLLMFailure = "error"

    _client: SiraSeek = PrivateAttr()
    _owns_client: bool = PrivateAttr(default=False)

    @model_validator(mode="after")
    def _connect(self) -> SiraSeekLangChainRetriever:
        # Validate the options before connecting, so a typo fails without a network call.
        self._options_for(None)
        self._client, self._owns_client = open_client(self.client, self.url)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("client", "url") and "_client" in (self.__pydantic_private__ or {}):
            raise AttributeError(
                f"{name} cannot change after construction: build a new SiraSeekLangChainRetriever"
            )
        super().__setattr__(name, value)

    def _options_for(self, k: int | None) -> RetrievalOptions:
        """The options as the fields are now (so a field set after construction counts),
        with ``k`` for one call when given."""
        return RetrievalOptions.build(
            index=self.index,
            k=self.k if k is None else k,
            method=self.method,
            expansions=self.expansions,
            llm=self.llm,
            tau=self.tau,
            weight=self.weight,
            task=self.task,
            on_llm_failure=self.on_llm_failure,
        )

    def close(self) -> None:
        """Close the connection if this retriever opened it (``url=``), not a given client."""
        if self._owns_client:
            self._client.close()

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        query_id: str | None = None,
        k: int | None = None,
        **_kwargs: Any,
    ) -> list[Document]:
        options = self._options_for(k)
        _, passages = search_passages(self._client, options, query, query_id=query_id)
        return [_document(p) for p in passages]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        query_id: str | None = None,
        k: int | None = None,
        **_kwargs: Any,
    ) -> list[Document]:
        options = self._options_for(k)
        # The cluster client is synchronous and thread-safe: a worker thread keeps the event
        # loop free while the search (and any LLM expansion) runs.
        _, passages = await asyncio.to_thread(
            search_passages, self._client, options, query, query_id=query_id
        )
        return [_document(p) for p in passages]


def _document(passage: RetrievedPassage) -> Document:
    return Document(id=passage.id, page_content=passage.text, metadata=passage.metadata())


def __getattr__(name: str) -> object:
    """``SiraSeekRetriever``, the name of this class before each framework's retriever got a
    name of its own (no class name twice in sira_seek): still importable, with a warning."""
    if name == "SiraSeekRetriever":
        import warnings

        warnings.warn(
            "SiraSeekRetriever is now SiraSeekLangChainRetriever", DeprecationWarning, stacklevel=2
        )
        return SiraSeekLangChainRetriever
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
