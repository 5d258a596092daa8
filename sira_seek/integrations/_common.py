"""What the three framework retrievers share: the options, the client, and ranked passages.

Each framework adapter (LangChain, LlamaIndex, Haystack) only converts ``RetrievedPassage``
objects into its own document type. The ranking itself is ``SiraSeek.search``, the call behind
``sira-seek search``: there is no second query builder here, so a retriever returns the hits, in
the order and with the scores, that the command line prints for the same query and expansions.
The facade returns titles only (the CLI never needs the passages), so the texts come from one
``ids`` look-up per query, which cannot change the ranking.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sira_seek.client import SiraSeek
from sira_seek.documents import fetch_documents, field_text, missing_ids
from sira_seek.fields import TEXT
from sira_seek.sira.results import SiraResult
from sira_seek.sira.settings import Task
from sira_seek.workflows.errors import InvalidInput
from sira_seek.workflows.fields import K, Tau, Weight
from sira_seek.workflows.request_base import ON_LLM_FAILURE_HELP, OnLLMFailure
from sira_seek.workflows.search import fell_back_to_bm25
from sira_seek.workflows.sira_setup import Expansions, RetrievalMethod

logger = logging.getLogger(__name__)

#: The metadata every framework document carries, whatever the framework.
METADATA_KEYS = (
    "id",
    "score",
    "rank",
    "title",
    "index",
    "method",
    "matched_queries",
    "fell_back_to_bm25",
)


def missing_framework(module: str, package: str, extra: str) -> ImportError:
    """The error raised when an adapter's framework is not installed: it names the extra."""
    return ImportError(
        f"sira_seek.integrations.{module} needs the {package} package, which is not installed: "
        f"pip install 'sira-seek[{extra}]'"
    )


class RetrievalOptions(BaseModel):
    """How a retriever searches: the arguments of ``SiraSeek.search`` except the query.

    ``method="sira"`` takes exactly one of ``expansions`` (a JSONL file keyed by ``_id`` or
    ``text``, or a mapping from a query id or exact query text to its phrases) and ``llm``
    (a spec such as ``llamacpp:gemma3-270m``); ``tau`` and ``weight`` default to SIRA's
    settings (0.1 and 0.5). The facade checks these rules on the first query; ``k``,
    ``tau`` and ``weight`` are the search workflow's own fields (``workflows/fields.py``),
    so a retriever refuses at construction what every other front end refuses.
    ``on_llm_failure`` is the one policy for an LLM that is not there (``error``, the
    default: the retrieval raises naming it; ``fallback``: plain BM25, and every passage's
    ``fell_back_to_bm25`` says so).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: str = Field(min_length=1)
    k: K = 10
    method: RetrievalMethod = "bm25"
    expansions: Path | dict[str, list[str]] | None = None
    llm: str | None = None
    tau: Tau | None = None
    weight: Weight | None = None
    task: Task | None = None
    on_llm_failure: OnLLMFailure = Field(default="error", description=ON_LLM_FAILURE_HELP)

    @classmethod
    def build(
        cls,
        *,
        index: str,
        k: int,
        method: RetrievalMethod,
        expansions: Expansions | None,
        llm: str | None,
        tau: float | None,
        weight: float | None,
        task: Task | None,
        on_llm_failure: OnLLMFailure = "error",
    ) -> RetrievalOptions:
        """Options from the adapters' keyword arguments (a mapping of any sequences)."""
        table: Path | dict[str, list[str]] | None
        if expansions is None or isinstance(expansions, Path):
            table = expansions
        elif isinstance(expansions, str):
            table = Path(expansions)
        else:
            table = {key: list(phrases) for key, phrases in expansions.items()}
        return cls(
            index=index,
            k=k,
            method=method,
            expansions=table,
            llm=llm,
            tau=tau,
            weight=weight,
            task=task,
            on_llm_failure=on_llm_failure,
        )

    def to_init_kwargs(self) -> dict[str, Any]:
        """JSON-friendly keyword arguments that rebuild these options (for serialisation)."""
        data = self.model_dump()
        if isinstance(self.expansions, Path):
            data["expansions"] = str(self.expansions)
        return data


@dataclass(frozen=True)
class RetrievedPassage:
    """One ranked hit with its passage text, before it becomes a framework document."""

    id: str
    score: float
    rank: int
    title: str | None
    text: str
    index: str
    method: RetrievalMethod
    matched_queries: list[str] | dict[str, float] | None
    fell_back_to_bm25: bool = False

    def metadata(self) -> dict[str, Any]:
        """The ``METADATA_KEYS`` of this passage (JSON-serialisable, as Haystack requires)."""
        return {
            "id": self.id,
            "score": self.score,
            "rank": self.rank,
            "title": self.title,
            "index": self.index,
            "method": self.method,
            "matched_queries": self.matched_queries,
            "fell_back_to_bm25": self.fell_back_to_bm25,
        }


def open_client(client: SiraSeek | None, url: str | None) -> tuple[SiraSeek, bool]:
    """The client to search with, and whether the adapter opened it (and so must close it).

    Without a client, ``sira_seek.connect(url)`` reads everything else (API key, password,
    CA certificates) from ``SIRA_SEEK_*``, so no secret ever sits in a retriever's fields or
    in a serialised pipeline.
    """
    if client is not None:
        if url is not None:
            raise InvalidInput("give either client= or url=, not both", field="url")
        return client, False
    from sira_seek.client import connect

    return connect(url), True


def search_passages(
    client: SiraSeek, options: RetrievalOptions, query: str, *, query_id: str | None = None
) -> tuple[SiraResult, list[RetrievedPassage]]:
    """``SiraSeek.search`` with ``options``, plus each hit's text from one ``ids`` look-up."""
    result = client.search(
        query,
        index=options.index,
        method=options.method,
        expansions=options.expansions,
        llm=options.llm,
        k=options.k,
        tau=options.tau,
        weight=options.weight,
        task=options.task,
        query_id=query_id,
        on_llm_failure=options.on_llm_failure,
    )
    texts = _passage_texts(client, options.index, [hit.id for hit in result.hits])
    fell_back = fell_back_to_bm25(options.method, result)
    passages = [
        RetrievedPassage(
            id=hit.id,
            score=hit.score,
            rank=rank,
            title=hit.title,
            text=texts.get(hit.id, ""),
            index=options.index,
            method=options.method,
            matched_queries=hit.matched_queries,
            fell_back_to_bm25=fell_back,
        )
        for rank, hit in enumerate(result.hits, start=1)
    ]
    return result, passages


def _passage_texts(client: SiraSeek, index: str, ids: Sequence[str]) -> Mapping[str, str]:
    """Texts of ``ids`` in one request; an id gone since the search (deleted) maps to nothing."""
    found = fetch_documents(client.backend, index, ids, (TEXT,))
    missing = missing_ids(ids, found)
    if missing:
        logger.warning(
            "%d hit(s) of %s vanished before their text was read: %s", len(missing), index, missing
        )
    return {doc_id: field_text(source, TEXT) for doc_id, source in found.items()}
