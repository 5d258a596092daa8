"""An in-memory `Retriever` for SEEK unit tests: records every query, can be told to fail."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from sira_seek.seek.retrieval import RetrievedDoc


class RecordingRetriever:
    """Returns ``k`` made-up documents whose ids name the query; ``fail_on`` raises."""

    name = "recording"

    def __init__(self, *, fail_on: Sequence[str] = ()) -> None:
        self.queries: list[str] = []
        self.fail_on = tuple(fail_on)
        self._lock = threading.Lock()

    def retrieve(self, query: str, k: int) -> list[RetrievedDoc]:
        with self._lock:
            self.queries.append(query)
        if any(bad in query for bad in self.fail_on):
            raise ConnectionError(f"cluster unreachable for {query!r}")
        slug = "-".join(query.lower().split()[:3])
        return [
            RetrievedDoc(id=f"{slug}#{i}", title=f"Doc {i} for {query}", text=f"text {i}")
            for i in range(k)
        ]

    def retrieve_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedDoc]]:
        return [self.retrieve(q, k) for q in queries]
