"""An in-memory `Retriever` for SEEK unit tests: records every query, can be told to fail."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from sira_seek.backend import EngineError
from sira_seek.seek.retrieval import RetrievedDoc


def cluster_unreachable(query: str) -> Exception:
    """What a real retriever raises when the cluster fails: its backend's ``EngineError``."""
    return EngineError(f"cluster unreachable for {query!r}")


class RecordingRetriever:
    """Returns ``k`` made-up documents whose ids name the query; a query containing one of
    ``fail_on`` raises ``failure(query)`` (by default the cluster failing, an ``EngineError``;
    a test of a retriever's bug passes e.g. a ``TypeError``)."""

    name = "recording"

    def __init__(
        self,
        *,
        fail_on: Sequence[str] = (),
        failure: Callable[[str], Exception] = cluster_unreachable,
    ) -> None:
        self.queries: list[str] = []
        self.fail_on = tuple(fail_on)
        self.failure = failure
        self._lock = threading.Lock()

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]:
        with self._lock:
            self.queries.append(query)
        if any(bad in query for bad in self.fail_on):
            raise self.failure(query)
        slug = "-".join(query.lower().split()[:3])
        return [
            RetrievedDoc(id=f"{slug}#{i}", title=f"Doc {i} for {query}", text=f"text {i}")
            for i in range(k)
        ]

    def retrieve_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedDoc]]:
        return [self.retrieve(q, k) for q in queries]


class LongDocsRetriever:
    """``k`` documents of ~3,000 characters per query (800 plain ASCII words), every query
    recorded: evidence that overflows a small model's context window."""

    name = "long-docs"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]:
        self.queries.append(query)
        words = " ".join(f"w{i}" for i in range(800))
        return [RetrievedDoc(id=f"{query}#{i}", title=f"T{i}", text=words) for i in range(k)]

    def retrieve_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedDoc]]:
        return [self.retrieve(q, k) for q in queries]
