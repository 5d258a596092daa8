"""SIRA's unit doubles: a backend whose document frequencies come from a table, and a
scripted LLM client.

``DFTableBackend`` is the shared ``InMemoryBackend`` (a plain ``SearchBackend``, no REST) with
its corpus replaced by a DF table, so DF decisions can be tested exactly without writing a
thousand documents: every field gives a term the table's DF, |C| is ``doc_count``. Analysis is
the shared double's (lowercase words minus stopwords, bigram shingles for ``*.shingles``).
Deleted copies are a second table, ``deleted``: term -> copies Lucene still counts, so the
per-shard bounds are ``df + deleted`` and ``index_doc_counts`` reports their sum.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from in_memory_backend import InMemoryBackend, field_terms

from sira_seek.backend import (
    Capabilities,
    FieldStatistics,
    IndexDocCounts,
    LiveDocFrequencies,
    SearchHit,
    TermCount,
    TermStatistic,
    TextTermStatistics,
)
from sira_seek.llm.client import generate_many_bounded
from sira_seek.llm.errors import ServerUnreachableError
from sira_seek.llm.request import LLMRequest
from sira_seek.llm.response import LLMError, LLMResponse, TokenUsage


def one_request(call: tuple[str, Any]) -> tuple[list[str], list[str]]:
    """The fields and texts of SIRA's one DF request (a recorded ``term_vectors`` call): the
    packed documents' fields, in order, and their texts (between the sentinels)."""
    name, docs = call
    assert name == "term_vectors", call
    packed = [d for d in docs if d.positions]
    (values,) = {tuple(v) for d in packed for v in d.values.values()}
    return [f for d in packed for f in d.fields], list(values[1:-1])


CONTENTS_ONLY = {"contents": {"type": "text", "fields": {"shingles": {"type": "text"}}}}


class DFTableBackend(InMemoryBackend):
    """A ``SearchBackend`` whose statistics are a table; searches return scripted hits.

    ``calls`` records each analysis or DF round trip (method name, arguments); ``populated``
    names the fields an ``exists`` count finds in some document.
    """

    name = "df-table"

    def __init__(
        self,
        df: Mapping[str, int],
        *,
        doc_count: int = 1000,
        properties: dict[str, Any] | None = None,
        populated: set[str] | None = None,
        deleted: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(properties=properties if properties is not None else CONTENTS_ONLY)
        self.df = dict(df)
        self.doc_count = doc_count
        self.populated = populated or set()
        self.deleted = dict(deleted or {})
        self.named_scores = False
        self.hits = [SearchHit(id="d1", score=2.0), SearchHit(id="d2", score=1.0)]

    def capabilities(self) -> Capabilities:
        return Capabilities(named_queries_score=self.named_scores)

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int:
        field = (query or {}).get("exists", {}).get("field")
        return 5 if field in self.populated else 0

    def index_doc_counts(self, index: str) -> IndexDocCounts | None:
        self.calls.append(("index_doc_counts", index))
        return IndexDocCounts(
            index=index,
            uuid=f"{index}-uuid",
            doc_count=self.doc_count,
            deleted_docs=sum(self.deleted.values()),
            round_trips=2,
        )

    def _shard_doc_freq(self, idx: Any, name: str, term: str, shard: int) -> int:
        """The table's DF plus the deleted copies Lucene still counts (one shard holds all)."""
        return self.df.get(term, 0) + self.deleted.get(term, 0)

    def live_doc_freqs(self, index: str, terms: Sequence[tuple[str, str]]) -> LiveDocFrequencies:
        self.calls.append(("live_doc_freqs", list(terms)))
        ordered = list(dict.fromkeys(terms))
        return LiveDocFrequencies(
            doc_count=self.doc_count,
            counts=[TermCount(field=f, term=t, doc_freq=self.df.get(t, 0)) for f, t in ordered],
        )

    def term_statistics(
        self, index: str, field: str, texts: list[str], *, source_field: str | None = None
    ) -> list[TextTermStatistics]:
        self.calls.append(("term_statistics", (field, list(texts))))
        return [
            TextTermStatistics(
                text=text,
                field=field,
                terms=[
                    TermStatistic(term=t, doc_freq=self.df.get(t, 0))
                    for t in field_terms(field, text)
                ],
                field_statistics=FieldStatistics(doc_count=self.doc_count),
            )
            for text in texts
        ]


DF = {
    "nolan": 7,
    "christopher": 57,
    "film": 600,
    "director": 300,
    "malayalam": 8,
    "malayalam cinema": 8,
    "cinema": 40,
    "edward": 149,
    "christopher edward": 1,
    "edward nolan": 1,
}


class ScriptedClient:
    """An ``LLMClient`` answering from a script; 'FAIL' in the key or text is unreachable."""

    backend = "scripted"

    def __init__(
        self,
        answers: dict[str, str] | None = None,
        *,
        answer_fn: Callable[[LLMRequest], str] | None = None,
    ) -> None:
        self.answers = answers or {}
        self.answer_fn = answer_fn
        self.requests: list[LLMRequest] = []

    async def model_name(self) -> str:
        return "scripted-1"

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        text = "".join(m.content for m in request.messages or ()) + (request.prompt or "")
        if request.lookup_key == "FAIL" or "FAIL" in text:
            raise ServerUnreachableError("connection refused")
        return LLMResponse(
            text=self.answer_fn(request)
            if self.answer_fn
            else self.answers[request.lookup_key or ""],
            backend=self.backend,
            model="scripted-1",
            usage=TokenUsage(prompt_tokens=50, completion_tokens=9),
            latency_s=0.2,
        )

    async def generate_many(
        self, requests: Sequence[LLMRequest], concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        return await generate_many_bounded(
            self.generate, requests, concurrency or 4, backend=self.backend
        )

    async def aclose(self) -> None:
        return None
