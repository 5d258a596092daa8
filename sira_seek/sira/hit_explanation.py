"""Why one document scored what it did under a SIRA query: per-clause contributions.

The weighted query is a sum of clauses, so a hit's score splits cleanly into
``sira_original`` + ``sira_expansion`` (+ categories): named in the query where the engine
cannot score named queries, else derived from the per-phrase scores (``DerivedParts``). The
engine's own ``_explain`` tree is kept alongside for the Lucene-level detail.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from sira_seek.backend import SearchBackend

from .weighted_query import DerivedParts


class ClauseContribution(BaseModel):
    name: str
    score: float | None  # None when the engine cannot report named-query scores


class HitExplanation(BaseModel):
    doc_id: str
    matched: bool
    score: float = 0.0
    clauses: list[ClauseContribution] = Field(default_factory=list)
    engine_explanation: dict[str, Any] | None = None


def explain_hit(
    backend: SearchBackend, index: str, query: dict[str, Any], doc_id: str
) -> HitExplanation:
    """Score ``doc_id`` alone under ``query``: same score as in the full search (filters add 0)."""
    body = {
        "size": 1,
        "_source": False,
        "query": {"bool": {"must": [query], "filter": [{"ids": {"values": [doc_id]}}]}},
    }
    params = (
        {"include_named_queries_score": "true"}
        if backend.capabilities().named_queries_score
        else None
    )
    result = backend.search(index, body, params=params)
    if not result.hits:
        return HitExplanation(doc_id=doc_id, matched=False)
    hit = result.hits[0]
    derived = DerivedParts.of(query)
    named = (
        hit.matched_queries if derived is None else derived.complete(hit.matched_queries, hit.score)
    ) or []
    clauses = (
        [ClauseContribution(name=n, score=s) for n, s in sorted(named.items())]
        if isinstance(named, dict)
        else [ClauseContribution(name=n, score=None) for n in sorted(named)]
    )
    engine = backend.explain(index, doc_id, query)
    return HitExplanation(
        doc_id=doc_id, matched=True, score=hit.score, clauses=clauses, engine_explanation=engine
    )
