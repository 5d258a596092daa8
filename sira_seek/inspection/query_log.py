"""Opt-in query log: one document per search or question, for Kibana / Dashboards.

Users judge retrieval by looking; the log holds what they need to look at (which expansion
terms fired and which were dropped, the exact DSL, per-hit matched clauses, LLM vs engine
latency) in daily ``sira-seek-log-YYYY.MM.DD`` indexes with the mapping in mappings/.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend

DEFAULT_PREFIX = "sira-seek-log-"


class LoggedCandidate(BaseModel):
    phrase: str
    doc_freq: int | None = None
    decision: str  # "kept" | "dropped"
    reason: str = ""


class LoggedHit(BaseModel):
    id: str
    rank: int
    score: float
    matched_queries: list[str] = Field(default_factory=list)


class LatencyMs(BaseModel):
    total: float = 0.0
    llm: float = 0.0
    engine: float = 0.0


class LoggedLLMUsage(BaseModel):
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model: str | None = None


class LoggedSeek(BaseModel):
    sketch: str
    sub_queries: list[str] = Field(default_factory=list)
    answer: str | None = None


class QueryLogRecord(BaseModel):
    """What one SIRA search or SEEK question looked like; derived counts are filled in."""

    kind: str  # "sira_search" | "bm25_search" | "seek_question"
    index: str
    query: str
    method: str = "sira"
    timestamp: datetime = Field(default_factory=lambda: datetime.now(UTC))
    expansion_weight: float | None = None
    max_df_ratio: float | None = None
    candidates: list[LoggedCandidate] = Field(default_factory=list)
    dsl: dict[str, Any] | None = None
    hits: list[LoggedHit] = Field(default_factory=list)
    latency_ms: LatencyMs = Field(default_factory=LatencyMs)
    llm: LoggedLLMUsage = Field(default_factory=LoggedLLMUsage)
    seek: LoggedSeek | None = None

    def to_document(self) -> dict[str, Any]:
        kept = [c.phrase for c in self.candidates if c.decision == "kept"]
        dropped = [c.phrase for c in self.candidates if c.decision != "kept"]
        doc: dict[str, Any] = {
            "@timestamp": self.timestamp.isoformat(),
            "kind": self.kind,
            "index": self.index,
            "query": self.query,
            "method": self.method,
            "weights": {
                "expansion_weight": self.expansion_weight,
                "max_df_ratio": self.max_df_ratio,
            },
            "candidates": [c.model_dump() for c in self.candidates],
            "kept_terms": kept,
            "dropped_terms": dropped,
            "kept_count": len(kept),
            "dropped_count": len(dropped),
            "acceptance_rate": len(kept) / len(self.candidates) if self.candidates else None,
            "no_kept_expansion": bool(self.candidates) and not kept,
            "dsl": self.dsl,
            "dsl_text": json.dumps(self.dsl) if self.dsl is not None else None,
            "hits": [h.model_dump() for h in self.hits],
            "hit_ids": [h.id for h in self.hits],
            "latency_ms": self.latency_ms.model_dump(),
            "llm": self.llm.model_dump(),
        }
        if self.seek is not None:
            doc["seek"] = self.seek.model_dump()
        return doc


def log_mapping() -> dict[str, Any]:
    text = resources.files("sira_seek.mappings").joinpath("query_log.json").read_text("utf-8")
    body: dict[str, Any] = json.loads(text)
    body.pop("_comment", None)
    return body


class QueryLogger:
    """Buffers records and writes them in bulk to the day's log index (created on first use)."""

    def __init__(
        self, backend: SearchBackend, *, prefix: str = DEFAULT_PREFIX, flush_every: int = 50
    ) -> None:
        self.backend = backend
        self.prefix = prefix
        self.flush_every = flush_every
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self._ready: set[str] = set()

    def index_for(self, when: datetime) -> str:
        return f"{self.prefix}{when:%Y.%m.%d}"

    def log(self, record: QueryLogRecord) -> None:
        self._pending.append((self.index_for(record.timestamp), record.to_document()))
        if len(self._pending) >= self.flush_every:
            self.flush()

    def flush(self) -> int:
        """Write what is pending; returns the number of documents written."""
        written = 0
        by_index: dict[str, list[dict[str, Any]]] = {}
        for index, doc in self._pending:
            by_index.setdefault(index, []).append(doc)
        for index, docs in by_index.items():
            if index not in self._ready:
                if not self.backend.index_exists(index):
                    self.backend.create_index(index, log_mapping())
                self._ready.add(index)
            written += self.backend.bulk_index(index, docs).succeeded
        self._pending.clear()
        return written

    def __enter__(self) -> QueryLogger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
