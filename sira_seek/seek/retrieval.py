"""What SEEK needs from retrieval: top-k documents with their text, for any retriever.

The pipeline sees only the small `Retriever` protocol, so plain BM25, SIRA, or a user's own
search can feed it; the BM25 implementation talks to a `SearchBackend` and never to an engine.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from sira_seek.backend import EngineError, SearchBackend, SearchHit
from sira_seek.bm25 import bm25_query
from sira_seek.documents import fetch_documents, field_text
from sira_seek.fields import TEXT, TITLE
from sira_seek.llm.errors import LLMCallError

if TYPE_CHECKING:
    from sira_seek.sira.retriever import SiraRetriever


class RetrievedDoc(BaseModel):
    """One retrieved document as prompts show it."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str = ""
    text: str = ""
    score: float = 0.0

    def snippet(self, max_chars: int) -> str:
        """``title: text`` on one line, cut at a word boundary: prompts stay within context."""
        body = " ".join(f"{self.title}: {self.text}".split()) if self.title else self.text
        body = " ".join(body.split())
        if len(body) <= max_chars:
            return body
        cut = body[:max_chars].rsplit(" ", 1)[0]
        return (cut or body[:max_chars]) + " ..."


@runtime_checkable
class Retriever(Protocol):
    """Top-k documents for a query. Blocking: the pipeline runs it in a worker thread."""

    name: str

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]: ...

    def retrieve_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedDoc]]: ...


logger = logging.getLogger(__name__)

RETRIEVAL_FAILURES: tuple[type[Exception], ...] = (EngineError, LLMCallError, asyncio.TimeoutError)
"""How a search fails when the cluster or an LLM fails, which a question survives: the step
goes on without documents, its ``error`` says why, and a warning is logged.

The retrievers here reach the cluster only through a ``SearchBackend``, whose failures are
``EngineError``s (a SIRA expander records its own LLM failures instead of raising); a retriever
that asks an LLM itself fails with ``LLMCallError``; the pipeline's ``retrieval_timeout_s``
fires as ``asyncio.TimeoutError``. Anything else a retriever raises is a bug: it fails the
question, and a batch records it with its traceback (``SeekResult.error_traceback``)."""


def failure_text(exc: BaseException) -> str:
    """``Type: message`` (just the type when the message is empty), as steps and results
    record a failure."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def note_failed_search(exc: BaseException, queries: Sequence[str], question_id: str) -> str:
    """Log an expected search failure (one of ``RETRIEVAL_FAILURES``) as a warning; the text
    its steps record."""
    error = failure_text(exc)
    shown = repr(queries[0][:80]) if len(queries) == 1 else f"{len(queries)} sub-queries"
    logger.warning(
        "question %s: search for %s failed, going on without its documents: %s",
        question_id,
        shown,
        error,
    )
    return error


def _doc(hit: SearchHit) -> RetrievedDoc:
    source: dict[str, Any] = hit.source or {}
    return RetrievedDoc(
        id=hit.id,
        title=str(source.get(TITLE) or ""),
        text=str(source.get(TEXT) or ""),
        score=hit.score,
    )


class BM25Retriever:
    """Plain BM25 over title + text; several queries go to the cluster as one ``_msearch``."""

    name = "bm25"

    def __init__(self, backend: SearchBackend, index: str) -> None:
        self.backend = backend
        self.index = index

    def _body(self, query: str, k: int) -> dict[str, Any]:
        return {**bm25_query(query), "size": k, "_source": [TITLE, TEXT]}

    def request_for(self, query: str, k: int) -> tuple[str, dict[str, Any]]:
        """The exact search sent for ``query`` (for --explain)."""
        return self.index, self._body(query, k)

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]:
        if not query.strip():
            return []
        found = self.backend.search(self.index, self._body(query, k))
        return [_doc(hit) for hit in found.hits]

    def retrieve_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedDoc]]:
        wanted = [i for i, q in enumerate(queries) if q.strip()]
        out: list[list[RetrievedDoc]] = [[] for _ in queries]
        if not wanted:
            return out
        results = self.backend.msearch(self.index, [self._body(queries[i], k) for i in wanted])
        for i, result in zip(wanted, results, strict=True):
            out[i] = [_doc(hit) for hit in result.hits]
        return out


class SiraDocumentRetriever:
    """SIRA ranking, then one ``ids`` query for the texts (SIRA results carry ids and titles).
    Also dense and hybrid (the retriever's ``method``), which rank through it the same way."""

    def __init__(self, sira: SiraRetriever, name: str = "sira") -> None:
        self.sira = sira
        self.name = name

    def _texts(self, ids: list[str]) -> dict[str, RetrievedDoc]:
        found = fetch_documents(self.sira.backend, self.sira.index, ids)
        return {
            i: RetrievedDoc(id=i, title=field_text(s, TITLE), text=field_text(s, TEXT))
            for i, s in found.items()
        }

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]:
        if not query.strip():
            return []
        hits = self.sira.search(query).hits[:k]
        texts = self._texts([h.id for h in hits])
        return [
            texts.get(h.id, RetrievedDoc(id=h.id, title=h.title or "")).model_copy(
                update={"score": h.score}
            )
            for h in hits
        ]

    def retrieve_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedDoc]]:
        return [self.retrieve(q, k) for q in queries]
