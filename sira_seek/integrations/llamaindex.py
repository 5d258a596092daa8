"""A LlamaIndex retriever over sira-seek: BM25 or SIRA on your Elasticsearch/OpenSearch index.

Install with ``pip install 'sira-seek[llamaindex]'``. ``SiraSeekLlamaIndexRetriever`` is a
llama-index-core ``BaseRetriever`` (``retrieve``/``aretrieve``, usable in a
``RetrieverQueryEngine``). Each hit is a ``NodeWithScore`` around a ``TextNode`` whose
``id_`` is the corpus ``_id`` and whose ``text`` is the passage; ``metadata`` holds ``id``,
``score``, ``rank``, ``title``, ``index``, ``method`` and ``matched_queries``. Only the title
is shown to the LLM and to embedders: the rest is bookkeeping, not context. The ranking is
exactly ``sira-seek search``'s.

A ``QueryBundle`` carries no query id, so precomputed expansions are looked up by the query's
exact text (key a mapping or a JSONL's ``text`` field by it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from sira_seek.client import SiraSeek
from sira_seek.sira.settings import Task
from sira_seek.workflows.request_base import OnLLMFailure
from sira_seek.workflows.sira_setup import Expansions, RetrievalMethod

from ._common import (
    METADATA_KEYS,
    RetrievalOptions,
    RetrievedPassage,
    missing_framework,
    open_client,
    search_passages,
)

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # the extra is optional: say which one to install
    raise missing_framework("llamaindex", "llama-index-core", "llamaindex") from exc

__all__ = ["SiraSeekLlamaIndexRetriever"]

#: Metadata kept out of the text LlamaIndex hands to an LLM or an embedding model.
HIDDEN_METADATA: Sequence[str] = tuple(key for key in METADATA_KEYS if key != "title")


class SiraSeekLlamaIndexRetriever(BaseRetriever):
    """LlamaIndex retriever: ``SiraSeek.search`` (BM25 or SIRA), one ``NodeWithScore`` per hit.

    Give ``client`` (a ``sira_seek.connect()`` object, which stays yours to close) or ``url``
    (else ``SIRA_SEEK_URL``, else the local node; secrets always come from ``SIRA_SEEK_*``).
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
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
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
        self._client, self._owns_client = open_client(client, url)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def close(self) -> None:
        """Close the connection if this retriever opened it (``url=``), not a given client."""
        if self._owns_client:
            self._client.close()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        _, passages = search_passages(self._client, self.options, query_bundle.query_str)
        return [_node(p) for p in passages]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # LlamaIndex's default runs the blocking search on the event loop; a thread does not.
        _, passages = await asyncio.to_thread(
            search_passages, self._client, self.options, query_bundle.query_str
        )
        return [_node(p) for p in passages]


def _node(passage: RetrievedPassage) -> NodeWithScore:
    node = TextNode(
        id_=passage.id,
        text=passage.text,
        metadata=passage.metadata(),
        excluded_llm_metadata_keys=list(HIDDEN_METADATA),
        excluded_embed_metadata_keys=list(HIDDEN_METADATA),
    )
    return NodeWithScore(node=node, score=passage.score)


def __getattr__(name: str) -> object:
    """``SiraSeekRetriever``, the name of this class before each framework's retriever got a
    name of its own (no class name twice in sira_seek): still importable, with a warning."""
    if name == "SiraSeekRetriever":
        import warnings

        warnings.warn(
            "SiraSeekRetriever is now SiraSeekLlamaIndexRetriever", DeprecationWarning, stacklevel=2
        )
        return SiraSeekLlamaIndexRetriever
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
